# cmd: the memprof command, one file per subcommand (cmd/cmd.h says how to add one).
bin_PROGRAMS = memprof
memprof_SOURCES = \
	%reldir%/attach.c \
	%reldir%/cmd.h \
	%reldir%/ctl.c \
	%reldir%/detach.c \
	%reldir%/live.c \
	%reldir%/memprof.c \
	%reldir%/options.c %reldir%/options.h \
	%reldir%/parse.c \
	%reldir%/run.c \
	%reldir%/serve.c
# the text reporters
memprof_SOURCES += \
	%reldir%/report.c %reldir%/report.h \
	%reldir%/stats.c \
	%reldir%/summary.c \
	%reldir%/tree.c
# the exports for other tools, and comparing captures
memprof_SOURCES += \
	%reldir%/diff.c \
	%reldir%/transform.c
# the HTML reporters
memprof_SOURCES += \
	%reldir%/flamegraph.c \
	%reldir%/html.c %reldir%/html.h \
	%reldir%/table.c
# end of memprof_SOURCES
memprof_LDADD = $(MP_LIBS)
memprof_CFLAGS = $(MP_CFLAGS)
