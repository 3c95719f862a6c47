/* Disjoint address ranges in a treap, for the live memory mappings. */
#include <config.h>
#include "lib/analysis/rangemap.h"

#include <stdlib.h>

#include "lib/util/xalloc.h"

struct mp_range_node {
	uint64_t start, end, value;
	uint64_t prio;
	struct mp_range_node *left, *right;
};

void mp_rangemap_init(struct mp_rangemap *m)
{
	m->root = NULL;
	m->n = 0;
	m->seed = 0x2545f4914f6cdd1dULL;
}

static void free_tree(struct mp_range_node *t)
{
	while (t) {
		struct mp_range_node *right = t->right;
		free_tree(t->left);
		free(t);
		t = right;
	}
}

void mp_rangemap_release(struct mp_rangemap *m)
{
	free_tree(m->root);
	mp_rangemap_init(m);
}

static uint64_t next_prio(struct mp_rangemap *m)
{
	/* xorshift64: priorities only need to look random to keep the treap balanced */
	m->seed ^= m->seed << 13;
	m->seed ^= m->seed >> 7;
	m->seed ^= m->seed << 17;
	return m->seed;
}

/* Split t into the nodes starting before key (*l) and the others (*r). */
static void split(struct mp_range_node *t, uint64_t key, struct mp_range_node **l,
		  struct mp_range_node **r)
{
	if (!t) {
		*l = *r = NULL;
	} else if (t->start < key) {
		split(t->right, key, &t->right, r);
		*l = t;
	} else {
		split(t->left, key, l, &t->left);
		*r = t;
	}
}

/* Join two treaps, every start in a being below every start in b. */
static struct mp_range_node *merge(struct mp_range_node *a, struct mp_range_node *b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	if (a->prio > b->prio) {
		a->right = merge(a->right, b);
		return a;
	}
	b->left = merge(a, b->left);
	return b;
}

static struct mp_range_node *new_node(struct mp_rangemap *m, uint64_t start, uint64_t end,
				      uint64_t value)
{
	struct mp_range_node *x = xmalloc(sizeof(*x));
	x->start = start;
	x->end = end;
	x->value = value;
	x->prio = next_prio(m);
	x->left = x->right = NULL;
	m->n++;
	return x;
}

void mp_rangemap_insert(struct mp_rangemap *m, uint64_t start, uint64_t end, uint64_t value)
{
	struct mp_range_node *l, *r;
	if (start >= end)
		return;
	split(m->root, start, &l, &r);
	m->root = merge(merge(l, new_node(m, start, end, value)), r);
}

struct removal {
	struct mp_rangemap *m;
	uint64_t end;
	mp_range_fn fn;
	void *ctx;
	uint64_t removed;
	struct mp_range_node *tail; /* the cut-off tail of the last range, kept */
};

/* Drop the ranges of t (all starting inside the removed range), in order. */
static void drop(struct removal *rm, struct mp_range_node *t)
{
	while (t) {
		struct mp_range_node *right = t->right;
		drop(rm, t->left);
		if (t->end > rm->end) {
			/* Only its head was inside: keep [end, t->end). */
			uint64_t bytes = rm->end - t->start;
			rm->removed += bytes;
			if (rm->fn)
				rm->fn(rm->ctx, t->value, bytes, 0);
			t->start = rm->end;
			t->left = t->right = NULL;
			rm->tail = t;
		} else {
			rm->removed += t->end - t->start;
			if (rm->fn)
				rm->fn(rm->ctx, t->value, t->end - t->start, -1);
			free(t);
			rm->m->n--;
		}
		t = right;
	}
}

uint64_t mp_rangemap_remove(struct mp_rangemap *m, uint64_t start, uint64_t end, mp_range_fn fn,
			    void *ctx)
{
	struct mp_range_node *l, *mid, *r, *x, *hole = NULL;
	struct removal rm = { m, end, fn, ctx, 0, NULL };

	if (start >= end)
		return 0;
	split(m->root, start, &l, &r);
	/* The last range starting before start may reach into the removed range. */
	for (x = l; x && x->right; x = x->right)
		;
	if (x && x->end > start) {
		uint64_t cut_end = x->end < end ? x->end : end;
		rm.removed += cut_end - start;
		if (x->end > end) {
			/* A hole in the middle: x keeps its head, a new range its tail. */
			hole = new_node(m, end, x->end, x->value);
			x->end = start;
			if (fn)
				fn(ctx, x->value, cut_end - start, 1);
		} else {
			x->end = start;
			if (fn)
				fn(ctx, x->value, cut_end - start, 0);
		}
	}
	split(r, end, &mid, &r);
	drop(&rm, mid);
	if (rm.tail)
		r = merge(rm.tail, r);
	if (hole)
		r = merge(hole, r);
	m->root = merge(l, r);
	return rm.removed;
}

static void each(const struct mp_range_node *t,
		 void (*fn)(void *ctx, uint64_t start, uint64_t end, uint64_t value), void *ctx)
{
	while (t) {
		each(t->left, fn, ctx);
		fn(ctx, t->start, t->end, t->value);
		t = t->right;
	}
}

void mp_rangemap_each(const struct mp_rangemap *m,
		      void (*fn)(void *ctx, uint64_t start, uint64_t end, uint64_t value),
		      void *ctx)
{
	each(m->root, fn, ctx);
}
