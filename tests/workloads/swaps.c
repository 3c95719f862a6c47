/*
 * Workload: T threads swap blocks through 64 shared slots, N times each: a
 * thread allocates a block (swap_alloc), exchanges it into a random slot and
 * frees what was there, which another thread allocated. Blocks freed in one
 * thread are handed out again in another, so a capture whose events were not
 * in order would show a block allocated twice or freed unknown. In the end
 * main frees every slot: nothing leaks.
 *   swaps T N
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static void *volatile slots[64];
static long rounds;

__attribute__((noinline)) void *swap_alloc(size_t size)
{
	void *p = malloc(size); /* SITE:swap_alloc */
	__asm__ volatile("" ::: "memory");
	return p;
}

static void *worker(void *arg)
{
	uint64_t rng = (uint64_t)(uintptr_t)arg * 0x9e3779b97f4a7c15ull + 1;
	for (long i = 0; i < rounds; i++) {
		void *p, *old;
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		/* A few sizes, so the allocator's bins are shared and reuse is frequent. */
		p = swap_alloc(32 + (rng >> 40) % 4 * 16);
		old = __atomic_exchange_n(&slots[rng % 64], p, __ATOMIC_ACQ_REL);
		free(old);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 1 ? atoi(argv[1]) : 4;
	pthread_t t[64];
	rounds = argc > 2 ? atol(argv[2]) : 100000;
	if (threads < 1 || threads > 64 || rounds < 1) {
		fprintf(stderr, "usage: swaps THREADS ROUNDS\n");
		return 2;
	}
	for (int i = 0; i < threads; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(i + 1)))
			return 1;
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 64; i++)
		free(slots[i]);
	return 0;
}
