/*
 * Workload: the parent allocates 3 x 100 bytes (parent_alloc), forks a child
 * that frees one of the parent's blocks, allocates 5 x 200 bytes
 * (child_alloc) and exits with status 5; the parent waits and exits with
 * status 0 after allocating 1 x 300 bytes (after_fork).
 *
 * "forks many N": N children one after the other, each allocating 5 x 200
 * bytes (child_alloc) and exiting with status 5; the parent allocates 100
 * bytes (parent_alloc) before each fork. With a short memory interval the
 * tracker's timer is often in the middle of a tick when the program forks.
 * "forks busy N": the same while 4 threads allocate and free without pause,
 * so that the collector always has a backlog of the parent's events.
 * "forks wide N": the parent first allocates 8 bytes from each of 4096
 * stacks 12 calls of path_a and path_b deep (the call at depth i is
 * path_a's when bit i of the stack's number is set), enough to grow the
 * tracker's trace tree and stack map past their first sizes; then N children
 * as in "many", each also allocating 8 bytes from its own one of those
 * stacks (number 1000 + its index), which its capture must name again.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void *volatile sink;
#define BARRIER() __asm__ volatile("" ::: "memory")

__attribute__((noinline)) static void *parent_alloc(void)
{
	void *p = malloc(100); /* SITE:parent_alloc */
	BARRIER();
	return p;
}

__attribute__((noinline)) static void *child_alloc(void)
{
	void *p = malloc(200); /* SITE:child_alloc */
	BARRIER();
	return p;
}

__attribute__((noinline)) static void *after_fork(void)
{
	void *p = malloc(300); /* SITE:after_fork */
	BARRIER();
	return p;
}

#define WIDE_DEPTH 12
/* (So that the two are not one function to the compiler: -fipa-icf would fold them.) */
volatile unsigned calls_a, calls_b;

__attribute__((noinline)) static void *path_b(unsigned bits, int depth);

__attribute__((noinline)) static void *path_a(unsigned bits, int depth)
{
	void *p;
	calls_a++;
	if (!depth)
		p = malloc(8);
	else if (bits & 1)
		p = path_a(bits >> 1, depth - 1);
	else
		p = path_b(bits >> 1, depth - 1);
	BARRIER();
	return p;
}

__attribute__((noinline)) static void *path_b(unsigned bits, int depth)
{
	void *p;
	calls_b++;
	if (!depth)
		p = malloc(8);
	else if (bits & 1)
		p = path_a(bits >> 1, depth - 1);
	else
		p = path_b(bits >> 1, depth - 1);
	BARRIER();
	return p;
}

static int wide(int n)
{
	for (unsigned k = 0; k < 1u << WIDE_DEPTH; k++)
		free(path_a(k, WIDE_DEPTH));
	for (int k = 0; k < n; k++) {
		pid_t pid;
		int status;
		sink = parent_alloc();
		pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0) {
			for (int i = 0; i < 5; i++)
				sink = child_alloc();
			sink = path_a(1000u + (unsigned)k, WIDE_DEPTH);
			exit(5);
		}
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 5)
			return 1;
	}
	printf("forked %d children\n", n);
	return 0;
}

static volatile int stop_busy;

static void *busy(void *arg)
{
	while (!stop_busy)
		for (int i = 0; i < 100; i++) {
			void *p = malloc(64 + (size_t)i);
			sink = p;
			BARRIER();
			free(p);
		}
	return arg;
}

static int many(int n)
{
	for (int k = 0; k < n; k++) {
		pid_t pid;
		int status;
		sink = parent_alloc();
		pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0) {
			for (int i = 0; i < 5; i++)
				sink = child_alloc();
			exit(5);
		}
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 5)
			return 1;
	}
	printf("forked %d children\n", n);
	return 0;
}

int main(int argc, char **argv)
{
	void *p[3];
	pid_t pid;
	int status;
	if (argc == 3 && !strcmp(argv[1], "many"))
		return many(atoi(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "wide"))
		return wide(atoi(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "busy")) {
		pthread_t t[4];
		int r;
		for (int i = 0; i < 4; i++)
			if (pthread_create(&t[i], NULL, busy, NULL))
				return 1;
		r = many(atoi(argv[2]));
		stop_busy = 1;
		for (int i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
		return r;
	}
	for (int i = 0; i < 3; i++)
		p[i] = parent_alloc();
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		free(p[0]);
		for (int i = 0; i < 5; i++)
			sink = child_alloc();
		exit(5);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 5)
		return 1;
	sink = after_fork();
	return 0;
}
