/*
 * A stack walker for x86_64 from DWARF call-frame information (.eh_frame via
 * .eh_frame_hdr), with a per-thread cache of frame descriptors and
 * incremental walks. libunwind's unw_backtrace takes ~130 ns for a 15-frame
 * stack; allocation-heavy programs make millions of them, so this walker
 * caches what each instruction pointer's frame looks like and, because a
 * thread allocating in a loop keeps most of its stack, stops as soon as it
 * reaches a frame of its previous walk whose older frames it can prove
 * unchanged.
 *
 * Why the proof holds: walking on from a frame needs its CFA, its return
 * address and, if some older frame computes its CFA from rbp before a saved
 * value replaces it, the incoming rbp; everything older is then a function of
 * the memory words the walk reads (return-address slots, saved-rbp slots)
 * and of the code (the descriptors of the return addresses). If the frame
 * matches the previous walk's frame at the same CFA in those respects, and
 * every slot read by the previous walk above it holds the same value, the
 * older frames are the same. Code changes (dlclose) reset every cache.
 *
 * Two more shortcuts, both checked before use: where the last walk from the
 * same stack pointer found its frames (struct shape) lets the reads of
 * consecutive frames overlap; and a stack whose return-address slots hold
 * the words they held when it was last walked is that stack again (struct
 * known), so its leaf node is known without a walk.
 *
 * Frames are read only inside the thread's stack bounds; anything unusual
 * returns -1 and the caller uses libunwind for that event.
 */
#include <config.h>
#include "lib/tracker/unwind.h"

#include <pthread.h>
#include <stddef.h>
#include <string.h>

#include "lib/tracker/cfi.h"

#if defined(__x86_64__)

#define DCACHE_MIN 2048             /* descriptors per thread at first (32 KiB), */
#define DCACHE_MAX 16384            /* at most, doubling while misses thrash it */
#define DWAYS 4                     /* ways per set: a set is one cache line */
#define MAXF (1024 + 16 + 1)        /* frames kept from the previous walk */
#define SHAPES 64                   /* stack shapes per thread, a power of two */
#define SHAPE_MAX 48                /* frames per shape */
#define KNOWN_MIN 256               /* known stacks per thread at first (a page), */
#define KNOWN_MAX 8192              /* at most, doubling while learning thrashes it */
#define KWAYS 4                     /* per set: a set is one cache line */



/* flags: the descriptor's MP_CFI_CFA_RBP and MP_CFI_RBP_SAVED; needs_rbp: the walk from
   this frame outwards reads the incoming rbp. */
#define frame mp_uframe

/*
 * Where the frames were, the last time a walk started at this stack pointer:
 * each frame's CFA less the stack pointer. A walk from there predicts that
 * its frames are at the same places (the same call depth mostly has the same
 * frame sizes, whichever functions are on it) and reads each frame's return
 * address at the predicted place instead of where the previous frame's
 * descriptor puts it, so the reads and descriptor lookups of consecutive
 * frames no longer wait for each other. Every frame's CFA is still computed
 * and must equal the prediction for it to be used: a shape is a guess
 * about timing, never about results.
 */
struct shape {
	uint64_t rsp;   /* 0: empty */
	uint32_t n;
	uint32_t whole; /* the walk was all of the stack (see known_ok) */
	uint32_t off[SHAPE_MAX];
	uint64_t salt[SHAPE_MAX]; /* each place's own in a fingerprint */
};

/*
 * Known stacks: a walk from a stack pointer is a function of the words it
 * reads, the return-address slots, when no frame finds its CFA from rbp and
 * the walk ends at an outermost frame. So the fingerprint of the words in
 * the slots where a shape says frames are, with the stack pointer, the
 * shape's places, the code's generation and the caller's seed, identifies
 * the walk and its leaf node: such a stack costs a read per frame.
 */
struct known {
	uint64_t h0;
	uint32_t h1;
	uint32_t node;  /* 0: empty */
};

struct mp_unwinder {
	struct mp_cfi_desc *cache;  /* dsize descriptors, in sets of DWAYS (page-aligned) */
	uint32_t dsize;
	uint32_t dmisses;           /* descriptor misses since the cache last grew */
	struct shape shapes[SHAPES];
	uint64_t code_gen;
	uint64_t stack_lo, stack_hi;
	int nprev;
	int truncated;              /* the previous walk stopped at limit frames */
	int limit;                  /* frames a walk keeps, at most MAXF */
	int cur;                    /* which of buf holds the previous walk */
	int zero_end;               /* the previous walk ended at a zero return address */
	int fp_ok;                  /* fp is the last walk's fingerprint (mp_unwind_learn) */
	uint64_t fp0;
	uint32_t fp1;
	uint32_t pend_fp1;          /* the fingerprint MP_UNWIND_DEFER left to check, */
	uint64_t pend_fp0;
	uint64_t pend_w1;           /* and the word at its place 1 */
	struct known *known;        /* known_size entries, in sets of KWAYS */
	uint32_t known_size;
	uint32_t learned;           /* stacks learned since known last grew */
	/* The previous walk and this one, innermost frame first: a walk writes each
	   new frame once and copies only the older frames it reuses. */
	struct frame buf[2][MAXF];
	struct mp_unwind_stats stats;
};

static volatile uint64_t code_gen = 1;

void mp_unwind_code_changed(void)
{
	__atomic_add_fetch(&code_gen, 1, __ATOMIC_RELEASE);
}

/* The calling thread's stack, whose bounds stop a walk. */
static int thread_stack(uint64_t *lo, uint64_t *hi)
{
	pthread_attr_t attr;
	void *addr;
	size_t size;
	int r;
	/* It allocates, and reads /proc for the main thread: not to be left by a handler. */
	mp_sig_block();
	r = pthread_getattr_np(pthread_self(), &attr);
	if (!r) {
		r = pthread_attr_getstack(&attr, &addr, &size);
		pthread_attr_destroy(&attr);
	}
	mp_sig_unblock();
	if (r)
		return -1;
	*lo = (uint64_t)addr;
	*hi = (uint64_t)addr + size;
	return 0;
}

struct mp_unwinder *mp_unwinder_new(void)
{
	struct mp_unwinder *u;
	uint64_t lo, hi;
	if (thread_stack(&lo, &hi))
		return NULL;
	u = mp_pages(sizeof(*u));
	if (!u)
		return NULL;
	u->known_size = KNOWN_MIN;
	u->known = mp_pages(KNOWN_MIN * sizeof(*u->known));
	u->dsize = DCACHE_MIN;
	u->cache = mp_pages(DCACHE_MIN * sizeof(*u->cache));
	if (!u->known || !u->cache) {
		if (u->known)
			mp_pages_free(u->known, KNOWN_MIN * sizeof(*u->known));
		if (u->cache)
			mp_pages_free(u->cache, DCACHE_MIN * sizeof(*u->cache));
		mp_pages_free(u, sizeof(*u));
		return NULL;
	}
	u->stack_lo = lo;
	u->stack_hi = hi;
	u->limit = MAXF;
	u->code_gen = __atomic_load_n(&code_gen, __ATOMIC_ACQUIRE);
	return u;
}

/*
 * A thread that took over an ended thread's state. What is the stack's own
 * goes: the shapes (their places were read on another stack, maybe a larger
 * one) and the previous walk. The descriptors stay, and so do the known
 * stacks: an entry is the fingerprint of a shape's words, and this thread's
 * shapes come from its own walks, so a match is the same walk on memory of
 * this stack. Keeping the memory spares a thread-per-task program two
 * mappings, two unmappings and the page faults of fresh pages per thread,
 * each a TLB shootdown across its threads.
 */
int mp_unwinder_reuse(struct mp_unwinder *u)
{
	uint64_t lo, hi;
	if (thread_stack(&lo, &hi))
		return -1;
	memset(u->shapes, 0, sizeof(u->shapes));
	u->stack_lo = lo;
	u->stack_hi = hi;
	u->nprev = u->truncated = u->cur = u->zero_end = u->fp_ok = 0;
	u->learned = 0;
	memset(&u->stats, 0, sizeof(u->stats));
	return 0;
}

void mp_unwinder_free(struct mp_unwinder *u)
{
	mp_pages_free(u->cache, u->dsize * sizeof(*u->cache));
	mp_pages_free(u->known, u->known_size * sizeof(*u->known));
	mp_pages_free(u, sizeof(*u));
}

void mp_unwind_get_stats(struct mp_unwinder *u, struct mp_unwind_stats *st)
{
	*st = u->stats;
}

/* The set of ip in a cache of size descriptors. */
static inline struct mp_cfi_desc *dcache_set(struct mp_cfi_desc *cache, uint32_t size, uint64_t ip)
{
	/* Fold the address: cheaper than a multiplication on the walk's critical path. */
	return &cache[((ip ^ (ip >> 11)) * DWAYS) & (size - DWAYS)];
}

/*
 * A thread whose code is larger than its cache (cc1 returns to some 20,000
 * places: at 2,048 descriptors, one allocation in eleven made the CFI
 * reader look an address up again) gets a cache twice the size once it has
 * missed twice as many times as the cache holds, up to DCACHE_MAX (256 KiB),
 * with what the old one held. At the start of a walk, which holds no
 * descriptor yet.
 */
static void dcache_grow(struct mp_unwinder *u)
{
	struct mp_cfi_desc *old = u->cache, *n;
	uint32_t old_size = u->dsize, size = 2 * old_size;
	u->dmisses = 0;
	n = mp_pages(size * sizeof(*n));
	if (!n)
		return;
	for (uint32_t i = 0; i < old_size; i++) {
		struct mp_cfi_desc *set = dcache_set(n, size, old[i].ip);
		for (int w = 0; old[i].ip && w < DWAYS; w++)
			if (!set[w].ip) {
				set[w] = old[i];
				break;
			}
	}
	u->cache = n;
	u->dsize = size;
	mp_pages_free(old, old_size * sizeof(*old));
}

/*
 * The descriptor of ip, from a 4-way set-associative cache: a miss costs a
 * walk of the loaded objects and a CFI program, so two hot addresses must
 * not evict each other (a direct-mapped cache did, whenever code moved).
 */
static inline const struct mp_cfi_desc *lookup(struct mp_unwinder *u, uint64_t ip)
{
	struct mp_cfi_desc *set = dcache_set(u->cache, u->dsize, ip);
	struct mp_cfi_desc *d, fresh;
	if (__builtin_expect(set[0].ip == ip, 1))
		return &set[0];
	for (int w = 1; w < DWAYS; w++)
		if (set[w].ip == ip) {
			/* Move it forward: the hottest address is found at the first compare. */
			struct mp_cfi_desc hit = set[w];
			memmove(&set[1], &set[0], (size_t)w * sizeof(*set));
			set[0] = hit;
			return &set[0];
		}
	u->stats.descriptor_misses++;
	u->dmisses++;
	memmove(&set[1], &set[0], (DWAYS - 1) * sizeof(*set));
	d = &set[0];
	d->ip = 0;
	/*
	 * Made aside and valid last, in a critical section: the loader's lock is
	 * taken (dl_iterate_phdr), and a handler that never returned would
	 * leave it held, or a descriptor half written (mp_unwinder_recover).
	 */
	memset(&fresh, 0, sizeof(fresh));
	mp_cs_enter();
	mp_cfi_describe(ip, &fresh);
	mp_cs_leave();
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	d->cfa_off = fresh.cfa_off;
	d->rbp_off = fresh.rbp_off;
	d->ra_off = fresh.ra_off;
	d->flags = fresh.flags;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	d->ip = fresh.ip;
	return d;
}

/*
 * From which frame on the previous walk (innermost first) can be reused: the
 * smallest index i such that every frame older than prev[i] still has in
 * its slots what the walk read there (return address; saved rbp, where an
 * older frame reads it). A walk may stop at prev[j] for any j >= i whose own
 * CFA, return address and rbp it finds again. Checked from the outermost
 * frame inwards, with independent loads, before the walk: the walk then
 * makes no guesses (which mispredict) about frames that cannot match.
 */
static int reusable_from(struct frame *prev, int nprev)
{
	uint8_t older = 0; /* the walk from frame k + 1 outwards reads the incoming rbp */
	int k;
	for (k = nprev - 1; k >= 0; k--) {
		struct frame *f = &prev[k];
		uint8_t outer = older;
		/* needs_rbp, which the walk's match at frame k reads, is found on the way. */
		older = (f->flags & MP_CFI_CFA_RBP) || (!(f->flags & MP_CFI_RBP_SAVED) && older);
		f->needs_rbp = older;
		if (k == 0 || *(const uint64_t *)(f->cfa - 8) != f->ra)
			break;
		/* A saved rbp matters only to an older frame that reads it. */
		if (f->rbp_slot && outer && *(const uint64_t *)f->rbp_slot != f->rbp_val)
			break;
	}
	return k;
}

void mp_unwind_forget(struct mp_unwinder *u)
{
	u->nprev = 0;
}

void mp_unwind_set_limit(struct mp_unwinder *u, int limit)
{
	if (limit <= 0 || limit > MAXF)
		limit = MAXF;
	if (limit != u->limit) {
		u->limit = limit;
		u->nprev = 0; /* a walk kept to another limit */
	}
}

void mp_unwinder_recover(struct mp_unwinder *u)
{
	/* (The descriptors stay: one is made valid last, lookup().) */
	memset(u->shapes, 0, sizeof(u->shapes));
	u->nprev = u->truncated = u->zero_end = u->fp_ok = 0;
}

int mp_unwind_stack(const struct mp_unwinder *u, uint64_t *lo, uint64_t *hi)
{
	*lo = u->stack_lo;
	*hi = u->stack_hi;
	return 0;
}

/* The term of word x at place k of shape sh in a fingerprint (both halves). */
static inline void fp_term(const struct shape *sh, uint32_t k, uint64_t x, uint64_t *a, uint64_t *b)
{
	uint64_t lo, hi;
	x ^= sh->salt[k];
	/* The full product in rdx:rax: GCC passes an __int128 through the stack here. */
	__asm__("mulq %3" : "=a"(lo), "=d"(hi) : "a"(x), "r"(0xbf58476d1ce4e5b9ull));
	*a = lo ^ hi;
	*b = hi;
}

/*
 * The fingerprint of the stack in the places sh says, from rsp (see struct
 * known); with w1, as if the word at place 1 were *w1 (MP_UNWIND_AGAIN).
 */
static inline void fingerprint(const struct shape *sh, uint64_t rsp, uint64_t seed, const uint64_t *w1,
			       uint64_t *h0, uint64_t *h1)
{
	uint64_t a = seed ^ rsp * 0x9e3779b97f4a7c15ull ^ sh->n, b = a ^ 0x5851f42d4c957f2dull, ta, tb;
	for (uint32_t k = 0; k < sh->n; k++) {
		/* Independent terms, one multiplication each (both halves): the
		   reads and multiplications of the frames overlap. */
		fp_term(sh, k, *(const uint64_t *)(rsp + sh->off[k] - 8), &ta, &tb);
		a += ta;
		b += tb;
	}
	if (w1 && sh->n > 1) {
		fp_term(sh, 1, *(const uint64_t *)(rsp + sh->off[1] - 8), &ta, &tb);
		a -= ta;
		b -= tb;
		fp_term(sh, 1, *w1, &ta, &tb);
		a += ta;
		b += tb;
	}
	*h0 = a ? a : 1;
	*h1 = b;
}

/* Whether return addresses x and y lead to their callers' frames alike (MP_UNWIND_AGAIN). */
static int same_frame_rule(struct mp_unwinder *u, uint64_t x, uint64_t y)
{
	struct mp_cfi_desc dx, dy;
	if (x == y)
		return 1;
	dx = *lookup(u, x - 1);
	dy = *lookup(u, y - 1);
	return !((dx.flags | dy.flags) & (MP_CFI_BAD | MP_CFI_END)) && dx.flags == dy.flags &&
	       dx.cfa_off == dy.cfa_off && dx.rbp_off == dy.rbp_off && dx.ra_off == dy.ra_off;
}

/* The set of a fingerprint: from its high bits, mixed (sums of terms have poor low bits). */
static inline struct known *known_set(struct known *tab, uint32_t size, uint64_t fp0)
{
	return &tab[((fp0 * 0x9e3779b97f4a7c15ull) >> 40) & (size - KWAYS)];
}

/* This walk's frames are all of the stack, found without rbp (struct known). */
static int known_ok(const struct frame *f, int n, int truncated, int zero_end)
{
	if (truncated || zero_end || n > SHAPE_MAX)
		return 0;
	for (int k = 0; k < n; k++)
		if (f[k].flags & MP_CFI_CFA_RBP)
			return 0;
	return 1;
}

/*
 * A thread with few stacks keeps a page of them; one that learns twice as
 * many stacks as its table holds (they evict each other) gets a table twice
 * the size, up to KNOWN_MAX (128 KiB), with what the old one knew.
 */
static void known_grow(struct mp_unwinder *u)
{
	struct known *old = u->known, *n;
	uint32_t old_size = u->known_size, size = 2 * old_size;
	u->learned = 0;
	n = mp_pages(size * sizeof(*n));
	if (!n)
		return;
	for (uint32_t i = 0; i < old_size; i++) {
		struct known *set = known_set(n, size, old[i].h0);
		for (int w = 0; old[i].node && w < KWAYS; w++)
			if (!set[w].node) {
				set[w] = old[i];
				break;
			}
	}
	u->known = n;
	u->known_size = size;
	mp_pages_free(old, old_size * sizeof(*old));
}

void mp_unwind_learn(struct mp_unwinder *u, uint32_t node)
{
	struct known *set, *e;
	if (!u || !u->fp_ok || !node)
		return;
	u->fp_ok = 0;
	if (++u->learned > 2 * u->known_size && u->known_size < KNOWN_MAX)
		known_grow(u);
	set = known_set(u->known, u->known_size, u->fp0);
	/* An empty way, else one chosen by the fingerprint's high bits. */
	e = &set[(u->fp0 >> 60) % KWAYS];
	for (int w = 0; w < KWAYS; w++)
		if (!set[w].node) {
			e = &set[w];
			break;
		}
	/* Valid last: an entry left half written (mp_unwinder_recover) matches nothing. */
	e->node = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	e->h0 = u->fp0;
	e->h1 = u->fp1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	e->node = node;
}

/* The entry of fingerprint fp in the known-stack table, or NULL. */
static inline const struct known *known_find(const struct mp_unwinder *u, uint64_t fp0, uint64_t fp1)
{
	const struct known *set = known_set(u->known, u->known_size, fp0), *e;
	unsigned ways = 0;
	/* The ways compared at once: which one holds it is a coin toss for a branch. */
	for (int w = 0; w < KWAYS; w++)
		ways |= (unsigned)(set[w].h0 == fp0) << w;
	e = &set[__builtin_ctz(ways | 1u << KWAYS) & (KWAYS - 1)];
	return ways && e->h1 == (uint32_t)fp1 && e->node ? e : NULL;
}

/* The known stack of fingerprint fp: 1 with its node in *node (and counted), else 0. */
static inline int known_take(struct mp_unwinder *u, uint64_t fp0, uint64_t fp1, uint32_t *node)
{
	const struct known *e = known_find(u, fp0, fp1);
	if (!e)
		return 0;
	u->stats.known++;
	*node = e->node;
	return 1;
}

int mp_unwind_check(struct mp_unwinder *u, uint32_t *node)
{
	return known_take(u, u->pend_fp0, u->pend_fp1, node);
}

__attribute__((noinline)) int mp_unwind(struct mp_unwinder *u, uint64_t seed, struct mp_uframe **frames,
					int *stable, int *truncated, uint32_t *node, int mode)
{
	uint64_t rip, rsp, rbp, cfa, ra, prev_cfa, from_cfa, rsp0, fp0 = 0, fp1 = 0;
	int n = 0, reuse = -1, first = 1, cursor, nprev, total, npred, walked, zero_end = 0;
	struct frame *prev, *walk;
	struct shape *sh;

	if (__builtin_expect(u->dmisses > 2 * u->dsize, 0) && u->dsize < DCACHE_MAX)
		dcache_grow(u);
	if (__builtin_expect(u->code_gen != code_gen, 0)) {
		memset(u->cache, 0, u->dsize * sizeof(*u->cache));
		memset(u->shapes, 0, sizeof(u->shapes));
		u->nprev = 0;
		u->code_gen = __atomic_load_n(&code_gen, __ATOMIC_ACQUIRE);
	}
	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(rip), "=r"(rsp), "=r"(rbp));
	u->stats.walks++;
	*truncated = 0;
	rsp0 = rsp;
	sh = &u->shapes[((rsp >> 4) ^ (rsp >> 10)) & (SHAPES - 1)];
	npred = sh->rsp == rsp ? (int)sh->n : 0;
	u->fp_ok = 0;
	if (seed && npred && sh->whole) {
		/*
		 * Again, the check just failed and the walk teaches the fingerprint
		 * it used. The one word that differs is the return address of
		 * mp_record_site()'s frame, place 1 (its two calls return to two
		 * places of the hook): the deferred call's counts instead, if it
		 * leads to the hook's frame as the one here does (checked below).
		 */
		fingerprint(sh, rsp, seed ^ u->code_gen << 32, mode == MP_UNWIND_AGAIN ? &u->pend_w1 : NULL,
			    &fp0, &fp1);
		if (mode == MP_UNWIND_DEFER) {
			u->pend_fp0 = fp0;
			u->pend_fp1 = (uint32_t)fp1;
			u->pend_w1 = sh->n > 1 ? *(const uint64_t *)(rsp + sh->off[1] - 8) : 0;
			__builtin_prefetch(known_set(u->known, u->known_size, fp0));
			return MP_UNWIND_PENDING;
		}
		if (mode != MP_UNWIND_AGAIN && known_take(u, fp0, fp1, node))
			return MP_UNWIND_KNOWN;
	}
	prev = u->buf[u->cur];
	walk = u->buf[!u->cur];
	nprev = u->nprev;
	prev_cfa = rsp;
	cursor = reusable_from(prev, nprev);
	if (cursor < 0)
		cursor = 0;
	from_cfa = cursor < nprev ? prev[cursor].cfa : UINT64_MAX;
	for (;;) {
		const struct mp_cfi_desc *d = lookup(u, first ? rip : rip - 1);
		struct frame *f;
		uint64_t slot = 0, nrbp = rbp;
		first = 0;
		if (__builtin_expect(d->flags & (MP_CFI_BAD | MP_CFI_END), 0)) {
			if (d->flags & MP_CFI_BAD)
				goto fallback;
			break;
		}
		cfa = (uint64_t)((int64_t)((d->flags & MP_CFI_CFA_RBP) ? rbp : rsp) + d->cfa_off);
		if (n < npred) {
			uint64_t at = rsp0 + sh->off[n], differ = at ^ cfa;
			/* Compared so that the compiler cannot know that at is cfa (and
			   use either): the reads below depend on the shape, not on this
			   frame's descriptor, and overlap with the next frame's lookup. */
			__asm__("" : "+r"(differ));
			if (__builtin_expect(!differ, 1)) {
				/* A shape's CFAs passed the checks below when it was recorded. */
				cfa = at;
				goto checked;
			}
			npred = n; /* the shape ends here */
		}
		/* Frames only get older towards higher addresses, inside the thread's stack. */
		if (cfa <= prev_cfa || cfa < u->stack_lo + 8 || cfa + 16 > u->stack_hi)
			goto fallback;
checked:
		ra = *(const uint64_t *)(cfa - 8);
		if (d->flags & MP_CFI_RBP_SAVED) {
			slot = (uint64_t)((int64_t)cfa + d->rbp_off);
			if (slot < u->stack_lo || slot + 8 > u->stack_hi)
				goto fallback;
			nrbp = *(const uint64_t *)slot;
		}
		if (!ra) {
			zero_end = 1;
			break; /* a zero return address ends the stack (some thread starts) */
		}
		if (n == u->limit) {
			*truncated = 1; /* deeper than anything kept: the innermost frames */
			break;
		}
		f = &walk[n++];
		f->cfa = cfa;
		f->ra = ra;
		f->rbp_in = rbp;
		f->rbp_slot = slot;
		f->rbp_val = nrbp;
		f->flags = d->flags & (MP_CFI_CFA_RBP | MP_CFI_RBP_SAVED);
		/* Is this frame where the previous walk was, with the same older frames? */
		if (cfa >= from_cfa) {
			while (cursor < nprev && prev[cursor].cfa < cfa)
				cursor++; /* both walks rise through the stack: a merge */
			if (cursor < nprev && prev[cursor].cfa == cfa) {
				const struct frame *p = &prev[cursor];
				if (p->ra == ra && (!p->needs_rbp || p->rbp_in == rbp) && p->rbp_slot == slot &&
				    (!slot || cursor + 1 == nprev || !prev[cursor + 1].needs_rbp ||
				     p->rbp_val == nrbp)) {
					/*
					 * Unless a previous walk cut at the limit would make
					 * this one shorter: the stack goes on past its
					 * outermost frame, walked afresh (no later match is
					 * longer).
					 */
					if (!u->truncated || n - 1 + nprev - cursor >= u->limit) {
						reuse = cursor;
						break;
					}
					from_cfa = UINT64_MAX;
				}
			}
		}
		prev_cfa = cfa;
		rsp = cfa;
		rbp = nrbp;
		rip = ra;
	}
	walked = n;
	if (reuse >= 0) {
		/* walk[n - 1] is prev[reuse]: take it and the older frames, with their caller data. */
		total = n - 1 + nprev - reuse;
		if (total > u->limit) {
			/*
			 * Past the limit: the innermost frames, and those the caller
			 * computed counted from another outermost frame, so none is
			 * stable.
			 */
			total = u->limit;
			memcpy(&walk[n - 1], &prev[reuse], (size_t)(total - (n - 1)) * sizeof(*walk));
			*truncated = u->truncated = 1;
			zero_end = u->zero_end = 0;
			*stable = 0;
		} else {
			memcpy(&walk[n - 1], &prev[reuse], (size_t)(nprev - reuse) * sizeof(*walk));
			*truncated = u->truncated; /* the older frames are those of the previous walk */
			zero_end = u->zero_end;
			*stable = nprev - reuse;
		}
		u->stats.frames_reused += (uint64_t)(total - (n - 1));
		n--;
	} else {
		total = n;
		u->truncated = *truncated;
		u->zero_end = zero_end;
		*stable = 0;
	}
	u->stats.frames_walked += (uint64_t)n;
	if (sh->rsp != rsp0 || npred < (walked < SHAPE_MAX ? walked : SHAPE_MAX)) {
		/* Remember where this walk found its frames, for the next walk from here. */
		int m = total < SHAPE_MAX ? total : SHAPE_MAX;
		for (int k = 0; k < m; k++)
		{
			sh->off[k] = (uint32_t)(walk[k].cfa - rsp0);
			sh->salt[k] = (sh->off[k] + 1) * 0x94d049bb133111ebull;
			sh->salt[k] ^= sh->salt[k] >> 31;
		}
		sh->n = (uint32_t)m;
		sh->rsp = rsp0;
		sh->whole = (uint32_t)known_ok(walk, total, *truncated, zero_end);
	} else if (fp0 && total == (int)sh->n && known_ok(walk, total, *truncated, zero_end)) {
		/* The fingerprint was of this stack's own places: the caller may teach it. */
		int k = walked;
		while (k < total && walk[k].cfa == rsp0 + sh->off[k])
			k++;
		if (k == total && (mode != MP_UNWIND_AGAIN || total < 2 ||
				   same_frame_rule(u, u->pend_w1, walk[1].ra))) {
			u->fp0 = fp0;
			u->fp1 = (uint32_t)fp1;
			u->fp_ok = 1;
		}
	}
	u->cur = !u->cur;
	u->nprev = total;
	*frames = walk;
	return total;
fallback:
	u->stats.fallbacks++;
	u->nprev = 0;
	return -1;
}

#else /* not x86_64: libunwind everywhere */

struct mp_unwinder {
	int unused;
};
void mp_unwind_code_changed(void) {}
void mp_unwind_set_limit(struct mp_unwinder *u, int limit) { (void)u; (void)limit; }
struct mp_unwinder *mp_unwinder_new(void) { return NULL; }
void mp_unwinder_free(struct mp_unwinder *u) { (void)u; }
int mp_unwinder_reuse(struct mp_unwinder *u) { (void)u; return -1; }
void mp_unwind_forget(struct mp_unwinder *u) { (void)u; }
int mp_unwind(struct mp_unwinder *u, uint64_t seed, struct mp_uframe **f, int *s, int *t, uint32_t *node,
	      int mode)
{
	(void)u; (void)seed; (void)f; (void)s; (void)t; (void)node; (void)mode;
	return -1;
}
int mp_unwind_check(struct mp_unwinder *u, uint32_t *node) { (void)u; (void)node; return 0; }
void mp_unwinder_recover(struct mp_unwinder *u) { (void)u; }
int mp_unwind_stack(const struct mp_unwinder *u, uint64_t *lo, uint64_t *hi) { (void)u; (void)lo; (void)hi; return -1; }
void mp_unwind_learn(struct mp_unwinder *u, uint32_t node) { (void)u; (void)node; }
void mp_unwind_get_stats(struct mp_unwinder *u, struct mp_unwind_stats *st) { (void)u; memset(st, 0, sizeof(*st)); }

#endif
