# lib/process: live processes: the program to run, injection, the collector (lib/process/README.md), into libmp.a.
lib_libmp_a_SOURCES += \
	%reldir%/attachctl.c %reldir%/attachctl.h \
	%reldir%/collect.c %reldir%/collect.h %reldir%/collect-private.h \
	%reldir%/collect-capture.c \
	%reldir%/collect-ends.c \
	%reldir%/collect-wake.c \
	%reldir%/collect-paths.c \
	%reldir%/collect-symbols.c \
	%reldir%/ctl.c %reldir%/ctl.h \
	%reldir%/ctlsock.c %reldir%/ctlsock.h \
	%reldir%/drain.c %reldir%/drain.h \
	%reldir%/inject-gdb.c %reldir%/inject-private.h \
	%reldir%/inject.c %reldir%/inject.h \
	%reldir%/procids.c %reldir%/procids.h \
	%reldir%/procmaps.c %reldir%/procmaps.h \
	%reldir%/remote.c %reldir%/remote.h \
	%reldir%/target.c %reldir%/target.h \
	%reldir%/track.c %reldir%/track.h %reldir%/track-private.h \
	%reldir%/track-run.c
# end of lib_libmp_a_SOURCES for lib/process
