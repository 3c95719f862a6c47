/*
 * Workload: every allocator kind, with known sizes, counts, call paths and
 * leaks. Lines marked SITE:<name> are looked up by the tests. Prints with
 * write(2) only, so stdio allocates nothing.
 * Every allocating function stores its result and then passes a compiler
 * barrier, so no call is in tail position and every frame stays on the stack
 * whatever the optimization level.
 *
 * Allocations (20 kept = leaked, the rest freed):
 *   make_kept       10 x malloc(1000 + i), kept                 (10 blocks, 10045 bytes)
 *   churn         1000 x malloc(32), freed at once
 *   grow_chain       malloc(10) -> realloc(100) -> realloc(1000) -> free
 *   main             calloc(10, 100), kept                       (1000 bytes)
 *   aligned          posix_memalign(64, 4096), aligned_alloc(64, 128), memalign(32, 256),
 *                    valloc(4096), pvalloc(100) (= 4096), all freed
 *   array            reallocarray(NULL, 10, 20) (200), freed
 *   mapping          mmap 3 pages, munmap the middle page, then the two others
 *   copy             strdup("seventeen bytes!") kept                (17 bytes)
 *   zero_realloc     malloc(64) then realloc(p, 0), which frees it
 *
 * "allocs pairs N": only N x malloc(48) in pairs, each freed at once
 * (enough events to fill a ring many times over).
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

void *volatile sink;
#define BARRIER() __asm__ volatile("" ::: "memory")
static void *kept[16];

__attribute__((noinline)) static void *make_kept(size_t n)
{
	void *p = malloc(n); /* SITE:make_kept */
	BARRIER();
	return p;
}

__attribute__((noinline)) static void churn(void)
{
	for (int i = 0; i < 1000; i++) {
		sink = malloc(32); /* SITE:churn */
		free(sink);
	}
}

__attribute__((noinline)) static void grow_chain(void)
{
	char *p = malloc(10);     /* SITE:chain_malloc */
	p = realloc(p, 100);      /* SITE:chain_realloc1 */
	p = realloc(p, 1000);     /* SITE:chain_realloc2 */
	free(p);
}

__attribute__((noinline)) static void aligned(void)
{
	void *p;
	if (posix_memalign(&p, 64, 4096) == 0) /* SITE:posix_memalign */
		free(p);
	free(aligned_alloc(64, 128)); /* SITE:aligned_alloc */
	free(memalign(32, 256));      /* SITE:memalign */
	free(valloc(4096));           /* SITE:valloc */
	free(pvalloc(100));           /* SITE:pvalloc */
}

__attribute__((noinline)) static void array(void)
{
	free(reallocarray(NULL, 10, 20)); /* SITE:reallocarray */
}

__attribute__((noinline)) static void mapping(void)
{
	long ps = sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, 3 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0); /* SITE:mmap */
	if (m == MAP_FAILED)
		_exit(2);
	munmap(m + ps, ps);
	munmap(m, ps);
	munmap(m + 2 * ps, ps);
}

__attribute__((noinline)) static char *copy(void)
{
	char *p = strdup("seventeen bytes!"); /* SITE:strdup */
	BARRIER();
	return p;
}

__attribute__((noinline)) static void zero_realloc(void)
{
	void *p = malloc(64); /* SITE:zero_malloc */
	sink = realloc(p, 0);
}

__attribute__((noinline)) static void pairs(long n)
{
	for (long i = 0; i < n; i++) {
		sink = malloc(48); /* SITE:pairs */
		BARRIER();
		free(sink);
	}
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "pairs")) {
		pairs(atol(argv[2]));
		return write(1, "pairs done\n", 11) == 11 ? 0 : 1;
	}
	for (int i = 0; i < 10; i++)
		kept[i] = make_kept(1000 + i);
	churn();
	grow_chain();
	kept[10] = calloc(10, 100); /* SITE:calloc */
	aligned();
	array();
	mapping();
	kept[11] = copy();
	zero_realloc();
	if (write(1, "allocs done\n", 12) != 12)
		return 1;
	return 0;
}
