# tests/workloads: programs with exactly known allocation behaviour (each source says what).
# -O0 and -fno-builtin keep every malloc/free pair the source shows.
WORKLOADS = \
	%reldir%/allocs \
	%reldir%/attachee \
	%reldir%/closer \
	%reldir%/crash \
	%reldir%/cxx \
	%reldir%/deep \
	%reldir%/dies \
	%reldir%/dlchurn \
	%reldir%/dlopens \
	%reldir%/execs \
	%reldir%/family \
	%reldir%/forks \
	%reldir%/inproc \
	%reldir%/inproc-linked \
	%reldir%/io \
	%reldir%/maps \
	%reldir%/oracle \
	%reldir%/phases \
	%reldir%/sampled \
	%reldir%/swaps \
	%reldir%/threads \
	%reldir%/versions
# end of WORKLOADS
check_PROGRAMS += $(WORKLOADS)
check_LTLIBRARIES += %reldir%/libdlwork.la
# -fno-builtin keeps the compiler from removing malloc/free pairs; the sources
# keep every frame whatever the optimization level (see tests/workloads/allocs.c).
WORKLOAD_CFLAGS = -g -fno-builtin -Wall
tests_workloads_allocs_CFLAGS = $(WORKLOAD_CFLAGS)
tests_workloads_attachee_CFLAGS = $(WORKLOAD_CFLAGS)
tests_workloads_attachee_LDADD = -lpthread
tests_workloads_closer_CFLAGS = $(WORKLOAD_CFLAGS)
tests_workloads_family_CFLAGS = $(WORKLOAD_CFLAGS)
tests_workloads_closer_LDADD = -lpthread
tests_workloads_crash_CFLAGS = $(WORKLOAD_CFLAGS)
tests_workloads_cxx_SOURCES = %reldir%/cxx.cc
tests_workloads_cxx_CXXFLAGS = $(WORKLOAD_CFLAGS)
tests_workloads_deep_CFLAGS = $(WORKLOAD_CFLAGS)
tests_workloads_maps_SOURCES = %reldir%/maps.cc
tests_workloads_maps_CXXFLAGS = $(WORKLOAD_CFLAGS)
tests_workloads_dies_CFLAGS = $(WORKLOAD_CFLAGS)
tests_workloads_dies_LDADD = -lpthread
tests_workloads_dlchurn_CFLAGS = $(WORKLOAD_CFLAGS)
tests_workloads_dlchurn_LDADD = -ldl -lpthread
tests_workloads_dlopens_CFLAGS = $(WORKLOAD_CFLAGS)
tests_workloads_dlopens_LDADD = -ldl
tests_workloads_execs_CFLAGS = $(WORKLOAD_CFLAGS)
tests_workloads_forks_CFLAGS = $(WORKLOAD_CFLAGS)
tests_workloads_forks_LDADD = -lpthread
tests_workloads_inproc_CFLAGS = $(WORKLOAD_CFLAGS) -I$(top_srcdir)
tests_workloads_inproc_LDADD = -ldl -lpthread
# The same, linked with the tracker (-lmemprof, as memprof.pc says).
tests_workloads_inproc_linked_SOURCES = %reldir%/inproc.c
tests_workloads_inproc_linked_CFLAGS = $(WORKLOAD_CFLAGS) -I$(top_srcdir)
tests_workloads_inproc_linked_LDFLAGS = -L$(top_builddir)/.libs -Wl,-rpath,$(abs_top_builddir)/.libs
tests_workloads_inproc_linked_LDADD = -lmemprof -ldl -lpthread
tests_workloads_inproc_linked_DEPENDENCIES = libmemprof.la
# (Linked as a user's program is, without libtool, which warns of linking a module.)
tests_workloads_inproc_linked_LINK = $(CCLD) $(tests_workloads_inproc_linked_CFLAGS) $(CFLAGS) \
	$(tests_workloads_inproc_linked_LDFLAGS) $(LDFLAGS) -o $@
tests_workloads_io_CFLAGS = $(WORKLOAD_CFLAGS)
tests_workloads_oracle_CFLAGS = $(WORKLOAD_CFLAGS)
tests_workloads_phases_CFLAGS = $(WORKLOAD_CFLAGS)
tests_workloads_sampled_CFLAGS = $(WORKLOAD_CFLAGS)
tests_workloads_sampled_LDADD = -lpthread
tests_workloads_swaps_CFLAGS = $(WORKLOAD_CFLAGS)
tests_workloads_swaps_LDADD = -lpthread
tests_workloads_threads_CFLAGS = $(WORKLOAD_CFLAGS)
tests_workloads_threads_LDADD = -lpthread
tests_workloads_versions_CFLAGS = $(WORKLOAD_CFLAGS)
tests_workloads_libdlwork_la_SOURCES = %reldir%/dlwork.c
tests_workloads_libdlwork_la_CFLAGS = $(WORKLOAD_CFLAGS)
tests_workloads_libdlwork_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
# The targets memprof attach and lib/process/inject's tests load the tracker into.
check_PROGRAMS += %reldir%/inject-target
tests_workloads_inject_target_SOURCES = %reldir%/inject-target.c
tests_workloads_inject_target_CFLAGS = $(AM_CFLAGS) -pthread
tests_workloads_inject_target_LDFLAGS = -pthread
if HAVE_STATIC_LIBC
check_PROGRAMS += %reldir%/inject-target-static
tests_workloads_inject_target_static_SOURCES = %reldir%/inject-target.c
tests_workloads_inject_target_static_CFLAGS = $(AM_CFLAGS) -pthread
tests_workloads_inject_target_static_LDFLAGS = -all-static -pthread
endif
# For the e2e tests' own programs (-I$(WORKLOAD_SRC)).
EXTRA_DIST += %reldir%/steps.h
