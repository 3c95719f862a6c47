/*
 * Workload: two libraries of the same layout (argv[1], which exports
 * lib_one_alloc, and argv[2], lib_two_alloc) loaded and unloaded in turn.
 * A round dlopen()s one, allocates 1111 bytes through lib_one_alloc or 2222
 * through lib_two_alloc, frees them and dlclose()s the library; the loader
 * often puts each library where the other one was, at the same addresses.
 *
 *   dlchurn ONE TWO plain ROUNDS     ROUNDS rounds in main.
 *   dlchurn ONE TWO held ROUNDS      The same inside a dl_iterate_phdr
 *       callback, which holds the loader's write lock, while another thread
 *       sleeps in a dlclose that unloads nothing: a tracker that refreshes
 *       its module map there waits for that lock (see held_cb()).
 *   dlchurn ONE TWO handover ROUNDS  ROUNDS / 2 times: a second thread loads
 *       ONE, allocates through it and unloads it; main takes the loader's
 *       write lock (in a dl_iterate_phdr callback) as soon as ONE is unlinked
 *       and, if the second thread then sleeps still inside its dlclose (in a
 *       tracker's refresh, which waits for that lock), loads TWO, where ONE
 *       was, and allocates through it before that refresh; then unloads it.
 *       Standard error says how many times the second thread was caught so
 *       (about half, where the two threads have a processor each).
 *
 * So 1111-byte blocks come from lib_one_alloc only, 2222-byte ones from
 * lib_two_alloc only: ROUNDS / 2 of each (ROUNDS even).
 *
 *   dlchurn OUTER INNER nested ROUNDS  dlopen and dlclose where the loader
 *       holds a lock: OUTER's constructor and destructor (which the test
 *       writes) each load INNER, allocate 3333 and 4444 bytes through its
 *       inner_alloc and unload it; main loads and unloads OUTER ROUNDS times,
 *       and as often does the same with INNER, 5555 bytes, in a
 *       dl_iterate_phdr callback; at exit an atexit handler does it with 6666
 *       bytes, and OUTER, left loaded, once more with 4444 in its destructor.
 *       So INNER's inner_alloc has ROUNDS + 1 blocks of 3333 and of 4444
 *       bytes, ROUNDS of 5555 and one of 6666. (No other thread allocates
 *       meanwhile: one that unwound with libunwind, which takes its cache's
 *       lock and then the loader's, could deadlock with an allocation in the
 *       callback, the tracker's libunwind fallback; a known limit.)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *libs[2];
static int rounds;

/* One round with library k (0: ONE, 1: TWO). */
static int round_with(int k)
{
	static const char *fn[2] = { "lib_one_alloc", "lib_two_alloc" };
	void *h = dlopen(libs[k], RTLD_NOW), *(*f)(size_t);
	if (!h || !(f = (void *(*)(size_t))dlsym(h, fn[k])))
		return 1;
	free(f(k ? 2222 : 1111));
	return dlclose(h) != 0;
}

static int churn(void)
{
	for (int i = 0; i < rounds; i++)
		if (round_with(i % 2))
			return 1;
	return 0;
}

/* ---- held ---- */

static int stopper_tid, in_callback, closing, stopper_done, held_rc = 1;

/* A dlclose that unloads nothing (the C library stays): only what a tracker does around it. */
static void *stopper(void *arg)
{
	void *h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	(void)arg;
	__atomic_store_n(&stopper_tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
	while (!__atomic_load_n(&in_callback, __ATOMIC_ACQUIRE))
		usleep(1000);
	/* From here the thread sleeps only where something in dlclose waits. */
	__atomic_store_n(&closing, 1, __ATOMIC_RELEASE);
	if (h)
		dlclose(h);
	__atomic_store_n(&stopper_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Whether thread tid sleeps (state S in /proc/self/task/TID/stat); no allocation. */
static int sleeping(int tid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	if ((fd = open(path, O_RDONLY)) < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strrchr(buf, ')'); /* (the name may hold anything) */
	return p && p[1] == ' ' && p[2] == 'S';
}

static int held_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	int tid = __atomic_load_n(&stopper_tid, __ATOMIC_ACQUIRE);
	(void)info;
	(void)size;
	(void)data;
	/*
	 * The stopper runs its dlclose now. Once it sleeps it waits for the
	 * loader's write lock this thread holds (nothing else in that dlclose
	 * waits for long): in a tracker's refresh of its map, if one is loaded.
	 * Without one the dlclose is soon done.
	 */
	__atomic_store_n(&in_callback, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&closing, __ATOMIC_ACQUIRE))
		usleep(1000);
	while (!__atomic_load_n(&stopper_done, __ATOMIC_ACQUIRE) && !sleeping(tid))
		usleep(1000);
	held_rc = churn();
	return 1;
}

static int main_held(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, stopper, NULL))
		return 1;
	while (!__atomic_load_n(&stopper_tid, __ATOMIC_ACQUIRE))
		usleep(1000);
	dl_iterate_phdr(held_cb, NULL);
	pthread_join(t, NULL);
	return held_rc;
}

/* ---- handover ---- */

static int unloader_tid, turn, unloading, unloader_returned, unloader_rc;
static unsigned long long subs_before;

/* Loads ONE, allocates through it and unloads it, when main says (turn odd). */
static void *unloader(void *arg)
{
	(void)arg;
	__atomic_store_n(&unloader_tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
	for (int i = 1; i < rounds; i += 2) {
		static const char *fn = "lib_one_alloc";
		void *h, *(*f)(size_t);
		while (__atomic_load_n(&turn, __ATOMIC_ACQUIRE) != i)
			usleep(1000);
		if (!(h = dlopen(libs[0], RTLD_NOW)) || !(f = (void *(*)(size_t))dlsym(h, fn))) {
			unloader_rc = 1;
			h = NULL;
		} else {
			free(f(1111));
		}
		__atomic_store_n(&unloader_returned, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&unloading, i, __ATOMIC_RELEASE);
		if (h && dlclose(h))
			unloader_rc = 1;
		__atomic_store_n(&unloader_returned, 1, __ATOMIC_RELEASE);
		__atomic_store_n(&turn, i + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static int counters_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	*(unsigned long long *)data = info->dlpi_subs;
	return 1;
}

static int caught, handover_rc;

/* Under the loader's write lock: once ONE is unlinked, TWO's round (where ONE was, often). */
static int handover_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	int tid = __atomic_load_n(&unloader_tid, __ATOMIC_ACQUIRE);
	(void)size;
	if (info->dlpi_subs == subs_before)
		return 1; /* not yet: again */
	*(int *)data = 1;
	/* Sleeping before its dlclose returns, the unloader waits for this lock. */
	while (!__atomic_load_n(&unloader_returned, __ATOMIC_ACQUIRE) && !sleeping(tid))
		usleep(1000);
	caught += !__atomic_load_n(&unloader_returned, __ATOMIC_ACQUIRE);
	handover_rc |= round_with(1);
	return 1;
}

/*
 * The loader's state for debuggers, where it tells them through DT_DEBUG (the
 * program's copy of _r_debug is not it: a copy relocation).
 */
static struct r_debug *loader_debug(void)
{
	for (ElfW(Dyn) *d = _DYNAMIC; d->d_tag != DT_NULL; d++)
		if (d->d_tag == DT_DEBUG)
			return (struct r_debug *)d->d_un.d_ptr;
	return NULL;
}

/*
 * Main and the unloader on two processors of their own, where there are two:
 * main spins on one while the other unloads, and takes the lock at once.
 */
static void apart(pthread_t unloader_thread)
{
	cpu_set_t all, one;
	int cpu[2], n = 0;
	if (sched_getaffinity(0, sizeof(all), &all))
		return;
	for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &all))
			cpu[n++] = c;
	if (n < 2)
		return;
	CPU_ZERO(&one);
	CPU_SET(cpu[0], &one);
	pthread_setaffinity_np(pthread_self(), sizeof(one), &one);
	CPU_ZERO(&one);
	CPU_SET(cpu[1], &one);
	pthread_setaffinity_np(unloader_thread, sizeof(one), &one);
}

static int main_handover(void)
{
	struct r_debug *dbg = loader_debug();
	pthread_t t;
	if (pthread_create(&t, NULL, unloader, NULL))
		return 1;
	apart(t);
	for (int i = 1; i < rounds; i += 2) {
		int done = 0;
		dl_iterate_phdr(counters_cb, &subs_before);
		__atomic_store_n(&turn, i, __ATOMIC_RELEASE);
		while (__atomic_load_n(&unloading, __ATOMIC_ACQUIRE) != i)
			sched_yield();
		/*
		 * The loader's lock the moment ONE is unlinked, before the unloader
		 * is back from the loader (spinning, not sleeping on the lock: a
		 * thread woken from there would come too late): the debugger's
		 * state is RT_DELETE from before the unmap until after the unlink.
		 */
		while (dbg && __atomic_load_n(&dbg->r_state, __ATOMIC_ACQUIRE) != RT_DELETE &&
		       !__atomic_load_n(&unloader_returned, __ATOMIC_ACQUIRE))
			;
		while (dbg && __atomic_load_n(&dbg->r_state, __ATOMIC_ACQUIRE) != RT_CONSISTENT &&
		       !__atomic_load_n(&unloader_returned, __ATOMIC_ACQUIRE))
			;
		while (!done)
			dl_iterate_phdr(handover_cb, &done);
		while (__atomic_load_n(&turn, __ATOMIC_ACQUIRE) != i + 1)
			usleep(1000);
	}
	pthread_join(t, NULL);
	fprintf(stderr, "dlchurn: the unloader was caught in its dlclose %d times of %d\n", caught,
		rounds / 2);
	return handover_rc | unloader_rc;
}

/* ---- nested ---- */

static int inner_round(size_t n)
{
	void *h = dlopen(libs[1], RTLD_NOW), *(*f)(size_t);
	if (!h || !(f = (void *(*)(size_t))dlsym(h, "inner_alloc")))
		return 1;
	free(f(n));
	return dlclose(h) != 0;
}

static int nested_rc;

static int nested_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)info;
	(void)size;
	(void)data;
	nested_rc |= inner_round(5555);
	return 1;
}

static void at_end(void)
{
	if (inner_round(6666))
		_exit(1);
}

static int main_nested(void)
{
	if (atexit(at_end))
		return 1;
	for (int i = 0; i < rounds; i++) {
		void *h = dlopen(libs[0], RTLD_NOW);
		if (!h || dlclose(h))
			return 1;
		dl_iterate_phdr(nested_cb, NULL);
	}
	return dlopen(libs[0], RTLD_NOW) ? nested_rc : 1;
}

int main(int argc, char **argv)
{
	if (argc < 5)
		return 2;
	libs[0] = argv[1];
	libs[1] = argv[2];
	rounds = atoi(argv[4]);
	if (!strcmp(argv[3], "plain"))
		return churn();
	if (!strcmp(argv[3], "held"))
		return main_held();
	if (!strcmp(argv[3], "handover"))
		return main_handover();
	if (!strcmp(argv[3], "nested"))
		return main_nested();
	return 2;
}
