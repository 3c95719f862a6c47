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
 * Frames are read only inside the thread's stack bounds; anything unusual
 * returns -1 and the caller uses libunwind for that event.
 */
#include <config.h>
#include "lib/tracker/unwind.h"

#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>

#if defined(__x86_64__)

#define DCACHE 2048                 /* descriptors per thread, a power of two */
#define DWAYS 4                     /* ways per set: a set is one cache line */
#define MAXF (1024 + 16 + 1)        /* frames kept from the previous walk */
#define SHAPES 64                   /* stack shapes per thread, a power of two */
#define SHAPE_MAX 48                /* frames per shape */

enum { REG_RBP = 6, REG_RSP = 7, REG_RA = 16 };
enum {
	D_CFA_RBP = 1 << 0,  /* CFA = rbp + off (else rsp + off) */
	D_END = 1 << 1,      /* the return address is undefined: the outermost frame */
	D_BAD = 1 << 2,      /* not handled here: use libunwind */
	D_RBP_SAVED = 1 << 3,/* rbp saved at CFA + rbp_off */
};
#define RBP_NONE INT16_MIN

struct desc {
	uint64_t ip;   /* 0: empty */
	int32_t cfa_off;
	int16_t rbp_off;
	int8_t ra_off;
	uint8_t flags;
};

/* flags: the descriptor's D_CFA_RBP and D_RBP_SAVED; needs_rbp: the walk from
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
	uint32_t off[SHAPE_MAX];
};

struct mp_unwinder {
	struct desc cache[DCACHE] __attribute__((aligned(64)));
	struct shape shapes[SHAPES];
	uint64_t code_gen;
	uint64_t stack_lo, stack_hi;
	int nprev;
	int truncated;              /* the previous walk stopped at MAXF frames */
	int cur;                    /* which of buf holds the previous walk */
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

struct mp_unwinder *mp_unwinder_new(void)
{
	struct mp_unwinder *u;
	pthread_attr_t attr;
	void *addr;
	size_t size;
	if (pthread_getattr_np(pthread_self(), &attr))
		return NULL;
	if (pthread_attr_getstack(&attr, &addr, &size)) {
		pthread_attr_destroy(&attr);
		return NULL;
	}
	pthread_attr_destroy(&attr);
	u = mp_pages(sizeof(*u));
	if (!u)
		return NULL;
	u->stack_lo = (uint64_t)addr;
	u->stack_hi = (uint64_t)addr + size;
	u->code_gen = __atomic_load_n(&code_gen, __ATOMIC_ACQUIRE);
	return u;
}

void mp_unwinder_free(struct mp_unwinder *u)
{
	mp_pages_free(u, sizeof(*u));
}

void mp_unwind_get_stats(struct mp_unwinder *u, struct mp_unwind_stats *st)
{
	*st = u->stats;
}

/* ---- reading DWARF ---- */

struct rd {
	const uint8_t *p, *end;
	int bad;
};

static uint64_t uleb(struct rd *r)
{
	uint64_t v = 0;
	unsigned shift = 0;
	while (r->p < r->end) {
		uint8_t b = *r->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return v;
	}
	r->bad = 1;
	return 0;
}

static int64_t sleb(struct rd *r)
{
	int64_t v = 0;
	unsigned shift = 0;
	uint8_t b = 0;
	while (r->p < r->end) {
		b = *r->p++;
		if (shift < 64)
			v |= (int64_t)((uint64_t)(b & 0x7f) << shift);
		shift += 7;
		if (!(b & 0x80)) {
			if (shift < 64 && (b & 0x40))
				v |= -((int64_t)1 << shift);
			return v;
		}
	}
	r->bad = 1;
	return 0;
}

#define RD_FIXED(type, name)                                  \
	static type name(struct rd *r)                        \
	{                                                     \
		type v;                                       \
		if (r->end - r->p < (ptrdiff_t)sizeof(type)) { \
			r->bad = 1;                           \
			return 0;                             \
		}                                             \
		memcpy(&v, r->p, sizeof(v));                  \
		r->p += sizeof(v);                            \
		return v;                                     \
	}
RD_FIXED(uint8_t, u8)
RD_FIXED(uint16_t, u16)
RD_FIXED(uint32_t, u32)
RD_FIXED(uint64_t, u64)

/* A DW_EH_PE-encoded pointer; datarel is relative to base (.eh_frame_hdr). */
static uint64_t encoded(struct rd *r, uint8_t enc, uint64_t base)
{
	uint64_t at = (uint64_t)r->p, v;
	if (enc == 0xff)
		return 0;
	switch (enc & 0x0f) {
	case 0x00: v = u64(r); break;
	case 0x01: v = uleb(r); break;
	case 0x02: v = u16(r); break;
	case 0x03: v = u32(r); break;
	case 0x04: v = u64(r); break;
	case 0x09: v = (uint64_t)sleb(r); break;
	case 0x0a: v = (uint64_t)(int64_t)(int16_t)u16(r); break;
	case 0x0b: v = (uint64_t)(int64_t)(int32_t)u32(r); break;
	case 0x0c: v = u64(r); break;
	default: r->bad = 1; return 0;
	}
	switch (enc & 0x70) {
	case 0x00: break;
	case 0x10: v += at; break;
	case 0x30: v += base; break;
	default: r->bad = 1; return 0;
	}
	if (enc & 0x80)
		r->bad = 1; /* indirect pointers do not occur in FDE ranges */
	return v;
}

struct find {
	uint64_t ip;
	const uint8_t *hdr;
	uint64_t lo, hi;
};

static int find_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct find *f = data;
	const ElfW(Phdr) *eh = NULL;
	int inside = 0;
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t start = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && f->ip >= start && f->ip < start + ph->p_memsz)
			inside = 1;
		else if (ph->p_type == PT_GNU_EH_FRAME)
			eh = ph;
	}
	if (!inside)
		return 0;
	if (eh)
		f->hdr = (const uint8_t *)(info->dlpi_addr + eh->p_vaddr);
	return 1;
}

struct rules {
	uint8_t cfa_reg;
	int64_t cfa_off;
	int64_t rbp_off, ra_off;
	uint8_t rbp_kind, ra_kind; /* 0 same/unset, 1 offset, 2 undefined, 3 unsupported */
};

/* Run call-frame instructions until the row that covers target. */
static int run_cfa(struct rd *r, uint64_t *loc, uint64_t target, uint64_t caf, int64_t daf,
		   uint8_t fde_enc, struct rules *st, const struct rules *init)
{
	struct rules stack[8];
	int depth = 0;
	while (r->p < r->end && !r->bad) {
		uint8_t op = u8(r), hi = op & 0xc0, lo = op & 0x3f;
		uint64_t reg, delta = 0;
		int64_t off;
		if (hi == 0x40) {
			delta = lo * caf;
			goto advance;
		}
		if (hi == 0x80) {
			reg = lo;
			off = (int64_t)uleb(r) * daf;
			goto set_offset;
		}
		if (hi == 0xc0) {
			reg = lo;
			goto restore;
		}
		switch (op) {
		case 0x00: continue;
		case 0x01: {
			uint64_t nl = encoded(r, fde_enc, 0);
			if (nl > target)
				return 0;
			*loc = nl;
			continue;
		}
		case 0x02: delta = u8(r) * caf; goto advance;
		case 0x03: delta = u16(r) * caf; goto advance;
		case 0x04: delta = u32(r) * caf; goto advance;
		case 0x05: reg = uleb(r); off = (int64_t)uleb(r) * daf; goto set_offset;
		case 0x06: reg = uleb(r); goto restore;
		case 0x07:
			reg = uleb(r);
			if (reg == REG_RBP)
				st->rbp_kind = 2;
			else if (reg == REG_RA)
				st->ra_kind = 2;
			continue;
		case 0x08:
			reg = uleb(r);
			if (reg == REG_RBP)
				st->rbp_kind = 0;
			else if (reg == REG_RA)
				st->ra_kind = 3;
			continue;
		case 0x09:
			reg = uleb(r);
			uleb(r);
			if (reg == REG_RBP || reg == REG_RA)
				return -1;
			continue;
		case 0x0a:
			if (depth == 8)
				return -1;
			stack[depth++] = *st;
			continue;
		case 0x0b:
			if (!depth)
				return -1;
			*st = stack[--depth]; /* the whole row, CFA rule included, as GCC expects */
			continue;
		case 0x0c: st->cfa_reg = (uint8_t)uleb(r); st->cfa_off = (int64_t)uleb(r); continue;
		case 0x0d: st->cfa_reg = (uint8_t)uleb(r); continue;
		case 0x0e: st->cfa_off = (int64_t)uleb(r); continue;
		case 0x0f: return -1; /* CFA by expression */
		case 0x10:
		case 0x16: {
			uint64_t len;
			reg = uleb(r);
			len = uleb(r);
			if (reg == REG_RBP || reg == REG_RA || len > (uint64_t)(r->end - r->p))
				return -1;
			r->p += len;
			continue;
		}
		case 0x11: reg = uleb(r); off = sleb(r) * daf; goto set_offset;
		case 0x12: st->cfa_reg = (uint8_t)uleb(r); st->cfa_off = sleb(r) * daf; continue;
		case 0x13: st->cfa_off = sleb(r) * daf; continue;
		case 0x14: case 0x15:
			reg = uleb(r);
			if (op == 0x14)
				uleb(r);
			else
				sleb(r);
			if (reg == REG_RBP || reg == REG_RA)
				return -1;
			continue;
		case 0x2e: uleb(r); continue;
		case 0x2f: reg = uleb(r); off = -(int64_t)uleb(r) * daf; goto set_offset;
		default: return -1;
		}
advance:
		if (*loc + delta > target)
			return 0;
		*loc += delta;
		continue;
set_offset:
		if (reg == REG_RBP) {
			st->rbp_kind = 1;
			st->rbp_off = off;
		} else if (reg == REG_RA) {
			st->ra_kind = 1;
			st->ra_off = off;
		}
		continue;
restore:
		if (reg == REG_RBP) {
			st->rbp_kind = init->rbp_kind;
			st->rbp_off = init->rbp_off;
		} else if (reg == REG_RA) {
			st->ra_kind = init->ra_kind;
			st->ra_off = init->ra_off;
		}
		continue;
	}
	return r->bad ? -1 : 0;
}

/* Compute the descriptor of the frame executing at ip (already adjusted for return addresses). */
static void describe(uint64_t ip, struct desc *d)
{
	struct find f = { .ip = ip };
	struct rd r;
	uint64_t base, fde_count, lo, hi, fde_addr = 0, cie_addr, pc_begin, pc_range, loc;
	uint8_t table_enc, fde_enc = 0, version;
	uint64_t caf;
	int64_t daf;
	const char *aug;
	int has_z = 0, signal = 0;
	struct rules init = { REG_RSP, 8, 0, -8, 0, 1 }, st;

	d->ip = ip;
	d->flags = D_BAD;
	dl_iterate_phdr(find_cb, &f);
	if (!f.hdr)
		return;
	/* .eh_frame_hdr: version, encodings, eh_frame_ptr, fde_count, sorted table. */
	base = (uint64_t)f.hdr;
	r = (struct rd){ f.hdr, f.hdr + 1024 * 1024 * 1024, 0 };
	if (u8(&r) != 1)
		return;
	{
		uint8_t ptr_enc = u8(&r), count_enc = u8(&r);
		table_enc = u8(&r);
		encoded(&r, ptr_enc, base);
		fde_count = encoded(&r, count_enc, base);
	}
	if (r.bad || table_enc != 0x3b || !fde_count)
		return; /* only the datarel|sdata4 table that every linker writes */
	{
		const int32_t *tab = (const int32_t *)r.p;
		lo = 0;
		hi = fde_count;
		if ((int64_t)ip < (int64_t)(base + (uint64_t)(int64_t)tab[0]))
			return;
		while (hi - lo > 1) {
			uint64_t mid = (lo + hi) / 2;
			if (base + (uint64_t)(int64_t)tab[2 * mid] <= ip)
				lo = mid;
			else
				hi = mid;
		}
		fde_addr = base + (uint64_t)(int64_t)tab[2 * lo + 1];
	}
	/* The FDE. */
	r = (struct rd){ (const uint8_t *)fde_addr, (const uint8_t *)fde_addr + 8, 0 };
	{
		uint32_t len = u32(&r);
		const uint8_t *cie_ptr_at = r.p;
		uint32_t cie_off;
		if (len == 0 || len == 0xffffffff)
			return;
		r.end = r.p + len;
		cie_off = u32(&r);
		if (!cie_off)
			return;
		cie_addr = (uint64_t)cie_ptr_at - cie_off;
	}
	/* The CIE. */
	{
		struct rd c = { (const uint8_t *)cie_addr, (const uint8_t *)cie_addr + 8, 0 };
		uint32_t len = u32(&c);
		if (len == 0 || len == 0xffffffff)
			return;
		c.end = c.p + len;
		if (u32(&c) != 0)
			return;
		version = u8(&c);
		if (version != 1 && version != 3)
			return;
		aug = (const char *)c.p;
		while (c.p < c.end && *c.p)
			c.p++;
		c.p++;
		caf = uleb(&c);
		daf = sleb(&c);
		if (version == 1)
			u8(&c);
		else
			uleb(&c);
		for (const char *a = aug; *a && !c.bad; a++) {
			switch (*a) {
			case 'z': has_z = 1; uleb(&c); break;
			case 'R': fde_enc = u8(&c); break;
			case 'L': u8(&c); break;
			case 'P': encoded(&c, u8(&c), 0); break;
			case 'S': signal = 1; break;
			case 'B': break;
			default: return; /* unknown augmentation: its data cannot be skipped */
			}
		}
		if (c.bad || signal)
			return;
		/* The CIE's initial instructions define the rules every FDE starts from. */
		loc = 0;
		st = init;
		if (run_cfa(&c, &loc, UINT64_MAX, caf, daf, fde_enc, &st, &init) < 0)
			return;
		init = st;
	}
	pc_begin = encoded(&r, fde_enc, base);
	pc_range = encoded(&r, fde_enc & 0x0f, base);
	if (r.bad || ip < pc_begin || ip >= pc_begin + pc_range)
		return;
	if (has_z) {
		uint64_t alen = uleb(&r);
		if (alen > (uint64_t)(r.end - r.p))
			return;
		r.p += alen;
	}
	loc = pc_begin;
	st = init;
	if (run_cfa(&r, &loc, ip, caf, daf, fde_enc, &st, &init) < 0)
		return;
	if (st.ra_kind == 2) {
		d->flags = D_END;
		return;
	}
	if (st.ra_kind != 1 || (st.cfa_reg != REG_RSP && st.cfa_reg != REG_RBP) ||
	    st.rbp_kind == 3 || st.cfa_off < INT32_MIN || st.cfa_off > INT32_MAX ||
	    st.ra_off != -8 || st.rbp_off <= INT16_MIN || st.rbp_off > INT16_MAX)
		return; /* (the walk and reusable_from() read the x86_64 return-address slot) */
	d->cfa_off = (int32_t)st.cfa_off;
	d->ra_off = (int8_t)st.ra_off;
	d->rbp_off = st.rbp_kind == 1 ? (int16_t)st.rbp_off : RBP_NONE;
	d->flags = (uint8_t)((st.cfa_reg == REG_RBP ? D_CFA_RBP : 0) | (st.rbp_kind == 1 ? D_RBP_SAVED : 0));
}

/*
 * The descriptor of ip, from a 4-way set-associative cache: a miss costs a
 * walk of the loaded objects and a CFI program, so two hot addresses must
 * not evict each other (a direct-mapped cache did, whenever code moved).
 */
static inline const struct desc *lookup(struct mp_unwinder *u, uint64_t ip)
{
	/* Fold the address: cheaper than a multiplication on the walk's critical path. */
	struct desc *set = &u->cache[((ip ^ (ip >> 11)) * DWAYS) & (DCACHE - DWAYS)];
	struct desc *d;
	if (__builtin_expect(set[0].ip == ip, 1))
		return &set[0];
	for (int w = 1; w < DWAYS; w++)
		if (set[w].ip == ip) {
			/* Move it forward: the hottest address is found at the first compare. */
			struct desc hit = set[w];
			memmove(&set[1], &set[0], (size_t)w * sizeof(*set));
			set[0] = hit;
			return &set[0];
		}
	u->stats.descriptor_misses++;
	memmove(&set[1], &set[0], (DWAYS - 1) * sizeof(*set));
	d = &set[0];
	describe(ip, d);
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
		older = (f->flags & D_CFA_RBP) || (!(f->flags & D_RBP_SAVED) && older);
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

__attribute__((noinline)) int mp_unwind(struct mp_unwinder *u, struct mp_uframe **frames,
					int *stable, int *truncated)
{
	uint64_t rip, rsp, rbp, cfa, ra, prev_cfa, from_cfa, rsp0;
	int n = 0, reuse = -1, first = 1, cursor, nprev, total, npred, walked;
	struct frame *prev, *walk;
	struct shape *sh;

	if (__builtin_expect(u->code_gen != code_gen, 0)) {
		memset(u->cache, 0, sizeof(u->cache));
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
	prev = u->buf[u->cur];
	walk = u->buf[!u->cur];
	nprev = u->nprev;
	prev_cfa = rsp;
	cursor = reusable_from(prev, nprev);
	if (cursor < 0)
		cursor = 0;
	from_cfa = cursor < nprev ? prev[cursor].cfa : UINT64_MAX;
	for (;;) {
		const struct desc *d = lookup(u, first ? rip : rip - 1);
		struct frame *f;
		uint64_t slot = 0, nrbp = rbp;
		first = 0;
		if (__builtin_expect(d->flags & (D_BAD | D_END), 0)) {
			if (d->flags & D_BAD)
				goto fallback;
			break;
		}
		cfa = (uint64_t)((int64_t)((d->flags & D_CFA_RBP) ? rbp : rsp) + d->cfa_off);
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
		if (d->flags & D_RBP_SAVED) {
			slot = (uint64_t)((int64_t)cfa + d->rbp_off);
			if (slot < u->stack_lo || slot + 8 > u->stack_hi)
				goto fallback;
			nrbp = *(const uint64_t *)slot;
		}
		if (!ra)
			break; /* a zero return address ends the stack (some thread starts) */
		if (n == MAXF) {
			*truncated = 1; /* deeper than anything kept: the innermost frames */
			break;
		}
		f = &walk[n++];
		f->cfa = cfa;
		f->ra = ra;
		f->rbp_in = rbp;
		f->rbp_slot = slot;
		f->rbp_val = nrbp;
		f->flags = d->flags & (D_CFA_RBP | D_RBP_SAVED);
		/* Is this frame where the previous walk was, with the same older frames? */
		if (cfa >= from_cfa) {
			while (cursor < nprev && prev[cursor].cfa < cfa)
				cursor++; /* both walks rise through the stack: a merge */
			if (cursor < nprev && prev[cursor].cfa == cfa) {
				const struct frame *p = &prev[cursor];
				if (p->ra == ra && (!p->needs_rbp || p->rbp_in == rbp) && p->rbp_slot == slot &&
				    (!slot || cursor + 1 == nprev || !prev[cursor + 1].needs_rbp ||
				     p->rbp_val == nrbp)) {
					reuse = cursor;
					break;
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
		if (total > MAXF)
			goto fallback;
		memcpy(&walk[n - 1], &prev[reuse], (size_t)(nprev - reuse) * sizeof(*walk));
		*truncated = u->truncated; /* the older frames are those of the previous walk */
		*stable = nprev - reuse;
		u->stats.frames_reused += (uint64_t)(nprev - reuse);
		n--;
	} else {
		total = n;
		u->truncated = *truncated;
		*stable = 0;
	}
	u->stats.frames_walked += (uint64_t)n;
	if (sh->rsp != rsp0 || npred < (walked < SHAPE_MAX ? walked : SHAPE_MAX)) {
		/* Remember where this walk found its frames, for the next walk from here. */
		int m = total < SHAPE_MAX ? total : SHAPE_MAX;
		for (int k = 0; k < m; k++)
			sh->off[k] = (uint32_t)(walk[k].cfa - rsp0);
		sh->n = (uint32_t)m;
		sh->rsp = rsp0;
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
struct mp_unwinder *mp_unwinder_new(void) { return NULL; }
void mp_unwinder_free(struct mp_unwinder *u) { (void)u; }
void mp_unwind_forget(struct mp_unwinder *u) { (void)u; }
int mp_unwind(struct mp_unwinder *u, struct mp_uframe **f, int *s, int *t)
{
	(void)u; (void)f; (void)s; (void)t;
	return -1;
}
void mp_unwind_get_stats(struct mp_unwinder *u, struct mp_unwind_stats *st) { (void)u; memset(st, 0, sizeof(*st)); }

#endif
