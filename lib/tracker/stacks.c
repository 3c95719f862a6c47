/* The trace tree and the stack map: each distinct stack recorded once. */
#include <config.h>

#include <string.h>
#include <sys/mman.h>

#include "lib/tracker/config.h"
#include "lib/format/pyframe.h"
#include "lib/tracker/modules.h"
#include "lib/tracker/python.h"
#include "lib/tracker/stacks.h"
#include "lib/tracker/stream.h"
#include "lib/tracker/threads.h"

struct mp_smap_table *mp_smap;
uint32_t mp_nodes_gen = 1;
/*
 * The tree's lock: taken only for stacks the stack map does not know, so a
 * program that allocates from the same stacks over and over never takes it.
 */
static int tree_lock;
static uint64_t last_trace_ip;

/* ---- the trace tree (under tree_lock) ---- */
struct tt_entry {
	uint64_t ip;
	uint32_t parent;
	uint32_t index; /* 0: empty slot */
};
static struct tt_entry *tt;
static size_t tt_size; /* slots, a power of two */
static uint32_t tt_count; /* the last node's number */
static size_t tt_used;    /* slots in use, tombstones too */
/* A node forgotten (its code was unloaded): no (parent, ip) matches it; probes go past it. */
#define TT_TOMB UINT32_MAX

/* ---- the trace tree ---- */

static inline size_t tt_hash(uint32_t parent, uint64_t ip)
{
	uint64_t h = ip * 0x9e3779b97f4a7c15ull ^ ((uint64_t)parent * 0xc2b2ae3d27d4eb4full);
	return (size_t)(h ^ (h >> 29));
}

/* Whether ip is in one of the n ranges [r[i][0], r[i][1]). */
static int in_ranges(uint64_t ip, const uint64_t (*r)[2], size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (ip >= r[i][0] && ip < r[i][1])
			return 1;
	return 0;
}

/* The table again in size slots, without tombstones. */
static int tt_rebuild(size_t size)
{
	struct tt_entry *n = mp_pages(size * sizeof(*n));
	if (!n)
		return -1;
	tt_used = 0;
	for (size_t i = 0; i < tt_size; i++) {
		size_t j;
		if (!tt[i].index || tt[i].index == TT_TOMB)
			continue;
		for (j = tt_hash(tt[i].parent, tt[i].ip) & (size - 1); n[j].index; j = (j + 1) & (size - 1))
			;
		n[j] = tt[i];
		tt_used++;
	}
	if (tt)
		mp_pages_free(tt, tt_size * sizeof(*tt));
	tt = n;
	tt_size = size;
	return 0;
}

/* The tables' first sizes, in slots. */
#define TT_FIRST (1u << 12)
#define SMAP_FIRST (1u << 10)

int mp_stacks_grow(void)
{
	return tt_rebuild(tt_size ? tt_size * 2 : TT_FIRST);
}

/*
 * The TRACE record of node tt_count into ts's ring in the stream of now,
 * which may have begun since the thread's last record (a stop and a start,
 * memprof_start() in a loop): a record in the ring of the stream before
 * would leave the node without it in this one. 0, or -1 when no stream
 * took it (tracking stopped), the delta encoding's state as it was.
 */
static int trace_record(struct mp_tstate *ts, uint32_t parent, uint64_t ip)
{
	uint8_t rec[MP_ENC_MAX_EVENT];
	uint64_t last = last_trace_ip;
	for (int tries = 0; tries < 2; tries++) {
		uint32_t gen = __atomic_load_n(&mp_st.gen, __ATOMIC_ACQUIRE);
		last_trace_ip = last;
		if (unlikely(mp_thread_undeclared(ts, gen)) && mp_thread_declare(ts))
			break;
		if (mp_stream_put(&ts->ring, rec, (size_t)(mp_enc_trace(rec, tt_count, parent, ip, &last_trace_ip) - rec)))
			break;
		if (likely(gen == __atomic_load_n(&mp_st.gen, __ATOMIC_ACQUIRE)))
			return 0;
	}
	last_trace_ip = last;
	return -1;
}

/*
 * The node for (parent, ip), created if new, its TRACE record written into
 * ts's ring (keyed under the lock, so records come in the order of their
 * numbers); 0 on failure.
 */
static uint32_t tt_node(struct mp_tstate *ts, uint32_t parent, uint64_t ip)
{
	size_t j;
	/*
	 * Up to 7/8 full: the table is the tracker's largest, every page of it
	 * is resident, and it is searched only for stacks the stack map has not
	 * seen, so its longer probes cost little.
	 */
	if (unlikely(tt_used * 8 >= tt_size * 7) && mp_stacks_grow())
		return 0;
	/* (A tombstone's parent is no node's number.) */
	for (j = tt_hash(parent, ip) & (tt_size - 1); tt[j].index; j = (j + 1) & (tt_size - 1))
		if (tt[j].ip == ip && tt[j].parent == parent)
			return tt[j].index;
	/* A Python frame's description comes before the first node that uses it. */
	if (mp_pyip_is(ip) && mp_py_describe(&ts->ring, ip))
		return 0;
	tt[j].ip = ip;
	tt[j].parent = parent;
	tt[j].index = ++tt_count;
	tt_used++;
	if (unlikely(trace_record(ts, parent, ip))) {
		/* No stream has the record: no node without it (its number is the next one's). */
		tt[j].ip = 0;
		tt[j].parent = 0;
		tt[j].index = 0;
		tt_count--;
		tt_used--;
		return 0;
	}
	/* Code outside every known module means the loader mapped something new. */
	if (ip != MP_IP_TRUNCATED && !mp_pyip_is(ip) && !mp_modules_contains(ip))
		mp_modules_mark_dirty();
	return tt_count;
}

static struct mp_smap_table *smap_new(size_t slots)
{
	struct mp_smap_table *m = mp_pages(sizeof(*m) + slots * sizeof(m->e[0]));
	if (m)
		m->mask = slots - 1;
	return m;
}

static void smap_put_slot(struct mp_smap_table *m, uint64_t h0, uint32_t h1, uint32_t node)
{
	size_t i = h0 & m->mask;
	while (m->e[i].h0)
		i = (i + 1) & m->mask;
	m->e[i].h1 = h1;
	m->e[i].node = node;
	__atomic_store_n(&m->e[i].h0, h0, __ATOMIC_RELEASE);
	m->count++;
}

/* Remember a stack's node (under tree_lock). */
static void smap_put(const uint64_t h[2], uint32_t node)
{
	struct mp_smap_table *m = mp_smap;
	if (!m || (m->count + 1) * 2 > m->mask + 1) {
		struct mp_smap_table *n = smap_new(m ? (m->mask + 1) * 2 : SMAP_FIRST);
		if (!n)
			return;
		for (size_t i = 0; m && i <= m->mask; i++)
			if (m->e[i].h0)
				smap_put_slot(n, m->e[i].h0, m->e[i].h1, m->e[i].node);
		__atomic_store_n(&mp_smap, n, __ATOMIC_RELEASE);
		/*
		 * The old table stays mapped, since a reader may be in it, but its
		 * pages go back: a reader there sees zeros, which mean "unknown
		 * stack", and takes the locked path, as for any new stack.
		 */
		if (m)
			madvise(m, sizeof(*m) + (m->mask + 1) * sizeof(m->e[0]), MADV_DONTNEED);
		m = n;
	}
	smap_put_slot(m, h[0], (uint32_t)h[1], node);
}

/*
 * The stack map emptied: a grown one replaced by a new one of the first size,
 * a small one cleared. The grown one stays mapped, since a reader may be in
 * it, with its pages given back, as smap_put() leaves a table it outgrew:
 * what it keeps is address space, once per new stream.
 */
static void smap_empty(void)
{
	struct mp_smap_table *m = mp_smap, *n;
	if (!m)
		return;
	if (m->mask + 1 > SMAP_FIRST && (n = smap_new(SMAP_FIRST)) != NULL) {
		__atomic_store_n(&mp_smap, n, __ATOMIC_RELEASE);
		madvise(m, sizeof(*m) + (m->mask + 1) * sizeof(m->e[0]), MADV_DONTNEED);
		return;
	}
	memset(m->e, 0, (m->mask + 1) * sizeof(m->e[0]));
	m->count = 0;
}

void mp_stacks_reset(void)
{
	struct tt_entry *n;
	/*
	 * A new stream numbers its nodes afresh, in tables of the first size: a
	 * forked child (a shell's subshell) would otherwise copy every page of
	 * its parent's grown tables only to clear them, then spread its few
	 * stacks over them (a libtool link: 10x its untracked time).
	 */
	mp_lock(&tree_lock);
	smap_empty();
	if (tt_size > TT_FIRST && (n = mp_pages(TT_FIRST * sizeof(*tt))) != NULL) {
		mp_pages_free(tt, tt_size * sizeof(*tt));
		tt = n;
		tt_size = TT_FIRST;
	} else if (tt) {
		memset(tt, 0, tt_size * sizeof(*tt));
	}
	tt_count = 0;
	tt_used = 0;
	last_trace_ip = 0;
	mp_py_stream_reset();
	__atomic_add_fetch(&mp_nodes_gen, 1, __ATOMIC_RELEASE);
	mp_unlock(&tree_lock);
}

void mp_stacks_forget_code(const uint64_t (*gone)[2], size_t ngone)
{
	mp_lock(&tree_lock);
	/* In place (no memory to map while threads run): the table grows past its tombstones. */
	for (size_t i = 0; i < tt_size; i++)
		if (tt[i].index && tt[i].index != TT_TOMB && in_ranges(tt[i].ip, gone, ngone)) {
			tt[i].index = TT_TOMB;
			tt[i].parent = TT_TOMB;
		}
	/* Any whole stack may have passed through that code: the map learns them again. */
	if (mp_smap) {
		memset(mp_smap->e, 0, (mp_smap->mask + 1) * sizeof(mp_smap->e[0]));
		mp_smap->count = 0;
	}
	__atomic_add_fetch(&mp_nodes_gen, 1, __ATOMIC_RELEASE);
	mp_unlock(&tree_lock);
}

void mp_smap_learn(const uint64_t h[2], uint32_t node)
{
	mp_lock(&tree_lock);
	if (!mp_smap_get(h))
		smap_put(h, node);
	mp_unlock(&tree_lock);
}

void mp_stacks_lock(void)
{
	mp_lock(&tree_lock);
}

void mp_stacks_unlock(void)
{
	mp_unlock(&tree_lock);
}

void mp_stacks_forked(void)
{
	tree_lock = 0;
}

/* ---- whole stacks ---- */

/*
 * The slow path: a stack as innermost-first return addresses (from our walker
 * or from libunwind) into ts->scratch, root first, without the tracker's own
 * frames, cut to --max-depth; returns the depth.
 */
int mp_stack_from_ips(struct mp_tstate *ts, int n, int truncated)
{
	int kept = 0, k = 0;
	int cap = (int)mp_cfg.max_depth + MP_OWN_FRAMES + 1;
	if (n == cap)
		truncated = 1;
	/* The tracker's own frames (the hooks, main_wrapper) are not the program's. */
	for (int i = 0; i < n; i++) {
		uint64_t ip = (uint64_t)ts->raw[i];
		if (ip >= mp_self_lo && ip < mp_self_hi)
			continue;
		if (kept == (int)mp_cfg.max_depth) {
			truncated = 1;
			break;
		}
		ts->raw[kept++] = ts->raw[i];
	}
	if (truncated)
		ts->scratch[k++] = MP_IP_TRUNCATED;
	for (int j = kept - 1; j >= 0; j--)
		ts->scratch[k++] = (uint64_t)ts->raw[j];
	return k;
}


uint32_t mp_slow_stack_node(struct mp_tstate *ts, int depth, int k)
{
	uint32_t node;
	if (unlikely(ts->cache_gen != mp_nodes_gen))
		k = 0;
	node = k ? ts->nodes[k - 1] : 0;
	if (k == depth && k == ts->depth)
		return node; /* the thread's last stack again */
	mp_lock(&tree_lock);
	for (int j = k; j < depth; j++) {
		node = tt_node(ts, node, ts->scratch[j]);
		if (unlikely(!node))
			break;
		ts->ips[j] = ts->scratch[j];
		ts->nodes[j] = node;
	}
	mp_unlock(&tree_lock);
	if (unlikely(!node)) {
		ts->cache_gen = 0;
		return 0;
	}
	ts->depth = depth;
	ts->cache_gen = mp_nodes_gen;
	return node;
}


uint32_t mp_fast_stack_node(struct mp_tstate *ts, struct mp_uframe *f, int n, const uint64_t h[2])
{
	uint32_t node = 0;
	int j = 0;
	mp_lock(&tree_lock);
	/* Another thread may have added the stack since the lock-free probe. */
	node = mp_smap_get(h);
	if (node)
		goto out;
	while (j < n && f[j].node == MP_UFRAME_NO_NODE)
		j++;
	if (j < n)
		node = f[j].node;
	for (int k = j - 1; k >= 0; k--) {
		uint64_t ip = f[k].ra;
		if (likely(ip < mp_self_lo || ip >= mp_self_hi)) {
			node = tt_node(ts, node, ip);
			if (unlikely(!node))
				goto out;
		}
		f[k].node = node;
	}
	smap_put(h, node);
out:
	mp_unlock(&tree_lock);
	return node;
}
