/* Two call trees merged by the text of their locations, for the differential flame graph. */
#include <config.h>
#include "lib/report/difftree.h"

#include <stdlib.h>
#include <string.h>

#include "lib/analysis/calltree.h"
#include "lib/util/hash.h"
#include "lib/util/sort.h"
#include "lib/util/strtab.h"
#include "lib/util/xalloc.h"

struct mnode {
	uint32_t parent, key;
	uint32_t first_child, next_sibling;
	struct mp_counts self[2], total[2];
};

struct merge {
	const struct mp_analysis *a[2];
	struct mp_strtab keys;          /* a location's text: function, file, line, module */
	uint32_t *key_of[2];            /* analysis location -> key, MP_NONE when not made yet */
	uint32_t *rep;                  /* key -> side << 31 | location: the location shown */
	size_t rep_alloc;
	struct mnode *nodes;
	size_t n, alloc;
	struct mp_idxset set;           /* (parent, key) -> node */
};

static uint32_t key_of(struct merge *m, int side, uint32_t loc)
{
	const struct mp_analysis *a = m->a[side];
	const struct mp_location *l;
	struct strbuf sb = STRBUF_INIT;
	uint32_t key;
	if (m->key_of[side][loc] != MP_NONE)
		return m->key_of[side][loc];
	l = mp_analysis_location(a, loc);
	strbuf_addstr(&sb, mp_analysis_string(a, l->function));
	strbuf_addch(&sb, '\0');
	strbuf_addstr(&sb, mp_analysis_string(a, l->file));
	strbuf_addf(&sb, "%c%u%c%s", '\0', l->line, '\0', mp_location_module(a, loc));
	key = mp_strtab_intern(&m->keys, sb.buf, sb.len);
	strbuf_release(&sb);
	m->key_of[side][loc] = key;
	ALLOC_GROW(m->rep, (size_t)key + 1, m->rep_alloc);
	/* The new capture's is kept: it is processed first. */
	if (key + 1 == m->keys.n)
		m->rep[key] = (uint32_t)side << 31 | loc;
	return key;
}

struct probe {
	const struct merge *m;
	uint32_t parent, key;
};

static bool node_eq(const void *ctx, uint32_t idx)
{
	const struct probe *p = ctx;
	return p->m->nodes[idx].parent == p->parent && p->m->nodes[idx].key == p->key;
}

static uint32_t child(struct merge *m, uint32_t parent, uint32_t key)
{
	struct probe probe = { m, parent, key };
	uint64_t h = mp_hash_combine(mp_hash_u64(parent), key);
	uint32_t idx = mp_idxset_find(&m->set, h, node_eq, &probe);
	if (idx != MP_NONE)
		return idx;
	ALLOC_GROW(m->nodes, m->n + 1, m->alloc);
	idx = (uint32_t)m->n++;
	memset(&m->nodes[idx], 0, sizeof(m->nodes[idx]));
	m->nodes[idx].parent = parent;
	m->nodes[idx].key = key;
	m->nodes[idx].first_child = m->nodes[idx].next_sibling = MP_NONE;
	mp_idxset_add(&m->set, h, idx);
	return idx;
}

/* Add one side's call tree; its nodes come after their parents, so one pass maps them all. */
static void add_side(struct merge *m, int side, enum mp_view view, bool inverted)
{
	struct mp_calltree t;
	uint32_t *to;
	mp_calltree_init(&t, m->a[side], MP_CALLTREE_ALL_FRAMES | (inverted ? MP_CALLTREE_INVERTED : 0));
	mp_calltree_add_view(&t, view);
	to = xcalloc(t.n ? t.n : 1, sizeof(*to));
	m->nodes[0].self[side] = t.nodes[0].self;
	for (size_t i = 1; i < t.n; i++) {
		const struct mp_calltree_node *c = &t.nodes[i];
		to[i] = child(m, to[c->parent], key_of(m, side, c->location));
		m->nodes[to[i]].self[side].bytes += c->self.bytes;
		m->nodes[to[i]].self[side].count += c->self.count;
	}
	free(to);
	mp_calltree_release(&t);
}

struct sort_ctx {
	const struct merge *m;
};

/* Siblings: more bytes in the new capture first, then in the base, then by function name. */
static int sibling_cmp(const void *x, const void *y, void *ctx)
{
	const struct merge *m = ((const struct sort_ctx *)ctx)->m;
	const struct mnode *p = &m->nodes[*(const uint32_t *)x], *q = &m->nodes[*(const uint32_t *)y];
	int r;
	for (int side = MP_DIFF_NEW; side >= MP_DIFF_BASE; side--)
		if (p->total[side].bytes != q->total[side].bytes)
			return p->total[side].bytes > q->total[side].bytes ? -1 : 1;
	/* A key starts with the function's name. */
	r = strcmp(mp_strtab_get(&m->keys, p->key), mp_strtab_get(&m->keys, q->key));
	return r ? r : (p->key > q->key) - (p->key < q->key);
}

void mp_difftree_build(struct mp_difftree *t, const struct mp_analysis *base,
		       const struct mp_analysis *new, enum mp_view view, bool inverted)
{
	struct merge m = { .a = { base, new } };
	struct sort_ctx ctx = { &m };
	uint32_t *stack, *kids = NULL, *depth;
	size_t sp = 0, kids_alloc = 0;

	mp_strtab_init(&m.keys);
	mp_idxset_init(&m.set);
	for (int side = 0; side < 2; side++) {
		size_t n = m.a[side]->nlocs ? m.a[side]->nlocs : 1;
		m.key_of[side] = xmalloc(n * sizeof(*m.key_of[side]));
		memset(m.key_of[side], 0xff, n * sizeof(*m.key_of[side]));
	}
	child(&m, MP_NONE, MP_NONE); /* the root */
	add_side(&m, MP_DIFF_NEW, view, inverted);
	add_side(&m, MP_DIFF_BASE, view, inverted);
	/* Totals, from the leaves up, and the children lists. */
	for (size_t i = m.n; i-- > 0;) {
		struct mnode *nd = &m.nodes[i];
		for (int side = 0; side < 2; side++) {
			nd->total[side].bytes += nd->self[side].bytes;
			nd->total[side].count += nd->self[side].count;
			if (i) {
				m.nodes[nd->parent].total[side].bytes += nd->total[side].bytes;
				m.nodes[nd->parent].total[side].count += nd->total[side].count;
			}
		}
		if (i) {
			nd->next_sibling = m.nodes[nd->parent].first_child;
			m.nodes[nd->parent].first_child = (uint32_t)i;
		}
	}
	/* Preorder. */
	t->nodes = xcalloc(m.n, sizeof(*t->nodes));
	t->n = 0;
	stack = xcalloc(m.n, sizeof(*stack));
	depth = xcalloc(m.n, sizeof(*depth));
	stack[sp++] = 0;
	while (sp) {
		uint32_t i = stack[--sp], k = 0;
		struct mp_difftree_node *out = &t->nodes[t->n++];
		const struct mnode *nd = &m.nodes[i];
		out->depth = depth[i];
		out->side = i ? m.rep[nd->key] >> 31 : MP_DIFF_NEW;
		out->loc = i ? m.rep[nd->key] & ~(1u << 31) : MP_NONE;
		memcpy(out->self, nd->self, sizeof(out->self));
		memcpy(out->total, nd->total, sizeof(out->total));
		for (uint32_t c = nd->first_child; c != MP_NONE; c = m.nodes[c].next_sibling) {
			ALLOC_GROW(kids, (size_t)k + 1, kids_alloc);
			kids[k++] = c;
		}
		mp_qsort_r(kids, k, sizeof(*kids), sibling_cmp, &ctx);
		while (k) {
			depth[kids[--k]] = depth[i] + 1;
			stack[sp++] = kids[k];
		}
	}
	free(stack);
	free(depth);
	free(kids);
	free(m.nodes);
	free(m.rep);
	free(m.key_of[0]);
	free(m.key_of[1]);
	mp_idxset_release(&m.set);
	mp_strtab_release(&m.keys);
}

void mp_difftree_release(struct mp_difftree *t)
{
	free(t->nodes);
	memset(t, 0, sizeof(*t));
}
