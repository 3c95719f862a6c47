# tests/fuzz: libFuzzer targets for the reader, the analysis and each reporter (tests/fuzz/README.md).
# ./configure --enable-fuzzing links them with libFuzzer; otherwise replay.c's main runs each input
# once. make check runs every target on the seed corpus and on the inputs of past findings
# (tests/fuzz/run.sh), then, with libFuzzer, fuzzes it for FUZZ_SECONDS (default 60) seconds.
FUZZ_TARGETS = \
	%reldir%/reader.fuzz \
	%reldir%/analysis.fuzz \
	%reldir%/stats.fuzz \
	%reldir%/summary.fuzz \
	%reldir%/tree.fuzz \
	%reldir%/flamegraph.fuzz \
	%reldir%/table.fuzz \
	%reldir%/transform.fuzz \
	%reldir%/diff.fuzz
# end of FUZZ_TARGETS
check_PROGRAMS += $(FUZZ_TARGETS)
check_LIBRARIES = %reldir%/libfuzz.a
tests_fuzz_libfuzz_a_SOURCES = %reldir%/fuzz.c %reldir%/fuzz.h
if !FUZZING
tests_fuzz_libfuzz_a_SOURCES += %reldir%/replay.c
endif
tests_fuzz_libfuzz_a_CFLAGS = $(MP_CFLAGS) $(ZSTD_CFLAGS)
FUZZ_CFLAGS = $(MP_CFLAGS) $(ZSTD_CFLAGS)
FUZZ_LDADD = %reldir%/libfuzz.a $(MP_LIBS)
tests_fuzz_reader_fuzz_SOURCES = %reldir%/reader.c
tests_fuzz_reader_fuzz_CFLAGS = $(FUZZ_CFLAGS)
tests_fuzz_reader_fuzz_LDFLAGS = $(MP_FUZZ_LDFLAGS)
tests_fuzz_reader_fuzz_LDADD = $(FUZZ_LDADD)
tests_fuzz_analysis_fuzz_SOURCES = %reldir%/analysis.c
tests_fuzz_analysis_fuzz_CFLAGS = $(FUZZ_CFLAGS)
tests_fuzz_analysis_fuzz_LDFLAGS = $(MP_FUZZ_LDFLAGS)
tests_fuzz_analysis_fuzz_LDADD = $(FUZZ_LDADD)
tests_fuzz_stats_fuzz_SOURCES = %reldir%/stats.c
tests_fuzz_stats_fuzz_CFLAGS = $(FUZZ_CFLAGS)
tests_fuzz_stats_fuzz_LDFLAGS = $(MP_FUZZ_LDFLAGS)
tests_fuzz_stats_fuzz_LDADD = $(FUZZ_LDADD)
tests_fuzz_summary_fuzz_SOURCES = %reldir%/summary.c
tests_fuzz_summary_fuzz_CFLAGS = $(FUZZ_CFLAGS)
tests_fuzz_summary_fuzz_LDFLAGS = $(MP_FUZZ_LDFLAGS)
tests_fuzz_summary_fuzz_LDADD = $(FUZZ_LDADD)
tests_fuzz_tree_fuzz_SOURCES = %reldir%/tree.c
tests_fuzz_tree_fuzz_CFLAGS = $(FUZZ_CFLAGS)
tests_fuzz_tree_fuzz_LDFLAGS = $(MP_FUZZ_LDFLAGS)
tests_fuzz_tree_fuzz_LDADD = $(FUZZ_LDADD)
tests_fuzz_flamegraph_fuzz_SOURCES = %reldir%/flamegraph.c
tests_fuzz_flamegraph_fuzz_CFLAGS = $(FUZZ_CFLAGS)
tests_fuzz_flamegraph_fuzz_LDFLAGS = $(MP_FUZZ_LDFLAGS)
tests_fuzz_flamegraph_fuzz_LDADD = $(FUZZ_LDADD)
tests_fuzz_table_fuzz_SOURCES = %reldir%/table.c
tests_fuzz_table_fuzz_CFLAGS = $(FUZZ_CFLAGS)
tests_fuzz_table_fuzz_LDFLAGS = $(MP_FUZZ_LDFLAGS)
tests_fuzz_table_fuzz_LDADD = $(FUZZ_LDADD)
tests_fuzz_transform_fuzz_SOURCES = %reldir%/transform.c
tests_fuzz_transform_fuzz_CFLAGS = $(FUZZ_CFLAGS) $(PROTOBUF_C_CFLAGS) $(ZLIB_CFLAGS)
tests_fuzz_transform_fuzz_LDFLAGS = $(MP_FUZZ_LDFLAGS)
tests_fuzz_transform_fuzz_LDADD = $(FUZZ_LDADD)
tests_fuzz_diff_fuzz_SOURCES = %reldir%/diff.c
tests_fuzz_diff_fuzz_CFLAGS = $(FUZZ_CFLAGS)
tests_fuzz_diff_fuzz_LDFLAGS = $(MP_FUZZ_LDFLAGS)
tests_fuzz_diff_fuzz_LDADD = $(FUZZ_LDADD)
FUZZ_LOG_COMPILER = $(MP_SANITIZER_RUN) $(SHELL) $(srcdir)/%reldir%/run.sh
# The fuzz targets alone: what a clang build is for (its workloads are not gcc's code, which
# some e2e tests count frames of), as tools/setup.sh sanitize runs them.
check-fuzz:
	$(MAKE) $(AM_MAKEFLAGS) check TESTS='$(FUZZ_TARGETS)'
.PHONY: check-fuzz
if FUZZING
AM_FUZZ_LOG_FLAGS = --libfuzzer
endif
EXTRA_DIST += \
	%reldir%/README.md \
	%reldir%/run.sh \
	%reldir%/corpus \
	%reldir%/findings
