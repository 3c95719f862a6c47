# lib/tracker: libmemprof.so, preloaded into (or injected in) the target (lib/tracker/README.md).
pkglib_LTLIBRARIES = libmemprof.la
libmemprof_la_SOURCES = \
	%reldir%/attach.c \
	%reldir%/core.c \
	%reldir%/hooks.c \
	%reldir%/modules.c \
	%reldir%/tracker.h \
	%reldir%/unwind.c %reldir%/unwind.h \
	%reldir%/util.c
# end of libmemprof_la_SOURCES
libmemprof_la_CFLAGS = $(AM_CFLAGS) $(LIBUNWIND_CFLAGS) -fvisibility=hidden -ftls-model=initial-exec \
	-fno-strict-aliasing
libmemprof_la_LDFLAGS = -module -avoid-version -shared -Wl,-z,nodelete
libmemprof_la_LIBADD = $(LIBUNWIND_LIBS) -ldl -lpthread
