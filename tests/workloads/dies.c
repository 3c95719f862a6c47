/*
 * Workload: allocations, then a death the program cannot clean up after.
 *   dies segv N [SIZE]  N x SIZE bytes (100 KiB; dies_alloc), 1 ms, then a bad pointer
 *   dies raise N        N x 1 MiB, then raise(SIGSEGV)
 *   dies sigbus N       N x 100 KiB, then a read past the end of a mapped empty file
 *   dies overflow N     N x 100 KiB, then unbounded recursion (the stack's guard page)
 *   dies thread-exit N  a thread makes N x 100 KiB allocations, then calls _exit(5)
 *   dies kill T         T threads named dies-<i> allocate (and free some) until killed;
 *                       after each allocation returns, a line "dies-<i> <count>" is
 *                       written to standard output, so whoever kills the program knows
 *                       which allocations had returned
 * Every allocation is made by dies_alloc, so a test can count them by stack.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

void *volatile sink[4096];

__attribute__((noinline)) void *dies_alloc(size_t size)
{
	void *p = malloc(size); /* SITE:dies_alloc */
	__asm__ volatile("" ::: "memory");
	return p;
}

static void allocate(int n, size_t size)
{
	for (int i = 0; i < n; i++)
		sink[i % 4096] = dies_alloc(size);
}

static int (*volatile again)(int);

/* Deeper and deeper until the stack's guard page (through a pointer, so nothing sees the loop). */
__attribute__((noinline)) static int recurse(int depth)
{
	volatile char frame[4096];
	frame[0] = (char)depth;
	return again(depth + 1) + frame[0];
}

static void *exit_thread(void *arg)
{
	allocate(*(int *)arg, 100 << 10);
	_exit(5);
}

static void *kill_thread(void *arg)
{
	int index = (int)(long)arg;
	char name[16], line[64];
	void *mine[64] = { 0 };
	unsigned long count = 0;
	snprintf(name, sizeof(name), "dies-%d", index);
	pthread_setname_np(pthread_self(), name);
	for (;;) {
		int slot = (int)(count % 64);
		void *p = dies_alloc(16 + (count * 37) % 4000);
		int n;
		count++;
		/* The allocation has returned: say so (one write, so lines never mix). */
		n = snprintf(line, sizeof(line), "%s %lu\n", name, count);
		if (write(1, line, (size_t)n) != n)
			_exit(1);
		free(mine[slot]);
		mine[slot] = p;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "";
	int n = argc > 2 ? atoi(argv[2]) : 0;
	if (!strcmp(how, "segv")) {
		struct timespec t = { 0, 1000 * 1000 };
		volatile long bad = 16;
		allocate(n, argc > 3 ? (size_t)atol(argv[3]) : 100 << 10);
		nanosleep(&t, NULL);
		return *(volatile int *)bad;
	}
	if (!strcmp(how, "raise")) {
		allocate(n, 1 << 20);
		raise(SIGSEGV);
		return 1;
	}
	if (!strcmp(how, "sigbus")) {
		char path[] = "/tmp/memprof-dies.XXXXXX";
		int fd = mkstemp(path);
		char *m;
		if (fd < 0)
			return 1;
		unlink(path);
		allocate(n, 100 << 10);
		m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED)
			return 1;
		return *(volatile char *)m; /* the file is empty: SIGBUS */
	}
	if (!strcmp(how, "overflow")) {
		allocate(n, 100 << 10);
		again = recurse;
		return recurse(0);
	}
	if (!strcmp(how, "thread-exit")) {
		pthread_t t;
		if (pthread_create(&t, NULL, exit_thread, &n))
			return 1;
		for (;;)
			pause();
	}
	if (!strcmp(how, "kill")) {
		pthread_t t;
		for (long i = 0; i < n; i++)
			if (pthread_create(&t, NULL, kill_thread, (void *)i))
				return 1;
		for (;;)
			pause();
	}
	fprintf(stderr, "usage: dies segv|raise|sigbus|overflow|thread-exit|kill N\n");
	return 2;
}
