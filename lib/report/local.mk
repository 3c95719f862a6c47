# lib/report: the reporters: text and HTML rendering of an analysis (lib/report/README.md), into libmp.a.
lib_libmp_a_SOURCES += \
	%reldir%/diff.c %reldir%/diff.h \
	%reldir%/difftree.c %reldir%/difftree.h \
	%reldir%/html-template.c %reldir%/html-template.h \
	%reldir%/html-tree.c %reldir%/html-tree.h \
	%reldir%/json.c %reldir%/json.h \
	%reldir%/progress.c %reldir%/progress.h \
	%reldir%/render-html.c %reldir%/render-html.h \
	%reldir%/render-text.c %reldir%/render-text.h \
	%reldir%/report.c %reldir%/report.h \
	%reldir%/stats.c %reldir%/stats.h \
	%reldir%/summary.c %reldir%/summary.h \
	%reldir%/tree.c %reldir%/tree.h
# end of lib_libmp_a_SOURCES for lib/report
