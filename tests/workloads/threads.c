/*
 * Workload: 4 named threads ("worker-0".."worker-3"), each allocating 250
 * blocks of 64 bytes in worker_alloc, then freeing them; the main thread
 * allocates one block of 4321 bytes in main, kept. Each worker waits for the
 * others before freeing, so at the peak all 1000 blocks are live at once.
 *
 * "threads churn ROUNDS": ROUNDS rounds of 8 short-lived threads, each with
 * its own stack size (64 KiB to 8 MiB), so each new thread takes over the
 * tracker state of an ended one, on another stack. Each thread makes 20
 * allocations of 1000 + D bytes from churn_leaf, D + 1 calls of churn_rec
 * deep (D from 0 to 39), kept.
 *
 * "threads cancel ROUNDS": ROUNDS rounds of 4 threads named "cancel-w" that
 * allocate and free 100 to 149 bytes in a loop, with a cancellation point
 * every 1000 pairs, cancelled by the main thread after 0 to 600 us. It
 * prints how many pairs the cancelled threads made (a cancel acts only at
 * the cancellation point, between two pairs).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define THREADS 4
#define PER_THREAD 250

static pthread_barrier_t all_allocated;
void *volatile sink;
#define BARRIER() __asm__ volatile("" ::: "memory")

__attribute__((noinline)) static void *worker_alloc(void)
{
	void *p = malloc(64); /* SITE:worker_alloc */
	BARRIER();
	return p;
}

static void *worker(void *arg)
{
	void *blocks[PER_THREAD];
	char name[16];
	snprintf(name, sizeof(name), "worker-%d", (int)(long)arg);
	pthread_setname_np(pthread_self(), name);
	for (int i = 0; i < PER_THREAD; i++)
		blocks[i] = worker_alloc();
	pthread_barrier_wait(&all_allocated);
	for (int i = 0; i < PER_THREAD; i++)
		free(blocks[i]);
	return NULL;
}

__attribute__((noipa)) static void churn_rec(int d, int size)
{
	if (d > 0) {
		churn_rec(d - 1, size);
		BARRIER();
		return;
	}
	sink = malloc((size_t)size); /* SITE:churn_leaf */
	BARRIER();
}

static void *churner(void *arg)
{
	long k = (long)arg;
	for (int i = 0; i < 20; i++) {
		int d = (int)((k * 7 + i * 13) % 40);
		churn_rec(d, 1000 + d);
	}
	return NULL;
}

static int churn(int rounds)
{
	for (int r = 0; r < rounds; r++) {
		pthread_t t[8];
		for (int i = 0; i < 8; i++) {
			pthread_attr_t at;
			pthread_attr_init(&at);
			pthread_attr_setstacksize(&at, (size_t)(64 << 10) << ((r + i) % 8));
			if (pthread_create(&t[i], &at, churner, (void *)(long)(r * 8 + i)))
				return 1;
			pthread_attr_destroy(&at);
		}
		for (int i = 0; i < 8; i++)
			pthread_join(t[i], NULL);
	}
	printf("churned %d threads\n", rounds * 8);
	return 0;
}

static unsigned long long made[4];

static void *cancelled(void *arg)
{
	unsigned long long *n = arg;
	pthread_setname_np(pthread_self(), "cancel-w");
	for (;;) {
		for (int i = 0; i < 1000; i++) {
			void *p = malloc(100 + (size_t)(i % 50));
			sink = p;
			BARRIER();
			free(p);
			++*n;
		}
		pthread_testcancel();
	}
	return NULL;
}

static int cancel(int rounds)
{
	unsigned long long total = 0;
	for (int r = 0; r < rounds; r++) {
		pthread_t t[4];
		struct timespec pause = { 0, (r % 7) * 100000L };
		for (int i = 0; i < 4; i++) {
			made[i] = 0;
			if (pthread_create(&t[i], NULL, cancelled, &made[i]))
				return 1;
		}
		nanosleep(&pause, NULL);
		for (int i = 0; i < 4; i++)
			pthread_cancel(t[i]);
		for (int i = 0; i < 4; i++) {
			pthread_join(t[i], NULL);
			total += made[i];
		}
	}
	printf("cancelled %d threads after %llu pairs\n", rounds * 4, total);
	return 0;
}

int main(int argc, char **argv)
{
	pthread_t t[THREADS];
	if (argc == 3 && !strcmp(argv[1], "churn"))
		return churn(atoi(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "cancel"))
		return cancel(atoi(argv[2]));
	pthread_barrier_init(&all_allocated, NULL, THREADS);
	sink = malloc(4321); /* SITE:main_kept */
	for (long i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i))
			return 1;
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	if (write(1, "threads done\n", 13) != 13)
		return 1;
	return 0;
}
