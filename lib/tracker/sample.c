/*
 * Sampled tracking (sample.h): each thread's countdown to its next sample
 * and its generator, and the process's set of the blocks and mappings
 * recorded, whose frees are recorded too.
 */
#include <config.h>

#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lib/tracker/sample.h"

struct mp_sample_conf mp_sample __attribute__((aligned(64)));
__thread struct mp_sample_thread mp_sample_tls;

/* The interval of the stream begun, and its seed, for the threads that draw a first count. */
static unsigned next_interval;
static uint64_t seed_base;
static uint32_t threads_seeded;
/* The process whose first stream set the seed: a forked child mixes in its own pid. */
static pid_t seeded_pid;

/* ---- the generator ---- */

/* splitmix64: a step of the state, and its output. */
static uint64_t next_random(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/*
 * The natural logarithm of x > 0 (no libm in the tracker): x = m 2^e with
 * m in [1/sqrt 2, sqrt 2), ln m = 2 atanh z, z = (m - 1)/(m + 1), |z| < 0.172,
 * whose series to z^11 is within 2e-11.
 */
static double ln(double x)
{
	union {
		double d;
		uint64_t u;
	} v = { x };
	int e = (int)((v.u >> 52) & 0x7ff) - 1023;
	double m, z, z2;
	v.u = (v.u & 0xfffffffffffffull) | 0x3ff0000000000000ull;
	m = v.d;
	if (m > 1.4142135623730951) {
		m *= 0.5;
		e++;
	}
	z = (m - 1) / (m + 1);
	z2 = z * z;
	return z * (2 + z2 * (2.0 / 3 + z2 * (2.0 / 5 + z2 * (2.0 / 7 + z2 * (2.0 / 9 + z2 * (2.0 / 11)))))) +
	       e * 0.6931471805599453;
}

/*
 * A count: an exponential of mean 1 in units of 2^-48 (an interval's
 * 2^48th part). An allocation of s bytes that takes (s + 1) 2^48 / N off a
 * count c is hit when c <= that, with probability 1 - e^(-(s+1)/N), and
 * what is left after a miss is again such a count (the exponential has no
 * memory).
 */
static int64_t draw(struct mp_sample_thread *s)
{
	/* A uniform in (0, 1]: 53 random bits, plus one. */
	double u = (double)((next_random(&s->rng) >> 11) + 1) * 0x1p-53;
	return (int64_t)(-ln(u) * 0x1p48) + 1;
}

int mp_sample_hit(size_t size)
{
	struct mp_sample_thread *s = &mp_sample_tls;
	if (unlikely(!s->seeded)) {
		/* The thread's first count, from a generator of its own. */
		uint64_t n = __atomic_fetch_add(&threads_seeded, 1, __ATOMIC_RELAXED);
		s->rng = seed_base ^ (n * 0xd6e8feb86659fd93ull);
		(void)next_random(&s->rng);
		s->seeded = 1;
		s->left = draw(s) - (int64_t)(((uint64_t)size + 1) * mp_sample.scale);
		if (s->left > 0)
			return 0;
	}
	s->left = draw(s);
	return 1;
}

/* ---- where a sampled block is ---- */

void *mp_sample_malloc(size_t size)
{
	return mp_real.memalign(MP_SAMPLE_PAGE, size);
}

int mp_sample_move(void **p, size_t size, size_t keep, int zero)
{
	void *q = mp_real.memalign(MP_SAMPLE_PAGE, size);
	if (!q)
		return 0;
	if (zero)
		memset(q, 0, size);
	else if (keep)
		memcpy(q, *p, keep < size ? keep : size);
	mp_real.free(*p);
	*p = q;
	return 1;
}

/* ---- the set of blocks recorded ---- */

/* Under it: inserting, taking out, growing, the overflow and the mappings. */
static int set_lock;
/* The first table: 64 buckets, never freed (nor are later ones: readers may still be in them). */
static uint64_t first_cells[64 * MP_SAMPLE_CELLS] __attribute__((aligned(64)));
static uint64_t first_bits[(64 << MP_SAMPLE_BITS_LOG) / 64] __attribute__((aligned(64)));
static struct mp_sample_table first_table = { first_bits, first_cells, 32 - 6 - MP_SAMPLE_BITS_LOG, 0 };
struct mp_sample_table *mp_sample_table = &first_table;
static uint64_t live;                     /* addresses in the table and the overflow */
/* Addresses whose bucket was full and the table could not grow. */
static uint64_t *ovf;
static size_t novf, ovf_cap;

static size_t buckets(const struct mp_sample_table *t)
{
	return (size_t)1 << (32 - t->shift - MP_SAMPLE_BITS_LOG);
}

/* The word of mp_sample.bitmap for t. */
static uint64_t bitmap_word(const struct mp_sample_table *t)
{
	return (uint64_t)(uintptr_t)t->bits | t->shift;
}

static uint64_t *bucket_of(const struct mp_sample_table *t, uint64_t h)
{
	return t->cells + (h >> MP_SAMPLE_BITS_LOG) * MP_SAMPLE_CELLS;
}

static void set_bit(struct mp_sample_table *t, uint64_t h)
{
	__atomic_or_fetch(&t->bits[h >> 6], 1ull << (h & 63), __ATOMIC_RELEASE);
}

/* Clear h's bit unless another address of the set has that hash (its bucket's, or apart). */
static void clear_bit(struct mp_sample_table *t, uint64_t h)
{
	const uint64_t *c = bucket_of(t, h);
	for (int i = 0; i < MP_SAMPLE_CELLS; i++)
		if (c[i] && mp_sample_hash(t, c[i]) == h)
			return;
	for (size_t i = 0; i < novf; i++)
		if (mp_sample_hash(t, ovf[i]) == h)
			return;
	__atomic_and_fetch(&t->bits[h >> 6], ~(1ull << (h & 63)), __ATOMIC_RELAXED);
}

/* Put addr in its bucket of t: 1 (or already there), 0 when the bucket is full. */
static int put(struct mp_sample_table *t, uint64_t addr)
{
	uint64_t h = mp_sample_hash(t, addr), *c = bucket_of(t, h), *empty = NULL;
	for (int i = 0; i < MP_SAMPLE_CELLS; i++) {
		if (c[i] == addr)
			return 1;
		if (!c[i] && !empty)
			empty = &c[i];
	}
	if (!empty)
		return 0;
	__atomic_store_n(empty, addr, __ATOMIC_RELAXED);
	set_bit(t, h);
	live++;
	return 1;
}

/* Keep addr apart (its bucket full), its bit set. */
static void overflow_put(struct mp_sample_table *t, uint64_t addr)
{
	for (size_t i = 0; i < novf; i++)
		if (ovf[i] == addr)
			return;
	if (mp_pages_grow((void **)&ovf, &ovf_cap, novf + 1, sizeof(*ovf), 512))
		return; /* (no memory at all: its free goes unrecorded) */
	ovf[novf++] = addr;
	live++;
	__atomic_store_n(&t->overflow, (uint32_t)novf, __ATOMIC_RELAXED);
	set_bit(t, mp_sample_hash(t, addr));
}

/*
 * A table of twice the buckets with every address of the current one (and
 * of the overflow, where they fit now), published. The old one stays as it
 * is: a reader still in it finds what it looked for there (a free's block
 * was put in before the program could free it), or a stale hit, which the
 * check under the lock puts right. 0, or -1 without memory.
 */
static int grow(void)
{
	struct mp_sample_table *old = mp_sample_table, *t;
	size_t n = buckets(old) * 2;
	size_t nbits = n << MP_SAMPLE_BITS_LOG, cells = n * MP_SAMPLE_CELLS * sizeof(uint64_t);
	size_t nold = novf, keep = 0;
	char *mem = mp_pages(64 + nbits / 8 + cells);
	if (!mem)
		return -1;
	t = (struct mp_sample_table *)mem;
	t->bits = (uint64_t *)(mem + 64);
	t->cells = (uint64_t *)(mem + 64 + nbits / 8);
	t->shift = old->shift - 1;
	live = 0;
	/*
	 * A bucket's addresses go to two of twice as many buckets (the top bits
	 * of their hash, one more), so they all fit.
	 */
	for (size_t i = 0; i < buckets(old) * MP_SAMPLE_CELLS; i++)
		if (old->cells[i])
			put(t, old->cells[i]);
	/* The overflow's where they fit now; the others kept apart still. */
	novf = 0;
	for (size_t i = 0; i < nold; i++) {
		if (!put(t, ovf[i])) {
			ovf[keep++] = ovf[i];
			set_bit(t, mp_sample_hash(t, ovf[i]));
		}
	}
	novf = keep;
	live += keep;
	t->overflow = (uint32_t)novf;
	__atomic_store_n(&mp_sample_table, t, __ATOMIC_RELEASE);
	__atomic_store_n(&mp_sample.bitmap, bitmap_word(t), __ATOMIC_RELEASE);
	return 0;
}

void mp_sample_add(uint64_t addr)
{
	mp_lock(&set_lock);
	/* Two addresses a bucket on average: one bit in 64 set, full buckets rare. */
	if (live + 1 > buckets(mp_sample_table) * 2)
		grow();
	if (!put(mp_sample_table, addr)) {
		/* A full bucket: a bigger table, unless it is big for what it holds already. */
		if (buckets(mp_sample_table) >= 4 * live + 64 || grow() || !put(mp_sample_table, addr))
			overflow_put(mp_sample_table, addr);
	}
	mp_unlock(&set_lock);
}

int mp_sample_take(uint64_t addr)
{
	struct mp_sample_table *t = __atomic_load_n(&mp_sample_table, __ATOMIC_ACQUIRE);
	uint64_t h = mp_sample_hash(t, addr), *c = bucket_of(t, h);
	int found = 0;
	/* Most set bits are another address's: a look at the bucket, without the lock. */
	for (int i = 0; i < MP_SAMPLE_CELLS; i++)
		found |= __atomic_load_n(&c[i], __ATOMIC_RELAXED) == addr;
	if (!found && !__atomic_load_n(&t->overflow, __ATOMIC_RELAXED))
		return 0;
	found = 0;
	mp_lock(&set_lock);
	t = mp_sample_table;
	h = mp_sample_hash(t, addr);
	c = bucket_of(t, h);
	for (int i = 0; i < MP_SAMPLE_CELLS && !found; i++) {
		if (c[i] == addr) {
			__atomic_store_n(&c[i], 0, __ATOMIC_RELAXED);
			found = 1;
		}
	}
	for (size_t i = 0; i < novf && !found; i++) {
		if (ovf[i] == addr) {
			ovf[i] = ovf[--novf];
			__atomic_store_n(&t->overflow, (uint32_t)novf, __ATOMIC_RELAXED);
			found = 1;
		}
	}
	if (found) {
		live--;
		clear_bit(t, h);
	}
	mp_unlock(&set_lock);
	return found;
}

/* ---- mappings recorded: ranges of pages, sorted, apart ---- */

struct range {
	uint64_t lo, hi;
};
static struct range *ranges;
static size_t nranges, ranges_cap;

/* The first range that ends after addr. */
static size_t range_after(uint64_t addr)
{
	size_t lo = 0, hi = nranges;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (ranges[mid].hi <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Cut [lo, hi) out of the ranges (under the lock): whether any was there. */
static int cut(uint64_t lo, uint64_t hi)
{
	size_t i = range_after(lo);
	int hit = 0;
	while (i < nranges && ranges[i].lo < hi) {
		struct range r = ranges[i];
		hit = 1;
		if (r.lo < lo && r.hi > hi) {
			/* Split in two: one more range. */
			if (mp_pages_grow((void **)&ranges, &ranges_cap, nranges + 1, sizeof(*ranges), 256)) {
				ranges[i].hi = lo; /* (no memory: the rest is forgotten) */
				return hit;
			}
			memmove(&ranges[i + 1], &ranges[i], (nranges - i) * sizeof(*ranges));
			__atomic_store_n(&nranges, nranges + 1, __ATOMIC_RELAXED);
			ranges[i].hi = lo;
			ranges[i + 1].lo = hi;
			return hit;
		}
		if (r.lo < lo) {
			ranges[i++].hi = lo;
		} else if (r.hi > hi) {
			ranges[i].lo = hi;
			return hit;
		} else {
			memmove(&ranges[i], &ranges[i + 1], (nranges - i - 1) * sizeof(*ranges));
			__atomic_store_n(&nranges, nranges - 1, __ATOMIC_RELAXED);
		}
	}
	return hit;
}

void mp_sample_add_range(uint64_t addr, uint64_t len)
{
	uint64_t hi = addr + len < addr ? UINT64_MAX : addr + len;
	size_t i;
	if (!len)
		return;
	mp_lock(&set_lock);
	cut(addr, hi);
	if (!mp_pages_grow((void **)&ranges, &ranges_cap, nranges + 1, sizeof(*ranges), 256)) {
		i = range_after(addr);
		memmove(&ranges[i + 1], &ranges[i], (nranges - i) * sizeof(*ranges));
		ranges[i] = (struct range){ addr, hi };
		__atomic_store_n(&nranges, nranges + 1, __ATOMIC_RELEASE);
	}
	mp_unlock(&set_lock);
}

int mp_sample_take_range(uint64_t addr, uint64_t len)
{
	int hit;
	if (!len || !__atomic_load_n(&nranges, __ATOMIC_ACQUIRE))
		return 0;
	mp_lock(&set_lock);
	hit = cut(addr, addr + len < addr ? UINT64_MAX : addr + len);
	mp_unlock(&set_lock);
	return hit;
}

/* ---- streams and forks ---- */

static uint64_t fresh_seed(void)
{
	uint64_t v = 0;
	struct timespec ts;
	if (syscall(SYS_getrandom, &v, sizeof(v), 1 /* GRND_NONBLOCK */) == (long)sizeof(v) && v)
		return v;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ ((uint64_t)getpid() << 40);
}

void mp_sample_begin(unsigned interval, unsigned seed)
{
	struct mp_sample_table *t;
	pid_t pid = getpid();
	mp_lock(&set_lock);
	if (!seeded_pid)
		seeded_pid = pid;
	/*
	 * A seed repeats a process's samples; a forked child's differ from its
	 * parent's. It is mixed: splitmix64 from seed * its constant would be
	 * the sequence of seed - 1 moved on by one draw (seeds 1, 2, 3 would
	 * give one sample, shifted).
	 */
	if (seed) {
		uint64_t state = seed;
		seed_base = next_random(&state);
	} else {
		seed_base = fresh_seed();
	}
	if (pid != seeded_pid) {
		seed_base ^= (uint64_t)pid * 0xbf58476d1ce4e5b9ull;
		/* (Its one thread is the parent's copy: a generator of its own too.) */
		mp_sample_tls.seeded = 0;
	}
	__atomic_store_n(&threads_seeded, 0, __ATOMIC_RELAXED);
	/* The blocks of an earlier stream are not this one's. */
	t = mp_sample_table;
	memset(t->cells, 0, buckets(t) * MP_SAMPLE_CELLS * sizeof(uint64_t));
	memset(t->bits, 0, (buckets(t) << MP_SAMPLE_BITS_LOG) / 8);
	novf = 0;
	t->overflow = 0;
	live = 0;
	__atomic_store_n(&nranges, 0, __ATOMIC_RELAXED);
	next_interval = interval;
	__atomic_store_n(&mp_sample.bitmap, bitmap_word(t), __ATOMIC_RELEASE);
	mp_unlock(&set_lock);
}

unsigned mp_sample_begun(void)
{
	return next_interval;
}

void mp_sample_start(void)
{
	mp_sample.scale = next_interval ? ((uint64_t)1 << MP_SAMPLE_UNIT_BITS) / next_interval : 0;
	__atomic_store_n(&mp_sample.interval, (uint64_t)next_interval, __ATOMIC_RELEASE);
}

void mp_sample_stop(void)
{
	__atomic_store_n(&mp_sample.interval, 0, __ATOMIC_RELEASE);
}

void mp_sample_lock(void)
{
	mp_lock(&set_lock);
}

void mp_sample_unlock(void)
{
	mp_unlock(&set_lock);
}

void mp_sample_forked(void)
{
	set_lock = 0;
}
