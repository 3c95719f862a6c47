/*
 * Shared by the benchmark workloads: a deterministic PRNG, worker threads
 * named "bench-<i>", and the per-thread counts each workload prints so that
 * bench/run.py can check the tracker saw exactly what the program did.
 * Header-only; every workload is one C file including it.
 */
#ifndef MEMPROF_BENCH_WORKLOAD_H
#define MEMPROF_BENCH_WORKLOAD_H

#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BENCH_MAX_THREADS 64
#define BARRIER() __asm__ volatile("" ::: "memory")

/* What one worker thread allocated and freed (bytes are the requested sizes). */
struct bench_counts {
	uint64_t allocs, bytes, frees, leaked_blocks, leaked_bytes;
	uint64_t checksum;
};

struct bench_worker {
	int index;
	int round; /* which of bench_run_rounds' rounds this thread runs */
	void (*fn)(struct bench_worker *w);
	const void *arg;
	struct bench_counts c;
};

/* splitmix64: a fast, well-mixed 64-bit generator; the state is the seed. */
static inline uint64_t bench_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Worker index's share of total units split across threads (the first ones take the remainder). */
static inline uint64_t bench_share(uint64_t total, int threads, int index)
{
	return total / (uint64_t)threads + ((uint64_t)index < total % (uint64_t)threads);
}

/* Everything printed goes through write(2), so stdio allocates nothing. */
static inline void bench_write(const char *s, size_t n)
{
	while (n) {
		ssize_t w = write(1, s, n);
		if (w <= 0)
			exit(3);
		s += w;
		n -= (size_t)w;
	}
}

static inline void *bench_thread_main(void *arg)
{
	struct bench_worker *w = arg;
	char name[16];
	snprintf(name, sizeof(name), "bench-%d", w->index);
	pthread_setname_np(pthread_self(), name);
	w->fn(w);
	return NULL;
}

/*
 * Run fn in n threads named bench-0 .. bench-<n-1> (even when n is 1, so
 * that every variant does its work off the main thread the same way), in
 * rounds: each round starts n new threads, under the same names, and waits
 * for them (rounds > 1 is a thread-per-task program). Then print one line
 * of counts per name, every round's summed, and a total line.
 */
static inline int bench_run_rounds(int n, int rounds, void (*fn)(struct bench_worker *),
				   const void *arg)
{
	static struct bench_worker w[BENCH_MAX_THREADS];
	pthread_t t[BENCH_MAX_THREADS];
	struct bench_counts total = { 0 };
	char line[256];
	int len;

	if (n < 1 || n > BENCH_MAX_THREADS || rounds < 1)
		return 2;
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < n; i++) {
			w[i].index = i;
			w[i].round = r;
			w[i].fn = fn;
			w[i].arg = arg;
			if (pthread_create(&t[i], NULL, bench_thread_main, &w[i]))
				return 1;
		}
		for (int i = 0; i < n; i++)
			pthread_join(t[i], NULL);
	}
	for (int i = 0; i <= n; i++) {
		const struct bench_counts *c = i < n ? &w[i].c : &total;
		char who[16];
		if (i < n)
			snprintf(who, sizeof(who), "bench-%d", i);
		else
			snprintf(who, sizeof(who), "total");
		len = snprintf(line, sizeof(line),
			       "%s allocs=%llu bytes=%llu frees=%llu leaked_blocks=%llu "
			       "leaked_bytes=%llu checksum=%016llx\n",
			       who, (unsigned long long)c->allocs, (unsigned long long)c->bytes,
			       (unsigned long long)c->frees, (unsigned long long)c->leaked_blocks,
			       (unsigned long long)c->leaked_bytes, (unsigned long long)c->checksum);
		bench_write(line, (size_t)len);
		if (i < n) {
			total.allocs += c->allocs;
			total.bytes += c->bytes;
			total.frees += c->frees;
			total.leaked_blocks += c->leaked_blocks;
			total.leaked_bytes += c->leaked_bytes;
			total.checksum ^= c->checksum;
		}
	}
	return 0;
}

static inline int bench_run_threads(int n, void (*fn)(struct bench_worker *), const void *arg)
{
	return bench_run_rounds(n, 1, fn, arg);
}

/* A non-negative integer option value, or exit with status 2. */
static inline unsigned long long bench_number(const char *prog, const char *opt, const char *s)
{
	char *end;
	unsigned long long v;
	if (!s || *s < '0' || *s > '9')
		goto bad;
	v = strtoull(s, &end, 10);
	if (*end)
		goto bad;
	return v;
bad:
	fprintf(stderr, "%s: option '%s' needs a number\n", prog, opt);
	exit(2);
}

#endif
