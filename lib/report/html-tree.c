/* The flame graph's data, bounded (lib/report/html-tree.h). */
#include <config.h>
#include "lib/report/html-tree.h"

#include <stdlib.h>
#include <string.h>

#include "lib/analysis/calltree.h"
#include "lib/util/sort.h"
#include "lib/util/xalloc.h"

/* Temporal reports keep this many nodes at least before they merge buckets. */
#define MIN_NODES 2000

struct build {
	const struct mp_analysis *a;
	struct mp_calltree ct;
	uint32_t *slot_node;          /* temporal: slot -> call tree node */
	struct mp_html_interval *civ; /* temporal: the intervals on call tree nodes */
	size_t nciv;
	uint64_t *score;              /* by call tree node: what it matters (with its descendants) */
	bool *keep;
	uint32_t *out_of;             /* call tree node -> output node */
	uint32_t *merged_of;          /* kept call tree node -> its output node of merged frames */
	struct mp_counts *pruned;     /* kept node: the totals of its children not kept */
	bool *has_pruned;
};

/* ---- sorting ---------------------------------------------------------------- */

struct sib_ctx {
	const struct mp_analysis *a;
	const struct mp_calltree_node *nodes;
};

/* Siblings: more inclusive bytes first, ties by function name (the order drawn). */
static int sibling_cmp(const void *x, const void *y, void *ctx)
{
	const struct sib_ctx *c = ctx;
	const struct mp_calltree_node *p = &c->nodes[*(const uint32_t *)x];
	const struct mp_calltree_node *q = &c->nodes[*(const uint32_t *)y];
	const struct mp_location *lp, *lq;
	int r;
	if (p->total.bytes != q->total.bytes)
		return p->total.bytes > q->total.bytes ? -1 : 1;
	lp = mp_analysis_location(c->a, p->location);
	lq = mp_analysis_location(c->a, q->location);
	r = strcmp(mp_analysis_string(c->a, lp->function), mp_analysis_string(c->a, lq->function));
	if (r)
		return r;
	if (p->total.count != q->total.count)
		return p->total.count > q->total.count ? -1 : 1;
	if (p->thread != q->thread)
		return p->thread < q->thread ? -1 : 1;
	return p->location < q->location ? -1 : p->location > q->location;
}

static int interval_cmp(const void *x, const void *y)
{
	const struct mp_html_interval *p = x, *q = y;
	/* Never freed (-1 in the data) sorts first. */
	int64_t pf = p->free == MP_NONE ? -1 : (int64_t)p->free;
	int64_t qf = q->free == MP_NONE ? -1 : (int64_t)q->free;
	if (p->node != q->node)
		return p->node < q->node ? -1 : 1;
	if (p->alloc != q->alloc)
		return p->alloc < q->alloc ? -1 : 1;
	return pf < qf ? -1 : pf > qf;
}

/* Sort intervals and merge those with equal keys; returns how many are left. */
static size_t merge_intervals(struct mp_html_interval *iv, size_t n)
{
	size_t m = 0;
	if (!n)
		return 0;
	mp_qsort(iv, n, sizeof(*iv), interval_cmp);
	for (size_t i = 1; i < n; i++) {
		if (!interval_cmp(&iv[m], &iv[i])) {
			iv[m].c.bytes += iv[i].c.bytes;
			iv[m].c.count += iv[i].c.count;
		} else {
			iv[++m] = iv[i];
		}
	}
	return m + 1;
}

/* ---- what each node matters ------------------------------------------------- */

/* (Unsigned, modulo 2^64 as the analysis' counts: a block may have 2^63 bytes or more.) */
struct live_step {
	uint64_t at;     /* the bucket from which */
	uint64_t bytes;
	bool up;         /* live from at on, else no longer */
};

static int step_cmp(const void *x, const void *y)
{
	const struct live_step *p = x, *q = y;
	return p->at < q->at ? -1 : p->at > q->at;
}

/*
 * The most bytes each node held live at a bucket's high-water mark: an
 * interval is live at bucket s's mark when alloc <= 2s < free.
 */
/*
 * Sort intervals by key(x) < nkeys, keeping the order of equal keys: a
 * counting sort, since there may be millions and the keys are few (nodes,
 * or the halves of the buckets).
 */
static void sort_by(struct mp_html_interval *iv, size_t n, size_t nkeys,
		    size_t (*key)(const struct mp_html_interval *, size_t), size_t ctx)
{
	size_t *at = xcalloc(nkeys + 1, sizeof(*at));
	struct mp_html_interval *out = xmalloc((n ? n : 1) * sizeof(*out));
	for (size_t i = 0; i < n; i++)
		at[key(&iv[i], ctx) + 1]++;
	for (size_t k = 0; k < nkeys; k++)
		at[k + 1] += at[k];
	for (size_t i = 0; i < n; i++)
		out[at[key(&iv[i], ctx)]++] = iv[i];
	memcpy(iv, out, n * sizeof(*iv));
	free(out);
	free(at);
}

static size_t node_key(const struct mp_html_interval *x, size_t unused)
{
	(void)unused;
	return x->node;
}

/* Halves are below limit (2 * buckets); never freed (MP_NONE) is the highest key. */
static size_t alloc_key(const struct mp_html_interval *x, size_t limit)
{
	return x->alloc < limit ? x->alloc : limit;
}
static size_t free_key(const struct mp_html_interval *x, size_t limit)
{
	return x->free < limit ? x->free : limit;
}

static void temporal_scores(struct build *b, uint64_t *own)
{
	struct mp_html_interval *iv = b->civ;
	struct live_step *st = xmalloc(2 * (b->nciv ? b->nciv : 1) * sizeof(*st));
	sort_by(iv, b->nciv, b->ct.n, node_key, 0);
	for (size_t i = 0, j; i < b->nciv; i = j) {
		size_t k = 0;
		uint64_t live = 0, most = 0;
		for (j = i; j < b->nciv && iv[j].node == iv[i].node; j++) {
			uint64_t first = ((uint64_t)iv[j].alloc + 1) / 2;
			uint64_t last = iv[j].free == MP_NONE ? UINT64_MAX - 1 : iv[j].free ? (iv[j].free - 1) / 2 : 0;
			if (iv[j].free == 0 || first > last)
				continue;
			st[k++] = (struct live_step){ first, iv[j].c.bytes, true };
			st[k++] = (struct live_step){ last + 1, iv[j].c.bytes, false };
		}
		mp_qsort(st, k, sizeof(*st), step_cmp);
		for (size_t s = 0; s < k; s++) {
			/* (Within a bucket the order is any: only its end's value is compared.) */
			live = st[s].up ? live + st[s].bytes : live - st[s].bytes;
			if ((s + 1 == k || st[s + 1].at != st[s].at) && live > most)
				most = live;
		}
		own[iv[i].node] = most;
	}
	free(st);
}

static void scores(struct build *b, bool temporal)
{
	const struct mp_calltree *ct = &b->ct;
	b->score = xcalloc(ct->n, sizeof(*b->score));
	if (temporal)
		temporal_scores(b, b->score);
	/* Parents come before their children: a node matters as much as its most important descendant. */
	for (size_t i = ct->n; i-- > 1;) {
		uint32_t p = ct->nodes[i].parent;
		if (ct->nodes[i].total.bytes > b->score[i])
			b->score[i] = ct->nodes[i].total.bytes;
		if (b->score[i] > b->score[p])
			b->score[p] = b->score[i];
	}
}

/* ---- choosing the nodes --------------------------------------------------------- */

/* Keep the nodes that matter more than thr (and the root, and with split threads its children); the output's size. */
static size_t choose(struct build *b, uint64_t thr, bool split)
{
	const struct mp_calltree *ct = &b->ct;
	size_t n = 1;
	memset(b->has_pruned, 0, ct->n * sizeof(*b->has_pruned));
	b->keep[0] = true;
	for (size_t i = 1; i < ct->n; i++) {
		uint32_t p = ct->nodes[i].parent;
		b->keep[i] = b->keep[p] && (b->score[i] > thr || (split && p == 0));
		if (b->keep[i])
			n++;
		else if (b->keep[p] && !b->has_pruned[p]) {
			b->has_pruned[p] = true;
			n++;
		}
	}
	return n;
}

static void choose_within(struct build *b, size_t limit, bool split)
{
	const struct mp_calltree *ct = &b->ct;
	uint64_t *sorted;
	size_t lo = 0, hi;
	b->keep = xcalloc(ct->n, sizeof(*b->keep));
	b->has_pruned = xcalloc(ct->n, sizeof(*b->has_pruned));
	if (ct->n <= limit) {
		/* Nothing to merge: keep everything, even the nodes without bytes. */
		for (size_t i = 0; i < ct->n; i++)
			b->keep[i] = true;
		return;
	}
	/* The smallest threshold among the nodes' scores that fits: a binary search. */
	sorted = xmalloc(ct->n * sizeof(*sorted));
	for (size_t i = 0; i < ct->n; i++)
		sorted[i] = b->score[i];
	mp_qsort(sorted, ct->n, sizeof(*sorted), mp_cmp_u64_desc);
	hi = ct->n - 1; /* thr = sorted[hi], the smallest score, keeps the most */
	while (lo < hi) {
		size_t mid = (lo + hi + 1) / 2;
		if (choose(b, sorted[mid], split) <= limit)
			lo = mid;
		else
			hi = mid - 1;
	}
	choose(b, sorted[lo], split);
	free(sorted);
}

/* ---- the output ----------------------------------------------------------------- */

static uint32_t add_node(struct mp_html_tree *t, size_t *alloc, uint32_t depth, uint32_t loc,
			 uint32_t thread, struct mp_counts self)
{
	ALLOC_GROW(t->nodes, t->n + 1, *alloc);
	t->nodes[t->n] = (struct mp_html_node){ depth, loc, thread, self };
	return (uint32_t)t->n++;
}

/* The kept tree in preorder, each kept node followed by its children and its merged frames. */
static void emit(struct build *b, struct mp_html_tree *t)
{
	const struct mp_calltree *ct = &b->ct;
	const struct mp_calltree_node *cn = ct->nodes;
	struct sib_ctx ctx = { b->a, cn };
	/* Stack entries: a call tree node, or ~p for the merged frames of kept node p. */
	uint32_t *stack = xmalloc((2 * ct->n + 1) * sizeof(*stack)), *kids = NULL;
	size_t sp = 0, alloc = 0, kids_alloc = 0;
	b->out_of = xcalloc(ct->n, sizeof(*b->out_of));
	b->merged_of = xcalloc(ct->n, sizeof(*b->merged_of));
	b->pruned = xcalloc(ct->n, sizeof(*b->pruned));
	for (size_t i = 1; i < ct->n; i++) {
		if (b->keep[i])
			continue;
		t->frames_merged++;
		if (b->keep[cn[i].parent]) {
			b->pruned[cn[i].parent].bytes += cn[i].total.bytes;
			b->pruned[cn[i].parent].count += cn[i].total.count;
		}
	}
	stack[sp++] = 0;
	while (sp) {
		uint32_t x = stack[--sp], k = 0;
		bool merged_placed;
		if (x & (1u << 31)) {
			uint32_t p = ~x;
			b->merged_of[p] = add_node(t, &alloc, cn[p].depth + 1, MP_HTML_MERGED_LOC,
						   cn[p].thread, b->pruned[p]);
			t->merged++;
			continue;
		}
		b->out_of[x] = add_node(t, &alloc, cn[x].depth, cn[x].location, cn[x].thread, cn[x].self);
		ALLOC_GROW(kids, cn[x].nchildren + 1, kids_alloc);
		for (uint32_t c = cn[x].first_child; c != MP_NONE; c = cn[c].next_sibling)
			if (b->keep[c])
				kids[k++] = c;
		mp_qsort_r(kids, k, sizeof(*kids), sibling_cmp, &ctx);
		/* Pushed in reverse: the merged frames go after the kept siblings with as many bytes. */
		merged_placed = !b->has_pruned[x];
		while (k) {
			if (!merged_placed && cn[kids[k - 1]].total.bytes >= b->pruned[x].bytes) {
				stack[sp++] = ~x;
				merged_placed = true;
			}
			stack[sp++] = kids[--k];
		}
		if (!merged_placed)
			stack[sp++] = ~x;
	}
	/* A node not kept is in the merged frames of its nearest kept ancestor. */
	for (size_t i = 1; i < ct->n; i++)
		if (!b->keep[i]) {
			uint32_t p = cn[i].parent;
			b->out_of[i] = b->keep[p] ? b->merged_of[p] : b->out_of[p];
		}
	free(stack);
	free(kids);
}

/* ---- the timeline --------------------------------------------------------------- */

static void halve_buckets(struct mp_html_tree *t)
{
	size_t nb = t->nbuckets, nn = (nb + 1) / 2, m = 0;
	bool *x_wins = xcalloc(nn, sizeof(*x_wins));
	for (size_t i = 0; i < nn; i++) {
		size_t x = 2 * i, y = 2 * i + 1;
		x_wins[i] = y >= nb || t->hwm_bytes[x] >= t->hwm_bytes[y];
		t->bucket_us[i] = t->bucket_us[x];
		t->hwm_us[i] = x_wins[i] ? t->hwm_us[x] : t->hwm_us[y];
		t->hwm_bytes[i] = x_wins[i] ? t->hwm_bytes[x] : t->hwm_bytes[y];
	}
	t->bucket_us[nn] = t->bucket_us[nb];
	for (size_t i = 0; i < t->niv; i++) {
		struct mp_html_interval v = t->iv[i];
		v.alloc = mp_analysis_merged_half(v.alloc, x_wins);
		v.free = mp_analysis_merged_half(v.free, x_wins);
		if (v.alloc != v.free) /* live at no high-water mark any more */
			t->iv[m++] = v;
	}
	t->niv = merge_intervals(t->iv, m);
	t->nbuckets = nn;
	t->buckets_merged++;
	free(x_wins);
}

static int halves_cmp(const void *x, const void *y)
{
	const struct mp_html_interval *p = x, *q = y;
	if (p->alloc != q->alloc)
		return p->alloc < q->alloc ? -1 : 1;
	return p->free < q->free ? -1 : p->free > q->free;
}

/* The intervals sorted by their halves, once (free first, then alloc: the sort keeps order). */
static void timeline_start(struct build *b)
{
	size_t limit = 2 * (b->a->nsamples + 1);
	sort_by(b->civ, b->nciv, limit + 1, free_key, limit);
	sort_by(b->civ, b->nciv, limit + 1, alloc_key, limit);
}

/*
 * The timeline of the nodes chosen: intervals on output nodes, equal keys
 * merged (slots of other kinds share nodes, merged frames share theirs):
 * within each run of equal halves, a node's first interval takes the
 * others'. Sorted by node only when they fit the limit (the last try).
 */
static void timeline(struct build *b, struct mp_html_tree *t, size_t limit, size_t nout)
{
	const struct mp_analysis *a = b->a;
	size_t nb = a->nsamples ? a->nsamples : 1, m = 0;
	uint32_t *at = xmalloc((nout ? nout : 1) * sizeof(*at));
	size_t *run_of = xmalloc((nout ? nout : 1) * sizeof(*run_of));
	t->nbuckets = nb;
	t->bucket_us = xcalloc(nb + 1, sizeof(*t->bucket_us));
	t->hwm_us = xcalloc(nb, sizeof(*t->hwm_us));
	t->hwm_bytes = xcalloc(nb, sizeof(*t->hwm_bytes));
	if (!a->nsamples) {
		/* Nothing happened: one empty bucket over the whole time. */
		t->bucket_us[1] = a->duration_us;
	} else {
		for (size_t k = 0; k <= nb; k++) {
			/* The last boundary is the end of tracking. */
			uint64_t tm = k ? a->samples[k - 1].time_us : 0;
			t->bucket_us[k] = k == nb && a->duration_us > tm ? a->duration_us : tm;
		}
		for (size_t k = 0; k < nb; k++) {
			t->hwm_us[k] = a->samples[k].hwm_time_us;
			t->hwm_bytes[k] = a->samples[k].heap_max;
		}
	}
	size_t iv_alloc = 0;
	for (size_t i = 0; i < nout; i++)
		run_of[i] = SIZE_MAX;
	for (size_t i = 0, run = 0; i < b->nciv; i++) {
		uint32_t node = b->out_of[b->civ[i].node];
		if (i && halves_cmp(&b->civ[i - 1], &b->civ[i]))
			run++;
		if (run_of[node] == run) {
			t->iv[at[node]].c.bytes += b->civ[i].c.bytes;
			t->iv[at[node]].c.count += b->civ[i].c.count;
			continue;
		}
		run_of[node] = run;
		at[node] = (uint32_t)m;
		ALLOC_GROW(t->iv, m + 1, iv_alloc);
		t->iv[m] = b->civ[i];
		t->iv[m++].node = node;
	}
	t->niv = m;
	if (m <= limit)
		mp_qsort(t->iv, m, sizeof(*t->iv), interval_cmp);
	free(at);
	free(run_of);
}

/* Forget a choice of nodes and what was made of it, for another. */
static void reset(struct build *b, struct mp_html_tree *t)
{
	free(b->keep);
	free(b->has_pruned);
	free(b->out_of);
	free(b->merged_of);
	free(b->pruned);
	b->keep = b->has_pruned = NULL;
	b->out_of = b->merged_of = NULL;
	b->pruned = NULL;
	mp_html_tree_release(t);
}

/* ---- the whole ---------------------------------------------------------------- */

void mp_html_tree_build(struct mp_html_tree *t, const struct mp_analysis *a, enum mp_view view,
			bool inverted, bool split, bool temporal, const struct mp_html_limits *lim)
{
	struct build b;
	/* Every frame: the page folds them itself (flamegraph.js), so that it can show them all. */
	unsigned flags = MP_CALLTREE_ALL_FRAMES | (inverted ? MP_CALLTREE_INVERTED : 0) |
			 (split ? MP_CALLTREE_SPLIT_THREADS : 0);

	memset(t, 0, sizeof(*t));
	memset(&b, 0, sizeof(b));
	b.a = a;
	mp_calltree_init(&b.ct, a, flags);
	if (temporal) {
		/* Every slot an interval refers to has a node, even with nothing in the view. */
		bool *has_iv = xcalloc(a->nslots ? a->nslots : 1, sizeof(*has_iv));
		b.slot_node = xcalloc(a->nslots ? a->nslots : 1, sizeof(*b.slot_node));
		for (size_t i = 0; i < a->nintervals; i++)
			has_iv[a->intervals[i].slot] = true;
		for (size_t i = 0; i < a->nslots; i++) {
			const struct mp_slot *s = &a->slots[i];
			struct mp_counts c = mp_slot_counts(s, view);
			if (c.count || has_iv[i])
				b.slot_node[i] = mp_calltree_add(&b.ct, s->stack, s->thread, c);
		}
		free(has_iv);
		b.civ = xmalloc((a->nintervals ? a->nintervals : 1) * sizeof(*b.civ));
		for (size_t i = 0; i < a->nintervals; i++) {
			const struct mp_interval *x = &a->intervals[i];
			b.civ[i] = (struct mp_html_interval){ b.slot_node[x->slot], x->alloc, x->free, x->c };
		}
		b.nciv = a->nintervals;
	} else {
		mp_calltree_add_view(&b.ct, view);
	}
	mp_calltree_finish(&b.ct);
	scores(&b, temporal);
	if (temporal)
		timeline_start(&b);
	/*
	 * Too many intervals: first fewer nodes (the top stacks of every
	 * bucket stay), down to MIN_NODES; then fewer buckets.
	 */
	for (size_t nodes = lim->nodes;; nodes /= 2) {
		choose_within(&b, nodes, split);
		emit(&b, t);
		if (!temporal)
			break;
		timeline(&b, t, lim->intervals, t->n);
		if (t->niv <= lim->intervals || nodes / 2 < MIN_NODES)
			break;
		reset(&b, t);
	}
	if (temporal && t->niv > lim->intervals) {
		t->niv = merge_intervals(t->iv, t->niv);
		while (t->niv > lim->intervals && t->nbuckets > 1)
			halve_buckets(t);
	}
	free(b.slot_node);
	free(b.civ);
	free(b.score);
	free(b.keep);
	free(b.has_pruned);
	free(b.out_of);
	free(b.merged_of);
	free(b.pruned);
	mp_calltree_release(&b.ct);
}

void mp_html_tree_release(struct mp_html_tree *t)
{
	free(t->nodes);
	free(t->bucket_us);
	free(t->hwm_us);
	free(t->hwm_bytes);
	free(t->iv);
	memset(t, 0, sizeof(*t));
}
