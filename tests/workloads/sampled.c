/*
 * Workload for sampled tracking (memprof run --sampling-interval): sites of
 * known totals, made of many small blocks (whose figures a sampled capture
 * estimates) and of large ones (which it records all, exactly), and the
 * frees, reallocations and unmappings whose matching must leave nothing
 * behind. Prints the true figures, one "name value" a line, with write(2)
 * only, so stdio allocates nothing. Every allocating function is its own
 * frame (noinline, a barrier after the call).
 *
 *   sampled [-a N] [-b N]    (defaults: 2000000 and 60000)
 *   sampled -t THREADS [-r ROUNDS] [-n N]   (defaults: 4 threads, 20 rounds of 20000)
 *
 *   site_small_a   N_a x malloc(48); every 10th kept (leaked), the others freed at once
 *   site_small_b   N_b x malloc(s), s cycling through 24, 100, 400, 1000, 3000;
 *                  all held, then freed once the large blocks are allocated
 *   site_large     8 x malloc(1 MiB), held with site_small_b's; 2 kept (leaked)
 *   site_realloc   N_a / 10 x malloc(16) -> realloc(64) -> realloc(256) -> free
 *   site_map       N_a / 500 x mmap(4096) then munmap; as many mmap(12288), the
 *                  middle page unmapped first, then the two others; as many
 *                  mmap(4096) -> mremap(8192, MAYMOVE) -> munmap
 *
 * With -t: THREADS threads ("xfer-0".."xfer-<n-1>") in ROUNDS rounds: each
 * allocates N blocks in site_xfer (sizes cycling through 32, 200, 3000 and
 * 70000 bytes), waits for the others, then frees the blocks the next thread
 * allocated, and waits again: every free is another thread's block, and
 * nothing is left.
 *
 *   sampled -k ROUNDS   every kind of allocation, ROUNDS times: malloc, calloc
 *                  (100 B and 1 MiB), realloc (grown through 7 sizes, moved or not),
 *                  reallocarray, posix_memalign (64), aligned_alloc (64), memalign
 *                  (32), valloc, pvalloc; each block checked (zeroed, contents kept
 *                  by realloc, aligned as asked; an alignment of 24 refused) and
 *                  freed: nothing is left. Exits
 *                  1 on a block that is not as the C library promises.
 *
 * The peak is reached when site_small_b's and site_large's blocks are all
 * live: site_small_a's kept, site_small_b's, site_large's and the arrays
 * that hold them (main's, callocs of 8 bytes a pointer).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define BARRIER() __asm__ volatile("" ::: "memory")

static const size_t b_sizes[5] = { 24, 100, 400, 1000, 3000 };

__attribute__((noinline)) static void *site_small_a(void)
{
	void *p = malloc(48); /* SITE:small_a */
	BARRIER();
	return p;
}

__attribute__((noinline)) static void *site_small_b(size_t n)
{
	void *p = malloc(n); /* SITE:small_b */
	BARRIER();
	return p;
}

__attribute__((noinline)) static void *site_large(void)
{
	void *p = malloc(1 << 20); /* SITE:large */
	BARRIER();
	return p;
}

__attribute__((noinline)) static void site_realloc(void)
{
	char *p = malloc(16); /* SITE:realloc */
	BARRIER();
	p = realloc(p, 64);
	BARRIER();
	p = realloc(p, 256);
	BARRIER();
	free(p);
}

__attribute__((noinline)) static void site_map(void)
{
	char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	BARRIER();
	if (p != MAP_FAILED)
		munmap(p, 4096);
	p = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	BARRIER();
	if (p != MAP_FAILED) {
		munmap(p + 4096, 4096);
		munmap(p, 4096);
		munmap(p + 2 * 4096, 4096);
	}
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	BARRIER();
	if (p != MAP_FAILED) {
		char *q = mremap(p, 4096, 8192, MREMAP_MAYMOVE);
		BARRIER();
		munmap(q != MAP_FAILED ? q : p, q != MAP_FAILED ? 8192 : 4096);
	}
}

static const size_t x_sizes[4] = { 32, 200, 3000, 70000 };

__attribute__((noinline)) static void *site_xfer(size_t n)
{
	char *p = malloc(n); /* SITE:xfer */
	BARRIER();
	if (p)
		p[n - 1] = 1; /* (not site_small_b's code: the compiler would make them one) */
	return p;
}

struct xfer {
	pthread_t t;
	unsigned index, threads;
	uint64_t rounds, n;
	void ***blocks;             /* by thread: its blocks of this round */
	pthread_barrier_t *barrier;
};

static void *xfer_main(void *arg)
{
	struct xfer *x = arg;
	char name[16] = "xfer-";
	name[5] = (char)('0' + x->index % 10);
	pthread_setname_np(pthread_self(), name);
	for (uint64_t r = 0; r < x->rounds; r++) {
		for (uint64_t i = 0; i < x->n; i++)
			x->blocks[x->index][i] = site_xfer(x_sizes[(i + x->index) % 4]);
		pthread_barrier_wait(x->barrier);
		for (uint64_t i = 0; i < x->n; i++)
			free(x->blocks[(x->index + 1) % x->threads][i]);
		pthread_barrier_wait(x->barrier);
	}
	return NULL;
}

static void say(const char *name, uint64_t v);

/* -t: blocks allocated by one thread, freed by another. */
static int transfers(unsigned threads, uint64_t rounds, uint64_t n)
{
	static struct xfer x[10];
	void **blocks[10];
	pthread_barrier_t barrier;
	uint64_t bytes = 0;
	if (threads < 2 || threads > 10)
		return 2;
	pthread_barrier_init(&barrier, NULL, threads);
	for (unsigned k = 0; k < threads; k++)
		if (!(blocks[k] = calloc(n, sizeof(void *))))
			return 1;
	for (unsigned k = 0; k < threads; k++) {
		x[k] = (struct xfer){ .index = k, .threads = threads, .rounds = rounds, .n = n,
				      .blocks = blocks, .barrier = &barrier };
		for (uint64_t i = 0; i < n; i++)
			bytes += x_sizes[(i + k) % 4] * rounds;
		pthread_create(&x[k].t, NULL, xfer_main, &x[k]);
	}
	for (unsigned k = 0; k < threads; k++)
		pthread_join(x[k].t, NULL);
	for (unsigned k = 0; k < threads; k++)
		free(blocks[k]);
	say("xfer_allocated", bytes);
	say("xfer_count", threads * rounds * n);
	return 0;
}

static int zeroed(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

static int aligned(const void *p, size_t a)
{
	return p && (uintptr_t)p % a == 0;
}

/* sampled -k: every kind, checked; 0, or 1 with the kind that failed. */
__attribute__((noinline)) static int kinds(uint64_t rounds)
{
	static const size_t grow[7] = { 10, 100, 1000, 5000, 70000, 300000, 2000000 };
	for (uint64_t r = 0; r < rounds; r++) {
		unsigned char *p = malloc(64), *c = calloc(10, 10), *big = calloc(1, 1 << 20), *q;
		void *a = NULL, *b = aligned_alloc(64, 128), *m = memalign(32, 256), *v = valloc(4096);
		void *pv = pvalloc(100), *ra = reallocarray(NULL, 10, 20);
		if (!p || !zeroed(c, 100) || !zeroed(big, 1 << 20) || !ra)
			return say("failed malloc-calloc", r), 1;
		void *bad = NULL;
		if (posix_memalign(&a, 64, 4096) || !aligned(a, 64) || !aligned(b, 64) || !aligned(m, 32) ||
		    !aligned(v, 4096) || !aligned(pv, 4096))
			return say("failed aligned", r), 1;
		/* An alignment that is not a power of two is refused, sampled or not. */
		if (posix_memalign(&bad, 24, 100) != EINVAL || bad)
			return say("failed bad-alignment", r), 1;
		memset(p, 0x5a, 64);
		q = NULL;
		for (int i = 0; i < 7; i++) {
			size_t was = i ? grow[i - 1] : 0;
			q = realloc(q, grow[i]);
			if (!q)
				return say("failed realloc", r), 1;
			for (size_t j = 0; j < was; j++)
				if (q[j] != (unsigned char)(j * 7 + was))
					return say("failed realloc-contents", r), 1;
			for (size_t j = 0; j < grow[i]; j++)
				q[j] = (unsigned char)(j * 7 + grow[i]);
		}
		free(p);
		free(c);
		free(big);
		free(q);
		free(a);
		free(b);
		free(m);
		free(v);
		free(pv);
		free(ra);
	}
	say("kinds", rounds);
	return 0;
}

static void say(const char *name, uint64_t v)
{
	char buf[64], num[24];
	size_t n = strlen(name), k = sizeof(num);
	do
		num[--k] = (char)('0' + v % 10);
	while (v /= 10);
	memcpy(buf, name, n);
	buf[n++] = ' ';
	memcpy(buf + n, num + k, sizeof(num) - k);
	n += sizeof(num) - k;
	buf[n++] = '\n';
	if (write(1, buf, n) < 0)
		_exit(2);
}

static uint64_t arg(int argc, char **argv, const char *opt, uint64_t dflt)
{
	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], opt))
			return strtoull(argv[i + 1], NULL, 10);
	return dflt;
}

int main(int argc, char **argv)
{
	uint64_t na = arg(argc, argv, "-a", 2000000), nb = arg(argc, argv, "-b", 60000);
	uint64_t b_bytes = 0, arrays;
	void **kept = calloc(na / 10 + 1, sizeof(void *));
	void **held = calloc(nb + 1, sizeof(void *));
	void *large[8];
	size_t nkept = 0;

	if (arg(argc, argv, "-k", 0)) {
		free(kept);
		free(held);
		return kinds(arg(argc, argv, "-k", 0));
	}
	if (arg(argc, argv, "-t", 0)) {
		free(kept);
		free(held);
		return transfers((unsigned)arg(argc, argv, "-t", 4), arg(argc, argv, "-r", 20),
				 arg(argc, argv, "-n", 20000));
	}
	if (!kept || !held)
		return 1;
	arrays = (na / 10 + 1 + nb + 1) * sizeof(void *);
	for (uint64_t i = 0; i < na; i++) {
		void *p = site_small_a();
		if (i % 10 == 0)
			kept[nkept++] = p;
		else
			free(p);
	}
	for (uint64_t i = 0; i < na / 10; i++)
		site_realloc();
	for (uint64_t i = 0; i < na / 500; i++)
		site_map();
	for (uint64_t i = 0; i < nb; i++) {
		held[i] = site_small_b(b_sizes[i % 5]);
		b_bytes += b_sizes[i % 5];
	}
	for (int i = 0; i < 8; i++)
		large[i] = site_large();
	/* The peak: everything above live at once. */
	for (uint64_t i = 0; i < nb; i++)
		free(held[i]);
	for (int i = 2; i < 8; i++)
		free(large[i]);
	free(held);
	free(kept);

	say("small_a_allocated", na * 48);
	say("small_a_count", na);
	say("small_a_leaked", nkept * 48);
	say("small_a_leaked_count", nkept);
	say("small_b_allocated", b_bytes);
	say("small_b_count", nb);
	say("large_allocated", 8u << 20);
	say("large_leaked", 2u << 20);
	say("realloc_allocated", na / 10 * (16 + 64 + 256));
	say("map_allocated", na / 500 * (4096 + 3 * 4096 + 4096 + 8192));
	say("arrays", arrays);
	say("peak", nkept * 48 + b_bytes + (8u << 20) + arrays);
	say("leaked", nkept * 48 + (2u << 20));
	return 0;
}
