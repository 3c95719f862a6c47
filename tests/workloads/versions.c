/*
 * Workload: two versions of one program, for memprof diff. argv[1] is the
 * number of blocks the "bug" leaks (default 3): `versions 3` is the program
 * before a fix, `versions 0` after it; nothing else differs. argv[2], the
 * blocks of work (default 10, at most 64), changes the program another way.
 * Prints with write(2) only, so stdio allocates nothing.
 *   cache       5 x malloc(2000), kept          (leaked in both: 10000 bytes)
 *   leak_bug    N x malloc(1024), kept          (the bug: N x 1024 bytes leaked)
 *   work       W x malloc(500), all freed at the end, after the peak
 * The peak is reached with the last block of work: 10000 + N x 1024 + W x 500
 * bytes in 5 + N + W blocks. Between `versions 3` and `versions 0` only
 * leak_bug changes: 3072 bytes and 3 blocks less at the peak, in the leaks
 * and in the allocations.
 */
#include <stdlib.h>
#include <unistd.h>

#define BARRIER() __asm__ volatile("" ::: "memory")
static void *volatile kept[64];
static void *blocks[64];

__attribute__((noinline)) static void *cache(void)
{
	void *p = malloc(2000); /* SITE:cache */
	BARRIER();
	return p;
}

__attribute__((noinline)) static void *leak_bug(void)
{
	void *p = malloc(1024); /* SITE:leak_bug */
	BARRIER();
	return p;
}

__attribute__((noinline)) static void *work(void)
{
	void *p = malloc(500); /* SITE:work */
	BARRIER();
	return p;
}

int main(int argc, char **argv)
{
	int leaks = argc > 1 ? atoi(argv[1]) : 3, work_blocks = argc > 2 ? atoi(argv[2]) : 10, n = 0;
	if (work_blocks < 0 || work_blocks > 64)
		work_blocks = 10;
	for (int i = 0; i < 5; i++)
		kept[n++] = cache();
	for (int i = 0; i < leaks && n < 64; i++)
		kept[n++] = leak_bug();
	for (int i = 0; i < work_blocks; i++)
		blocks[i] = work();
	for (int i = 0; i < work_blocks; i++)
		free(blocks[i]);
	if (write(1, "versions done\n", 14) != 14)
		return 1;
	return 0;
}
