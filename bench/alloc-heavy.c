/*
 * Benchmark workload: the allocation-heavy synthetic. PAIRS malloc/free pairs
 * (some leaked) split across THREADS worker threads, each allocation made
 * through a call stack 10 to 20 frames deep (recursion through four distinct
 * functions, the path picked from STACKS deterministic paths), sizes 8 B to
 * 64 KiB log-uniform (or 8 fixed sizes with --few-sizes). Every choice comes
 * from a seeded PRNG, so a run is reproducible and its counts are known: it
 * prints them (bench/workload.h) for bench/run.py to check against the capture.
 * With -r ROUNDS the work is done by ROUNDS successive sets of THREADS
 * short-lived threads (a thread-per-task program), each with its share of
 * the pairs and its own slot array.
 */
#include "bench/workload.h"

#if defined(__clang__)
#define STEP __attribute__((noinline))
#else
#define STEP __attribute__((noipa)) /* no inlining, cloning or identical-code folding */
#endif

/*
 * Recursion levels (step functions) per allocation: with leaf_alloc, work,
 * bench_thread_main, start_thread and __clone3 the stack is 10..20 frames.
 */
#define LEVELS_MIN 5
#define LEVELS_MAX 15

struct opts {
	uint64_t pairs, seed, stacks, live, leak_permille;
	int threads, rounds, few_sizes;
};

static const size_t few_sizes[8] = { 8, 32, 128, 512, 2048, 8192, 32768, 65536 };

typedef void *(*step_fn)(uint64_t path, int left, size_t size);
static void *step0(uint64_t path, int left, size_t size);
static void *step1(uint64_t path, int left, size_t size);
static void *step2(uint64_t path, int left, size_t size);
static void *step3(uint64_t path, int left, size_t size);
static step_fn const steps[4] = { step0, step1, step2, step3 };

STEP static void *leaf_alloc(size_t size)
{
	char *p = malloc(size);
	if (!p)
		exit(1);
	p[0] = (char)size;
	return p;
}

/*
 * Each step consumes two bits of the path to choose the next; the bodies
 * differ (the xor), so the compiler cannot fold them into one function.
 */
#define DEFINE_STEP(n)                                                          \
	STEP static void *step##n(uint64_t path, int left, size_t size)         \
	{                                                                       \
		void *p = left ? steps[(path ^ n) & 3](path >> 2, left - 1, size) \
			       : leaf_alloc(size);                              \
		BARRIER();                                                      \
		return p;                                                       \
	}
DEFINE_STEP(0)
DEFINE_STEP(1)
DEFINE_STEP(2)
DEFINE_STEP(3)

static size_t pick_size(const struct opts *o, uint64_t r)
{
	if (o->few_sizes)
		return few_sizes[r & 7];
	/* An octave 8<<k (k = 0..12), then uniform inside it: 8 .. 65535 bytes, log-uniform. */
	unsigned k = (unsigned)(r % 13);
	return ((size_t)8 << k) + (size_t)((r >> 8) % ((uint64_t)8 << k));
}

static void work(struct bench_worker *w)
{
	const struct opts *o = w->arg;
	uint64_t n = bench_share(bench_share(o->pairs, o->threads, w->index), o->rounds, w->round);
	uint64_t live = o->live / (uint64_t)o->threads;
	/* Round 0's stream is the one a run without -r has. */
	uint64_t rng = o->seed * 0x100000001b3ull + (uint64_t)w->index + ((uint64_t)w->round << 32);
	char **slot;

	if (!live)
		live = 1;
	/* The slot array is this thread's allocation too, and is counted. */
	slot = calloc(live, sizeof(*slot));
	if (!slot)
		exit(1);
	w->c.allocs++;
	w->c.bytes += live * sizeof(*slot);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t r = bench_next(&rng), r2 = bench_next(&rng);
		uint64_t stack = r % o->stacks, path = stack;
		size_t size = pick_size(o, r >> 16);
		int levels = LEVELS_MIN + (int)(bench_next(&path) % (LEVELS_MAX - LEVELS_MIN + 1));
		char *p = steps[path & 3](path >> 2, levels - 1, size);

		p[size - 1] = 1;
		w->c.allocs++;
		w->c.bytes += size;
		w->c.checksum += (uint64_t)size * (stack + 1);
		if ((r2 >> 32) % 1000 < o->leak_permille) {
			w->c.leaked_blocks++;
			w->c.leaked_bytes += size;
			continue;
		}
		uint64_t s = r2 % live;
		if (slot[s]) {
			free(slot[s]);
			w->c.frees++;
		}
		slot[s] = p;
	}
	for (uint64_t s = 0; s < live; s++)
		if (slot[s]) {
			free(slot[s]);
			w->c.frees++;
		}
	free(slot);
	w->c.frees++;
}

static void usage(void)
{
	fprintf(stderr, "usage: alloc-heavy [-n PAIRS] [-t THREADS] [-r ROUNDS] [-s SEED] [-d STACKS]\n"
			"                   [-k LIVE] [-l LEAK_PER_MILLE] [--few-sizes]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct opts o = { .pairs = 5000000, .seed = 1, .stacks = 4096, .live = 1024,
			  .leak_permille = 1, .threads = 1, .rounds = 1 };
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = argv[i + 1];
		if (!strcmp(a, "--few-sizes")) {
			o.few_sizes = 1;
			continue;
		}
		if (a[0] != '-' || !a[1] || a[2] || !v)
			usage();
		i++;
		switch (a[1]) {
		case 'n': o.pairs = bench_number(argv[0], a, v); break;
		case 't': o.threads = (int)bench_number(argv[0], a, v); break;
		case 'r': o.rounds = (int)bench_number(argv[0], a, v); break;
		case 's': o.seed = bench_number(argv[0], a, v); break;
		case 'd': o.stacks = bench_number(argv[0], a, v); break;
		case 'k': o.live = bench_number(argv[0], a, v); break;
		case 'l': o.leak_permille = bench_number(argv[0], a, v); break;
		default: usage();
		}
	}
	if (!o.stacks || o.leak_permille > 1000 || o.threads < 1 || o.threads > BENCH_MAX_THREADS ||
	    o.rounds < 1 || o.rounds > 1000000)
		usage();
	return bench_run_rounds(o.threads, o.rounds, work, &o);
}
