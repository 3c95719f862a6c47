# tests/unit: cmocka, one binary per lib module.
UNIT_TESTS += \
	%reldir%/test-aggregate \
	%reldir%/test-analysis \
	%reldir%/test-blocks \
	%reldir%/test-capture \
	%reldir%/test-collect-paths \
	%reldir%/test-diff \
	%reldir%/test-estimate \
	%reldir%/test-export \
	%reldir%/test-fields \
	%reldir%/test-fold \
	%reldir%/test-format3 \
	%reldir%/test-hash \
	%reldir%/test-inject \
	%reldir%/test-live \
	%reldir%/test-options \
	%reldir%/test-procids \
	%reldir%/test-present \
	%reldir%/test-procmaps \
	%reldir%/test-python \
	%reldir%/test-rangemap \
	%reldir%/test-settings \
	%reldir%/test-readahead \
	%reldir%/test-render-html \
	%reldir%/test-render-text \
	%reldir%/test-reports \
	%reldir%/test-strbuf \
	%reldir%/test-symindex \
	%reldir%/test-symbols
# end of UNIT_TESTS
UNIT_LDADD = $(MP_LIBS) $(CMOCKA_LIBS)
UNIT_CFLAGS = $(MP_CFLAGS) $(CMOCKA_CFLAGS) $(ZSTD_CFLAGS)
tests_unit_test_aggregate_SOURCES = %reldir%/test-aggregate.c %reldir%/analysis-fixture.h %reldir%/records.h
tests_unit_test_aggregate_LDADD = $(UNIT_LDADD)
tests_unit_test_aggregate_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_analysis_SOURCES = %reldir%/test-analysis.c %reldir%/analysis-fixture.h %reldir%/records.h
tests_unit_test_analysis_LDADD = $(UNIT_LDADD)
tests_unit_test_analysis_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_blocks_SOURCES = %reldir%/test-blocks.c
tests_unit_test_blocks_LDADD = $(UNIT_LDADD)
tests_unit_test_blocks_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_capture_SOURCES = %reldir%/test-capture.c %reldir%/files.h
tests_unit_test_capture_LDADD = $(UNIT_LDADD)
tests_unit_test_capture_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_settings_SOURCES = %reldir%/test-settings.c
tests_unit_test_settings_LDADD = $(UNIT_LDADD)
tests_unit_test_settings_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_collect_paths_SOURCES = %reldir%/test-collect-paths.c
tests_unit_test_collect_paths_LDADD = $(UNIT_LDADD)
tests_unit_test_collect_paths_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_diff_SOURCES = %reldir%/test-diff.c %reldir%/analysis-fixture.h %reldir%/records.h
tests_unit_test_diff_LDADD = $(UNIT_LDADD)
tests_unit_test_diff_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_estimate_SOURCES = %reldir%/test-estimate.c %reldir%/analysis-fixture.h %reldir%/records.h
tests_unit_test_estimate_LDADD = $(UNIT_LDADD)
tests_unit_test_estimate_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_export_SOURCES = %reldir%/test-export.c %reldir%/analysis-fixture.h %reldir%/records.h
tests_unit_test_export_LDADD = $(UNIT_LDADD)
tests_unit_test_export_CFLAGS = $(UNIT_CFLAGS) $(PROTOBUF_C_CFLAGS) $(ZLIB_CFLAGS)
tests_unit_test_fields_SOURCES = %reldir%/test-fields.c %reldir%/files.h
tests_unit_test_fields_LDADD = $(UNIT_LDADD)
tests_unit_test_fields_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_fold_SOURCES = %reldir%/test-fold.c
tests_unit_test_fold_LDADD = $(UNIT_LDADD)
tests_unit_test_fold_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_format3_SOURCES = %reldir%/test-format3.c %reldir%/files.h
tests_unit_test_format3_LDADD = $(UNIT_LDADD)
tests_unit_test_format3_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_hash_SOURCES = %reldir%/test-hash.c
tests_unit_test_hash_LDADD = $(UNIT_LDADD)
tests_unit_test_hash_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_inject_SOURCES = %reldir%/test-inject.c
tests_unit_test_inject_LDADD = $(UNIT_LDADD)
tests_unit_test_inject_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_live_SOURCES = %reldir%/test-live.c %reldir%/records.h
tests_unit_test_live_LDADD = $(UNIT_LDADD)
tests_unit_test_live_CFLAGS = $(UNIT_CFLAGS)
# cmd/ has no library: the option tables' code is built in.
tests_unit_test_options_SOURCES = %reldir%/test-options.c cmd/options.c cmd/report.c
tests_unit_test_options_LDADD = $(UNIT_LDADD)
tests_unit_test_options_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_procids_SOURCES = %reldir%/test-procids.c
tests_unit_test_procids_LDADD = $(UNIT_LDADD)
tests_unit_test_procids_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_procmaps_SOURCES = %reldir%/test-procmaps.c
tests_unit_test_procmaps_LDADD = $(UNIT_LDADD) -ldl
tests_unit_test_procmaps_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_present_SOURCES = %reldir%/test-present.c %reldir%/analysis-fixture.h %reldir%/records.h
tests_unit_test_present_LDADD = $(UNIT_LDADD)
tests_unit_test_present_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_python_SOURCES = %reldir%/test-python.c
tests_unit_test_python_LDADD = $(UNIT_LDADD)
tests_unit_test_python_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_rangemap_SOURCES = %reldir%/test-rangemap.c
tests_unit_test_rangemap_LDADD = $(UNIT_LDADD)
tests_unit_test_rangemap_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_readahead_SOURCES = %reldir%/test-readahead.c %reldir%/files.h
tests_unit_test_readahead_LDADD = $(UNIT_LDADD)
tests_unit_test_readahead_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_render_html_SOURCES = %reldir%/test-render-html.c %reldir%/analysis-fixture.h %reldir%/records.h
tests_unit_test_render_html_LDADD = $(UNIT_LDADD)
tests_unit_test_render_html_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_render_text_SOURCES = %reldir%/test-render-text.c
tests_unit_test_render_text_LDADD = $(UNIT_LDADD)
tests_unit_test_render_text_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_reports_SOURCES = %reldir%/test-reports.c %reldir%/analysis-fixture.h %reldir%/records.h
tests_unit_test_reports_LDADD = $(UNIT_LDADD)
tests_unit_test_reports_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_strbuf_SOURCES = %reldir%/test-strbuf.c
tests_unit_test_strbuf_LDADD = $(UNIT_LDADD)
tests_unit_test_strbuf_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_symindex_SOURCES = %reldir%/test-symindex.c
tests_unit_test_symindex_LDADD = $(UNIT_LDADD) -ldl
tests_unit_test_symindex_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_symbols_SOURCES = %reldir%/test-symbols.c
tests_unit_test_symbols_LDADD = $(UNIT_LDADD)
tests_unit_test_symbols_CFLAGS = $(UNIT_CFLAGS)
