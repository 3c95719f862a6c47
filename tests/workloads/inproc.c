/*
 * Workload for the in-process API (include/memprof.h). It finds the API in
 * the process (the tracker preloaded or linked in) or loads the tracker
 * named by argv[2] with dlopen, then:
 *
 *   inproc exact LIB DIR
 *     allocates 5 x 4444 (before_start), starts DIR/a.bin, allocates
 *     3 x 1111 (in_first) and frees 2 of the 4444s, stops; allocates
 *     7 x 5555 (between); starts DIR/b.bin with max_depth 4, allocates
 *     4 x 6666 and 1 x 6667 with calloc (in_second), frees one 1111 and the
 *     other 4444s, snapshots DIR/b.snap, frees one 6666, stops; allocates
 *     8 x 7777 (after). After each stop it runs $INPROC_AFTER_STOP with the
 *     capture's path (the capture is read while the program lives on).
 *     On stdout: one line per API call that failed unexpectedly, and the
 *     errno of each refusal it provokes: "start again: EBUSY", "stop
 *     again: ENOENT", "snapshot stopped: ENOENT", "start existing:
 *     EEXIST", "start bad interval: EINVAL", "start newer: E2BIG",
 *     "status: recording=1 by=1 ...".
 *   inproc aggregate LIB PATH SNAP
 *     an aggregated capture (memprof_options.aggregate) of a fixed mix:
 *     allocates 2 x 4444 (before_start), starts PATH ("-": where the
 *     configuration says, a collector's), frees one of them; 200 x
 *     agg_small (100 + 16 * (i % 7) bytes), a third of them freed;
 *     snapshots SNAP ("-": none); 10 x calloc(50, 40) (agg_zeroed), one
 *     small block realloc'd to 9000 (agg_grow); a thread "agg-worker"
 *     allocates 30 x 777 (agg_worker) and frees 10; 1 MiB (agg_peak)
 *     freed; 3 pages mapped (agg_map), the middle one unmapped; free(NULL);
 *     stops. With INPROC_FULL set in the environment, a full capture
 *     instead (the same allocations, every event); with INPROC_KILL, killed
 *     (SIGKILL) before the stop.
 *   inproc race LIB DIR N
 *     N times, two threads call memprof_start at once: one must succeed,
 *     the other fail with EBUSY ("race ok N" at the end).
 *   inproc stress LIB DIR N
 *     4 threads allocate and free while the main thread starts and stops
 *     N captures DIR/s.<i>.bin ("stress ok N").
 *
 * Exit status 0 when every call behaved, 1 otherwise.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "include/memprof.h"

#define BARRIER() __asm__ volatile("" ::: "memory")
/* Each allocating function stores its own number: no two are folded into one. */
static volatile int which;

static int (*api_start)(const char *, const struct memprof_options *);
static int (*api_stop)(void);
static int (*api_snapshot)(const char *);
static int (*api_status)(struct memprof_status *);
static int (*api_is_recording)(void);
static int failures;

static void find_api(const char *lib)
{
	void *h = NULL;
	/* Preloaded or linked: already here. */
	api_start = (int (*)(const char *, const struct memprof_options *))dlsym(RTLD_DEFAULT, "memprof_start");
	if (!api_start) {
		h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			fprintf(stderr, "inproc: dlopen: %s\n", dlerror());
			exit(2);
		}
		api_start = (int (*)(const char *, const struct memprof_options *))dlsym(h, "memprof_start");
	}
#define FIND(var, name) var = (__typeof__(var))dlsym(h ? h : RTLD_DEFAULT, name)
	FIND(api_stop, "memprof_stop");
	FIND(api_snapshot, "memprof_snapshot");
	FIND(api_status, "memprof_status");
	FIND(api_is_recording, "memprof_is_recording");
	if (!api_start || !api_stop || !api_snapshot || !api_status || !api_is_recording) {
		fprintf(stderr, "inproc: the API is not in '%s'\n", lib);
		exit(2);
	}
}

static const char *errname(int e)
{
	switch (e) {
	case EBUSY: return "EBUSY";
	case ENOENT: return "ENOENT";
	case EEXIST: return "EEXIST";
	case EINVAL: return "EINVAL";
	case E2BIG: return "E2BIG";
	case ENOTSUP: return "ENOTSUP";
	case EPERM: return "EPERM";
	case EIO: return "EIO";
	default: return strerror(e);
	}
}

/* A call that must succeed. */
static void must(int r, const char *what)
{
	if (r != 0) {
		printf("%s failed: %s\n", what, errname(errno));
		failures++;
	}
}

/* A call that must fail: the errno it gave. */
static void refused(int r, const char *what)
{
	if (r == 0) {
		printf("%s succeeded\n", what);
		failures++;
	} else {
		printf("%s: %s\n", what, errname(errno));
	}
}

static void after_stop(const char *path)
{
	const char *cmd = getenv("INPROC_AFTER_STOP");
	char line[8192];
	if (!cmd)
		return;
	snprintf(line, sizeof(line), "%s '%s'", cmd, path);
	if (system(line) != 0) {
		printf("after stop of '%s' failed\n", path);
		failures++;
	}
}

__attribute__((noinline)) static void *before_start(size_t n)
{
	which = 1;
	void *p = malloc(n);
	BARRIER();
	return p;
}

__attribute__((noinline)) static void *in_first(size_t n)
{
	which = 2;
	void *p = malloc(n); /* SITE:in_first */
	BARRIER();
	return p;
}

__attribute__((noinline)) static void *between(size_t n)
{
	which = 3;
	void *p = malloc(n);
	BARRIER();
	return p;
}

__attribute__((noinline)) static void *in_second(size_t n, int zeroed)
{
	which = 4;
	void *p = zeroed ? calloc(1, n) : malloc(n); /* SITE:in_second */
	BARRIER();
	return p;
}

__attribute__((noinline)) static void *after(size_t n)
{
	which = 5;
	void *p = malloc(n);
	BARRIER();
	return p;
}

static void *volatile sink;

static int exact(const char *dir)
{
	char a[4096], b[4096], snap[4096];
	void *pre[5], *first[3], *second[5];
	struct memprof_options o = MEMPROF_OPTIONS_INIT;
	struct memprof_status st = { .size = sizeof(st) };
	snprintf(a, sizeof(a), "%s/a.bin", dir);
	snprintf(b, sizeof(b), "%s/b.bin", dir);
	snprintf(snap, sizeof(snap), "%s/b.snap", dir);

	refused(api_snapshot(NULL), "snapshot stopped");
	refused(api_stop(), "stop stopped");
	for (int i = 0; i < 5; i++)
		pre[i] = before_start(4444);
	must(api_start(a, NULL), "start a");
	for (int i = 0; i < 3; i++)
		first[i] = in_first(1111);
	free(pre[0]);
	free(pre[1]);
	must(api_stop(), "stop a");
	after_stop(a);
	refused(api_stop(), "stop again");

	for (int i = 0; i < 7; i++)
		sink = between(5555);
	/* Refusals, each leaving nothing recording. */
	refused(api_start(a, NULL), "start existing");
	o.memory_interval_ms = 3600001;
	refused(api_start(b, &o), "start bad interval");
	o.memory_interval_ms = 0;
	{
		/* A newer memprof.h's options: a field this tracker does not know, set. */
		struct {
			struct memprof_options o;
			int future;
		} newer = { MEMPROF_OPTIONS_INIT, 1 };
		newer.o.size = sizeof(newer);
		refused(api_start(b, &newer.o), "start newer");
		newer.future = 0;
		must(api_start(b, &newer.o), "start newer with the new field zero");
		must(api_stop(), "stop newer");
		unlink(b);
	}
	if (api_is_recording()) {
		printf("recording after the refusals\n");
		failures++;
	}

	o.max_depth = 4;
	must(api_start(b, &o), "start b");
	refused(api_start(a, NULL), "start again");
	for (int i = 0; i < 4; i++)
		second[i] = in_second(6666, 0);
	second[4] = in_second(6667, 1);
	free(first[0]);
	for (int i = 2; i < 5; i++)
		free(pre[i]);
	must(api_snapshot(snap), "snapshot b");
	refused(api_snapshot(snap), "snapshot existing");
	must(api_status(&st), "status");
	printf("status: recording=%d by=%d captures=%u path=%s\n", st.recording, st.by, st.captures,
	       strcmp(st.path, b) ? st.path : "b");
	free(second[0]);
	must(api_stop(), "stop b");
	after_stop(b);
	must(api_status(&st), "status after stop");
	printf("status: recording=%d by=%d captures=%u path=%s\n", st.recording, st.by, st.captures,
	       strcmp(st.path, b) ? st.path : "b");
	for (int i = 0; i < 8; i++)
		sink = after(7777);
	return failures ? 1 : 0;
}

/* ---- an aggregated capture ---- */

__attribute__((noinline)) static void *agg_small(size_t n)
{
	which = 6;
	void *p = malloc(n);
	BARRIER();
	return p;
}

__attribute__((noinline)) static void *agg_zeroed(size_t n, size_t size)
{
	which = 7;
	void *p = calloc(n, size);
	BARRIER();
	return p;
}

__attribute__((noinline)) static void *agg_grow(void *p, size_t n)
{
	which = 8;
	p = realloc(p, n);
	BARRIER();
	return p;
}

__attribute__((noinline)) static void *agg_peak(size_t n)
{
	which = 9;
	void *p = malloc(n);
	BARRIER();
	return p;
}

__attribute__((noinline)) static void *agg_map(size_t n)
{
	which = 10;
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	BARRIER();
	return p;
}

__attribute__((noinline)) static void *agg_worker(void *arg)
{
	void *kept[30];
	(void)arg;
	which = 11;
	pthread_setname_np(pthread_self(), "agg-worker");
	for (int i = 0; i < 30; i++)
		kept[i] = malloc(777);
	for (int i = 0; i < 10; i++)
		free(kept[i]);
	BARRIER();
	return NULL;
}

static int aggregate(const char *path, const char *snap)
{
	struct memprof_options o = MEMPROF_OPTIONS_INIT;
	void *pre[2], *small[200], *zeroed[10], *big;
	char *map;
	long page = sysconf(_SC_PAGESIZE);
	pthread_t t;
	o.aggregate = !getenv("INPROC_FULL");
	for (int i = 0; i < 2; i++)
		pre[i] = before_start(4444);
	must(api_start(strcmp(path, "-") ? path : NULL, &o), "start aggregate");
	free(pre[0]);
	for (int i = 0; i < 200; i++)
		small[i] = agg_small(100 + 16 * (size_t)(i % 7));
	for (int i = 0; i < 200; i += 3)
		free(small[i]);
	if (strcmp(snap, "-"))
		must(api_snapshot(snap), "snapshot aggregate");
	for (int i = 0; i < 10; i++)
		zeroed[i] = agg_zeroed(50, 40);
	small[1] = agg_grow(small[1], 9000);
	pthread_create(&t, NULL, agg_worker, NULL);
	pthread_join(t, NULL);
	big = agg_peak(1 << 20);
	free(big);
	map = agg_map(3 * (size_t)page);
	munmap(map + page, (size_t)page);
	free(NULL);
	if (getenv("INPROC_KILL"))
		raise(SIGKILL);
	must(api_stop(), "stop aggregate");
	sink = zeroed[0];
	return failures ? 1 : 0;
}

/* ---- two threads start at once ---- */

static pthread_barrier_t race_barrier;
static const char *race_path;
static int race_result[2], race_errno[2];

static void *racer(void *arg)
{
	int i = (int)(long)arg;
	pthread_barrier_wait(&race_barrier);
	race_result[i] = api_start(race_path, NULL);
	race_errno[i] = errno;
	return NULL;
}

static int race(const char *dir, int n)
{
	char path[4096];
	for (int k = 0; k < n; k++) {
		pthread_t t[2];
		snprintf(path, sizeof(path), "%s/r.%d.bin", dir, k);
		race_path = path;
		pthread_barrier_init(&race_barrier, NULL, 2);
		for (long i = 0; i < 2; i++)
			pthread_create(&t[i], NULL, racer, (void *)i);
		for (int i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
		pthread_barrier_destroy(&race_barrier);
		if ((race_result[0] == 0) == (race_result[1] == 0) ||
		    race_errno[race_result[0] == 0 ? 1 : 0] != EBUSY) {
			printf("race %d: results %d (%s) and %d (%s)\n", k, race_result[0],
			       errname(race_errno[0]), race_result[1], errname(race_errno[1]));
			failures++;
		}
		must(api_stop(), "race stop");
	}
	if (!failures)
		printf("race ok %d\n", n);
	return failures ? 1 : 0;
}

/* ---- threads allocate while captures start and stop ---- */

static volatile int stress_done;

static void *allocator(void *arg)
{
	void *kept[64] = { 0 };
	unsigned seed = (unsigned)(long)arg;
	while (!stress_done) {
		for (int i = 0; i < 64; i++) {
			seed = seed * 1103515245u + 12345u;
			free(kept[i]);
			kept[i] = (seed >> 8) & 1 ? malloc(16 + (seed >> 12) % 4000)
						 : realloc(NULL, 32 + (seed >> 12) % 100);
		}
	}
	for (int i = 0; i < 64; i++)
		free(kept[i]);
	return NULL;
}

static int stress(const char *dir, int n)
{
	pthread_t t[4];
	char path[4096];
	for (long i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, allocator, (void *)(i + 1));
	for (int k = 0; k < n; k++) {
		snprintf(path, sizeof(path), "%s/s.%d.bin", dir, k);
		must(api_start(path, NULL), "stress start");
		usleep(1000);
		if (k % 10 == 0)
			must(api_snapshot(NULL), "stress snapshot");
		must(api_stop(), "stress stop");
	}
	stress_done = 1;
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	if (!failures)
		printf("stress ok %d\n", n);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	int r;
	if (argc < 4) {
		fprintf(stderr, "usage: inproc exact|race|stress LIB DIR [N] | aggregate LIB PATH SNAP\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	find_api(argv[2]);
	if (!strcmp(argv[1], "exact"))
		r = exact(argv[3]);
	else if (!strcmp(argv[1], "aggregate"))
		r = argc > 4 ? aggregate(argv[3], argv[4]) : 2;
	else if (!strcmp(argv[1], "race"))
		r = race(argv[3], argc > 4 ? atoi(argv[4]) : 50);
	else if (!strcmp(argv[1], "stress"))
		r = stress(argv[3], argc > 4 ? atoi(argv[4]) : 100);
	else
		r = 2;
	return r;
}
