# man: a page per command and the capture format's specification.
dist_man1_MANS = \
	%reldir%/memprof.1 \
	%reldir%/memprof-attach.1 \
	%reldir%/memprof-ctl.1 \
	%reldir%/memprof-detach.1 \
	%reldir%/memprof-diff.1 \
	%reldir%/memprof-live.1 \
	%reldir%/memprof-parse.1 \
	%reldir%/memprof-run.1 \
	%reldir%/memprof-serve.1
# the text reporters
dist_man1_MANS += \
	%reldir%/memprof-stats.1 \
	%reldir%/memprof-summary.1 \
	%reldir%/memprof-transform.1 \
	%reldir%/memprof-tree.1
# the HTML reporters
dist_man1_MANS += \
	%reldir%/memprof-flamegraph.1 \
	%reldir%/memprof-table.1
# end of dist_man1_MANS
dist_man5_MANS = %reldir%/memprof-capture.5
# the in-process API (include/memprof.h)
dist_man3_MANS = %reldir%/memprof.3
