/*
 * Workload: 4 named threads ("worker-0".."worker-3"), each allocating 250
 * blocks of 64 bytes in worker_alloc, then freeing them; the main thread
 * allocates one block of 4321 bytes in main, kept. Each worker waits for the
 * others before freeing, so at the peak all 1000 blocks are live at once.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
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

int main(void)
{
	pthread_t t[THREADS];
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
