# lib/live: the live view of a running process (lib/live/README.md), into libmp.a.
lib_libmp_a_SOURCES += \
	%reldir%/model.c %reldir%/model.h \
	%reldir%/runview.c %reldir%/runview.h \
	%reldir%/screen.c %reldir%/screen.h \
	%reldir%/tui.c %reldir%/tui.h \
	%reldir%/watch.c %reldir%/watch.h
# end of lib_libmp_a_SOURCES for lib/live
