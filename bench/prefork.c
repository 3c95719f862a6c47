/*
 * Benchmark workload: a prefork server's workers, idle. The parent forks
 * CHILDREN processes; each allocates ALLOCS blocks of 100 bytes, sleeps MS
 * milliseconds (an idle worker waiting for requests), frees its blocks and
 * exits 0. The parent waits for all and prints one line. Under `memprof run
 * --follow-fork` every child is a tracked process with its own capture, and
 * what the run costs beyond the untracked one is what idle tracked
 * processes cost (their samples, and the collector's work for them).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/workload.h"

static void usage(void)
{
	fprintf(stderr, "usage: prefork [-c CHILDREN] [-n ALLOCS] [-m MS]\n");
	exit(2);
}

static int worker(unsigned long long allocs, unsigned long long ms)
{
	void **blocks = calloc(allocs ? allocs : 1, sizeof(*blocks));
	struct timespec idle = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
	if (!blocks)
		return 1;
	for (unsigned long long i = 0; i < allocs; i++)
		if (!(blocks[i] = malloc(100)))
			return 1;
	while (nanosleep(&idle, &idle) != 0)
		;
	for (unsigned long long i = 0; i < allocs; i++)
		free(blocks[i]);
	free(blocks);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long long children = 64, allocs = 100, ms = 2000, failed = 0;
	char line[128];
	int len;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = argv[i + 1];
		if (a[0] != '-' || !a[1] || a[2] || !v)
			usage();
		i++;
		switch (a[1]) {
		case 'c': children = bench_number(argv[0], a, v); break;
		case 'n': allocs = bench_number(argv[0], a, v); break;
		case 'm': ms = bench_number(argv[0], a, v); break;
		default: usage();
		}
	}
	if (!children || children > 4096)
		usage();
	for (unsigned long long k = 0; k < children; k++) {
		pid_t p = fork();
		if (p < 0)
			return 1;
		if (p == 0)
			_exit(worker(allocs, ms));
	}
	for (unsigned long long k = 0; k < children; k++) {
		int st;
		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			failed++;
	}
	len = snprintf(line, sizeof(line), "children=%llu allocs=%llu failed=%llu\n", children,
		       children * allocs, failed);
	bench_write(line, (size_t)len);
	return failed != 0;
}
