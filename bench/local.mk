# bench: `make bench`, `make bench-quick` (bench/README.md); not part of `make check`.
BENCH_BINARIES = \
	%reldir%/alloc-heavy \
	%reldir%/alloc-light \
	%reldir%/launch \
	%reldir%/map-strings \
	%reldir%/prefork \
	%reldir%/sampled
# end of BENCH_BINARIES
EXTRA_PROGRAMS += $(BENCH_BINARIES)
# The workloads are built like a distribution builds programs: -O2 -g, no frame pointers.
BENCH_CFLAGS = $(AM_CFLAGS) -O2 -g
bench_alloc_heavy_SOURCES = %reldir%/alloc-heavy.c %reldir%/workload.h
bench_alloc_heavy_CFLAGS = $(BENCH_CFLAGS)
bench_alloc_heavy_LDADD = -lpthread
bench_alloc_light_SOURCES = %reldir%/alloc-light.c %reldir%/workload.h
bench_alloc_light_CFLAGS = $(BENCH_CFLAGS)
bench_alloc_light_LDADD = -lpthread
bench_map_strings_SOURCES = %reldir%/map-strings.cc
bench_map_strings_CXXFLAGS = -O2 -g -Wall
bench_prefork_SOURCES = %reldir%/prefork.c %reldir%/workload.h
bench_prefork_CFLAGS = $(BENCH_CFLAGS)
bench_prefork_LDADD = -lpthread
# Sampled tracking's accuracy (bench/sampling.py): the tests' workload of known totals.
bench_sampled_SOURCES = tests/workloads/sampled.c
bench_sampled_CFLAGS = $(BENCH_CFLAGS) -fno-builtin
bench_sampled_LDADD = -lpthread
bench_launch_SOURCES = %reldir%/launch.c
bench_launch_CFLAGS = $(BENCH_CFLAGS)
EXTRA_DIST += \
	%reldir%/README.md \
	%reldir%/baseline.json \
	%reldir%/compare.py \
	%reldir%/html_scale.py \
	%reldir%/merge_scale.py \
	%reldir%/sampling.py \
	%reldir%/symcache.py \
	%reldir%/run.py
CLEANFILES += $(BENCH_BINARIES)
BENCH_RUN = python3 $(srcdir)/%reldir%/run.py --builddir $(abs_top_builddir) --json bench-work/results.json
bench: all $(BENCH_BINARIES)
	$(BENCH_RUN) $(BENCH_FLAGS)
bench-quick: all $(BENCH_BINARIES)
	$(BENCH_RUN) --quick $(BENCH_FLAGS)
clean-local: clean-bench
clean-bench:
	-rm -rf bench-work
.PHONY: bench bench-quick clean-bench
