# lib/analysis: the analysis of a capture: peak, leaks, temporary, time series, stacks (lib/analysis/README.md), into libmp.a.
lib_libmp_a_SOURCES += \
	%reldir%/analysis-private.h \
	%reldir%/aggregate.c \
	%reldir%/analysis.c %reldir%/analysis.h \
	%reldir%/blocks.c %reldir%/blocks.h \
	%reldir%/calltree.c %reldir%/calltree.h \
	%reldir%/estimate.c \
	%reldir%/family.c %reldir%/family-find.c %reldir%/family-stacks.c \
	%reldir%/frames.c \
	%reldir%/lifecycle.c \
	%reldir%/present.c \
	%reldir%/query.c \
	%reldir%/rangemap.c %reldir%/rangemap.h \
	%reldir%/series.c
# end of lib_libmp_a_SOURCES for lib/analysis
