# lib/analysis: the analysis of a capture: peak, leaks, temporary, time series, stacks (lib/analysis/README.md), into libmp.a.
lib_libmp_a_SOURCES += \
	%reldir%/analysis.c %reldir%/analysis.h \
	%reldir%/blocks.c %reldir%/blocks.h \
	%reldir%/calltree.c %reldir%/calltree.h \
	%reldir%/rangemap.c %reldir%/rangemap.h
# end of lib_libmp_a_SOURCES for lib/analysis
