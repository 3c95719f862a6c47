/*
 * Benchmark workload: compute-bound with rare allocations. ROUNDS rounds split
 * across THREADS worker threads; each round allocates one 4 KiB buffer, runs
 * WORK steps of integer hashing over it and frees it, so a tracker has almost
 * nothing to record and its overhead should vanish. Prints its counts
 * (bench/workload.h) for bench/run.py to check against the capture.
 */
#include "bench/workload.h"

#define BUF_WORDS 512

struct opts {
	uint64_t rounds, work;
	int threads;
};

__attribute__((noinline)) static uint64_t *get_buffer(void)
{
	uint64_t *b = malloc(BUF_WORDS * sizeof(*b));
	if (!b)
		exit(1);
	BARRIER();
	return b;
}

static void work(struct bench_worker *w)
{
	const struct opts *o = w->arg;
	uint64_t n = bench_share(o->rounds, o->threads, w->index);
	uint64_t state = 0x1234567 + (uint64_t)w->index;

	for (uint64_t i = 0; i < n; i++) {
		uint64_t *b = get_buffer();
		for (unsigned j = 0; j < BUF_WORDS; j++)
			b[j] = bench_next(&state);
		for (uint64_t k = 0; k < o->work; k++) {
			uint64_t *x = &b[k % BUF_WORDS];
			*x = (*x ^ (*x >> 29)) * 0xbf58476d1ce4e5b9ull + k;
		}
		for (unsigned j = 0; j < BUF_WORDS; j++)
			w->c.checksum += b[j];
		free(b);
		w->c.allocs++;
		w->c.bytes += BUF_WORDS * sizeof(*b);
		w->c.frees++;
	}
}

int main(int argc, char **argv)
{
	struct opts o = { .rounds = 1000, .work = 1000000, .threads = 1 };
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = argv[i + 1];
		if (a[0] != '-' || !a[1] || a[2] || !v)
			goto usage;
		i++;
		switch (a[1]) {
		case 'r': o.rounds = bench_number(argv[0], a, v); break;
		case 'w': o.work = bench_number(argv[0], a, v); break;
		case 't': o.threads = (int)bench_number(argv[0], a, v); break;
		default: goto usage;
		}
	}
	if (o.threads < 1 || o.threads > BENCH_MAX_THREADS)
		goto usage;
	return bench_run_threads(o.threads, work, &o);
usage:
	fprintf(stderr, "usage: alloc-light [-r ROUNDS] [-w WORK] [-t THREADS]\n");
	return 2;
}
