/* Stacks of several captures made one by their frames, at the end of the pass. */
#include <config.h>
#include "lib/analysis/analysis-private.h"

#include <stdlib.h>
#include <string.h>

#include "lib/util/hash.h"
#include "lib/util/strbuf.h"
#include "lib/util/xalloc.h"

/* ---- stacks made one by their frames ------------------------------------ */

struct node_key {
	const struct mp_analysis *a;
	const struct trace *traces;     /* the new ones */
	uint32_t parent;
	const uint32_t *locs;
	size_t n;
};

static size_t ipinfo_frames(const struct mp_analysis *a, uint32_t ipinfo, const uint32_t **locs)
{
	const struct ipinfo *info = &a->p->ips[ipinfo];
	*locs = a->p->frames + info->frames;
	return info->nframes;
}

static bool node_eq(const void *ctx, uint32_t idx)
{
	const struct node_key *k = ctx;
	const uint32_t *locs;
	size_t n;
	if (k->traces[idx].parent != k->parent)
		return false;
	n = ipinfo_frames(k->a, k->traces[idx].ipinfo, &locs);
	return n == k->n && !memcmp(locs, k->locs, n * sizeof(*locs));
}

struct slot_key {
	const struct mp_slot *slots;
	const struct mp_slot *want;
};

static bool slot_key_eq(const void *ctx, uint32_t idx)
{
	const struct slot_key *k = ctx;
	const struct mp_slot *s = &k->slots[idx], *w = k->want;
	return s->stack == w->stack && s->thread == w->thread && s->kind == w->kind &&
	       s->process == w->process;
}

static void add_counts(struct mp_counts *to, const struct mp_counts *c)
{
	to->bytes += c->bytes;
	to->count += c->count;
}

/* Slots on the new stacks: those of the same stack, thread, kind and process made one. */
static uint32_t *merge_slots(struct mp_analysis *a, const uint32_t *canon, const uint32_t *proc)
{
	bool split = a->opts.flags & MP_ANALYSIS_SPLIT_PROCESSES;
	uint32_t *map = xcalloc(a->nslots ? a->nslots : 1, sizeof(*map));
	struct mp_idxset set;
	size_t m = 0;
	mp_idxset_init(&set);
	for (size_t i = 0; i < a->nslots; i++) {
		struct mp_slot s = a->slots[i];
		struct slot_key k = { a->slots, &s };
		uint64_t h;
		uint32_t idx;
		if (split)
			s.process = s.stack ? proc[s.stack] : MP_NONE;
		s.stack = canon[s.stack];
		h = mp_hash_u64(((uint64_t)s.thread << 32 | s.stack) ^ ((uint64_t)s.kind << 56));
		h = mp_hash_combine(h, s.process);
		idx = mp_idxset_find(&set, h, slot_key_eq, &k);
		if (idx == MP_NONE) {
			idx = (uint32_t)m++;
			a->slots[idx] = s;
			mp_idxset_add(&set, h, idx);
		} else {
			struct mp_slot *t = &a->slots[idx];
			add_counts(&t->allocated, &s.allocated);
			add_counts(&t->peak, &s.peak);
			add_counts(&t->leaked, &s.leaked);
			add_counts(&t->temporary, &s.temporary);
		}
		map[i] = idx;
	}
	a->nslots = m;
	mp_idxset_release(&set);
	return map;
}

static void new_slot(void *ctx, struct mp_interval *iv)
{
	const uint32_t *slot_map = ctx;
	iv->slot = slot_map[iv->slot];
}

void mp_family_finish(struct mp_analysis *a)
{
	struct mp_analysis_private *p = a->p;
		bool split = a->opts.flags & MP_ANALYSIS_SPLIT_PROCESSES;
	size_t n = a->ntraces, m = 0;
	struct trace *nt = xcalloc(n + a->nprocesses + 1, sizeof(*nt));
	uint32_t *canon = xcalloc(n + 1, sizeof(*canon)), *roots = NULL, *slot_map;
	struct mp_idxset set;

	mp_idxset_init(&set);
	if (split) {
		roots = xcalloc(a->nprocesses, sizeof(*roots));
		for (size_t i = 0; i < a->nprocesses; i++) {
			struct strbuf sb = STRBUF_INIT;
			uint32_t loc;
			mp_analysis_process_label(a, (uint32_t)i, &sb);
			loc = mp_frames_location(a, mp_strtab_intern(&a->strings, sb.buf, sb.len), 0, 0,
						 MP_NONE, MP_LOC_PROCESS);
			a->processes[i].location = loc;
			roots[i] = (uint32_t)++m;
			nt[m].parent = 0;
			nt[m].ipinfo = mp_frames_pseudo_ip(a, loc);
			strbuf_release(&sb);
		}
	}
	/* Parents come before their children: one sweep. */
	for (size_t k = 1; k <= n; k++) {
		const struct trace *t = &p->traces[k];
		struct node_key key = { a, nt, 0, NULL, 0 };
		uint64_t h;
		uint32_t idx;
		if (t->parent)
			key.parent = canon[t->parent];
		else
			key.parent = split ? roots[mp_family_node_process(p->family)[k]] : 0;
		key.n = ipinfo_frames(a, t->ipinfo, &key.locs);
		h = mp_hash_u64(key.parent);
		for (size_t i = 0; i < key.n; i++)
			h = mp_hash_combine(h, key.locs[i]);
		idx = mp_idxset_find(&set, h, node_eq, &key);
		if (idx == MP_NONE) {
			idx = (uint32_t)++m;
			nt[idx] = (struct trace){ key.parent, t->ipinfo };
			mp_idxset_add(&set, h, idx);
		}
		canon[k] = idx;
	}
	mp_idxset_release(&set);
	slot_map = merge_slots(a, canon, mp_family_node_process(p->family));
	mp_analysis_remap_intervals(a, new_slot, slot_map);
	free(p->traces);
	p->traces = nt;
	p->traces_alloc = n + a->nprocesses + 1;
	a->ntraces = m;
	free(slot_map);
	free(canon);
	free(roots);
}
