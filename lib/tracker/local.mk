# lib/tracker: libmemprof.so, preloaded into (or injected in) the target (lib/tracker/README.md).
pkglib_LTLIBRARIES = libmemprof.la
libmemprof_la_SOURCES = \
	include/memprof.h \
	%reldir%/api.c \
	%reldir%/attach.c \
	%reldir%/cfi.c %reldir%/cfi.h \
	%reldir%/base.h \
	%reldir%/config.c %reldir%/config.h \
	%reldir%/control.c %reldir%/control.h \
	%reldir%/creds.c %reldir%/creds.h \
	%reldir%/direct.c %reldir%/direct.h \
	%reldir%/fds.c %reldir%/fds.h \
	%reldir%/got.c %reldir%/got.h \
	%reldir%/hooks.c %reldir%/hooks.h %reldir%/hooks-process.c \
	%reldir%/inproc.c \
	%reldir%/lifecycle.c %reldir%/lifecycle.h \
	%reldir%/keys.c %reldir%/keys.h \
	%reldir%/modules.c %reldir%/modules.h \
	%reldir%/pyalloc.c %reldir%/pyalloc.h \
	%reldir%/pydescribe.c %reldir%/pyline.h \
	%reldir%/python.c %reldir%/python.h %reldir%/python-private.h \
	%reldir%/pythread.c \
	%reldir%/real.c \
	%reldir%/record.c %reldir%/record.h \
	%reldir%/replies.c \
	%reldir%/sample.c %reldir%/sample.h \
	%reldir%/session.c %reldir%/session.h \
	%reldir%/signals.c %reldir%/signals.h \
	%reldir%/stacks.c %reldir%/stacks.h \
	%reldir%/ticks.c \
	%reldir%/stream.c %reldir%/stream.h \
	%reldir%/threads.c %reldir%/threads.h \
	%reldir%/timer.c %reldir%/timer.h \
	%reldir%/unwind.c %reldir%/unwind.h \
	%reldir%/util.c \
	lib/format/aggregate.c lib/format/aggregate.h \
	lib/format/fold.c lib/format/fold-emit.c lib/format/fold-live.c lib/format/fold.h lib/format/fold-private.h \
	lib/format/pyframe.h \
	lib/util/bytes.h \
	lib/util/publish.h \
	lib/transport/merge.c lib/transport/merge.h \
	lib/transport/reply.h \
	lib/transport/ring.h \
	lib/transport/settings.c lib/transport/settings.h
# end of libmemprof_la_SOURCES
# The in-process API's header, and its pkg-config file (man 3 memprof).
include_HEADERS = include/memprof.h
pkgconfigdir = $(libdir)/pkgconfig
pkgconfig_DATA = memprof.pc
libmemprof_la_CFLAGS = $(AM_CFLAGS) $(LIBUNWIND_CFLAGS) -fvisibility=hidden -ftls-model=initial-exec \
	-fno-strict-aliasing
# A sanitized build's UBSAN in trap mode (configure.ac): given to the compiler only, as
# preprocessor flags are, since at the link gcc would add UBSAN's run-time library.
libmemprof_la_CPPFLAGS = $(AM_CPPFLAGS) $(MP_TRACKER_SAN_CFLAGS)
libmemprof_la_LDFLAGS = -module -avoid-version -shared -Wl,-z,nodelete
libmemprof_la_LIBADD = $(LIBUNWIND_LIBS) -ldl -lpthread
