/* The location-level call tree: stacks merged by source location, normal or inverted. */
#include <config.h>
#include "lib/analysis/calltree.h"

#include <stdlib.h>
#include <string.h>

#include "lib/util/sort.h"
#include "lib/util/xalloc.h"

void mp_calltree_init(struct mp_calltree *t, const struct mp_analysis *a, unsigned flags)
{
	memset(t, 0, sizeof(*t));
	t->a = a;
	t->flags = flags;
	mp_idxset_init(&t->set);
	ALLOC_GROW(t->nodes, 1, t->alloc);
	t->n = 1;
	memset(&t->nodes[0], 0, sizeof(t->nodes[0]));
	t->nodes[0].parent = MP_NONE;
	t->nodes[0].location = MP_NONE;
	t->nodes[0].thread = MP_THREAD_MERGED;
	t->nodes[0].first_child = t->nodes[0].next_sibling = MP_NONE;
}

void mp_calltree_release(struct mp_calltree *t)
{
	free(t->nodes);
	free(t->stack_buf);
	mp_idxset_release(&t->set);
	memset(t, 0, sizeof(*t));
}

struct node_probe {
	const struct mp_calltree *t;
	uint32_t parent, location, thread;
};

static bool node_eq(const void *ctx, uint32_t idx)
{
	const struct node_probe *p = ctx;
	const struct mp_calltree_node *n = &p->t->nodes[idx];
	return n->parent == p->parent && n->location == p->location && n->thread == p->thread;
}

static uint32_t child(struct mp_calltree *t, uint32_t parent, uint32_t location, uint32_t thread)
{
	struct node_probe probe = { t, parent, location, thread };
	uint64_t h = mp_hash_combine(mp_hash_u64((uint64_t)parent << 32 | location), thread);
	uint32_t idx = mp_idxset_find(&t->set, h, node_eq, &probe);
	struct mp_calltree_node *n;
	if (idx != MP_NONE)
		return idx;
	ALLOC_GROW(t->nodes, t->n + 1, t->alloc);
	idx = (uint32_t)t->n++;
	n = &t->nodes[idx];
	memset(n, 0, sizeof(*n));
	n->parent = parent;
	n->location = location;
	n->thread = thread;
	n->depth = t->nodes[parent].depth + 1;
	n->first_child = n->next_sibling = MP_NONE;
	mp_idxset_add(&t->set, h, idx);
	return idx;
}

static void add_counts(struct mp_counts *to, struct mp_counts c)
{
	to->bytes += c.bytes;
	to->count += c.count;
}

uint32_t mp_calltree_add(struct mp_calltree *t, uint32_t stack, uint32_t thread,
			 struct mp_counts c)
{
	size_t n = (t->flags & MP_CALLTREE_ALL_FRAMES)
			   ? mp_analysis_stack(t->a, stack, &t->stack_buf, &t->stack_alloc)
			   : mp_analysis_view_stack(t->a, stack, &t->stack_buf, &t->stack_alloc);
	uint32_t node = 0;
	if (!(t->flags & MP_CALLTREE_SPLIT_THREADS))
		thread = MP_THREAD_MERGED;
	add_counts(&t->nodes[0].total, c);
	/* The stack is innermost first: a normal tree starts from its end. */
	for (size_t i = 0; i < n; i++) {
		uint32_t loc = t->stack_buf[(t->flags & MP_CALLTREE_INVERTED) ? i : n - 1 - i];
		node = child(t, node, loc, thread);
		add_counts(&t->nodes[node].total, c);
	}
	add_counts(&t->nodes[node].self, c);
	return node;
}

void mp_calltree_add_view(struct mp_calltree *t, enum mp_view view)
{
	for (size_t i = 0; i < t->a->nslots; i++) {
		const struct mp_slot *s = &t->a->slots[i];
		struct mp_counts c = mp_slot_counts(s, view);
		if (c.count)
			mp_calltree_add(t, s->stack, s->thread, c);
	}
}

static int child_cmp(const void *x, const void *y, void *ctx)
{
	const struct mp_calltree_node *nodes = ctx;
	const struct mp_calltree_node *a = &nodes[*(const uint32_t *)x];
	const struct mp_calltree_node *b = &nodes[*(const uint32_t *)y];
	if (a->total.bytes != b->total.bytes)
		return a->total.bytes > b->total.bytes ? -1 : 1;
	if (a->total.count != b->total.count)
		return a->total.count > b->total.count ? -1 : 1;
	if (a->location != b->location)
		return a->location < b->location ? -1 : 1;
	return a->thread < b->thread ? -1 : a->thread > b->thread;
}

void mp_calltree_finish(struct mp_calltree *t)
{
	uint32_t *start = xcalloc(t->n + 1, sizeof(*start)), *order, *fill;
	/* Bucket the nodes by parent, sort each bucket, then link it. */
	for (size_t i = 1; i < t->n; i++)
		start[t->nodes[i].parent + 1]++;
	for (size_t i = 0; i < t->n; i++)
		start[i + 1] += start[i];
	order = xcalloc(t->n ? t->n : 1, sizeof(*order));
	fill = xmemdup(start, (t->n + 1) * sizeof(*start));
	for (size_t i = 1; i < t->n; i++)
		order[fill[t->nodes[i].parent]++] = (uint32_t)i;
	for (size_t p = 0; p < t->n; p++) {
		uint32_t *kids = order + start[p];
		size_t k = start[p + 1] - start[p];
		struct mp_calltree_node *parent = &t->nodes[p];
		mp_qsort_r(kids, k, sizeof(*kids), child_cmp, t->nodes);
		parent->nchildren = (uint32_t)k;
		parent->first_child = k ? kids[0] : MP_NONE;
		for (size_t j = 0; j < k; j++)
			t->nodes[kids[j]].next_sibling = j + 1 < k ? kids[j + 1] : MP_NONE;
	}
	free(start);
	free(order);
	free(fill);
	t->finished = true;
}
