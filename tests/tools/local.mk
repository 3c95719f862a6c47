# tests/tools: programs the tests drive: a capture compiler, the HTML renderer, an injector.
check_PROGRAMS += \
	%reldir%/htmlrender \
	%reldir%/inject-tool \
	%reldir%/mkcapture
tests_tools_htmlrender_SOURCES = %reldir%/htmlrender.c
tests_tools_htmlrender_LDADD = $(MP_LIBS)
tests_tools_htmlrender_CFLAGS = $(MP_CFLAGS)
tests_tools_inject_tool_SOURCES = %reldir%/inject-tool.c
tests_tools_inject_tool_LDADD = $(MP_LIBS)
tests_tools_inject_tool_CFLAGS = $(MP_CFLAGS)
tests_tools_mkcapture_SOURCES = %reldir%/mkcapture.c
tests_tools_mkcapture_LDADD = $(MP_LIBS)
tests_tools_mkcapture_CFLAGS = $(MP_CFLAGS)
# A library for lib/process/inject's tests to load into a process.
check_LTLIBRARIES += %reldir%/libinjectfixture.la
tests_tools_libinjectfixture_la_SOURCES = %reldir%/inject-fixture.c
tests_tools_libinjectfixture_la_LDFLAGS = -module -avoid-version -rpath /nowhere
# make check's log compiler: each test under a time limit.
EXTRA_DIST += %reldir%/time-limit
