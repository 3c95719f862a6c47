/* Questions to a finished analysis: histogram buckets, threads, kinds, slots grouped flat. */
#include <config.h>
#include "lib/analysis/analysis.h"

#include <stdlib.h>

#include "lib/util/hash.h"
#include "lib/util/sort.h"
#include "lib/util/strbuf.h"
#include "lib/util/xalloc.h"

/* ---- lookups ------------------------------------------------------------ */

uint64_t mp_hist_bucket_min(unsigned k)
{
	return k == 0 ? 0 : (uint64_t)1 << (k - 1);
}

uint64_t mp_hist_bucket_max(unsigned k)
{
	if (k == 0)
		return 0;
	return k >= 64 ? UINT64_MAX : ((uint64_t)1 << k) - 1;
}

void mp_analysis_thread_label(const struct mp_analysis *a, uint32_t thread, struct strbuf *sb)
{
	const struct mp_thread *t;
	if (thread == MP_THREAD_MERGED || thread >= a->nthreads) {
		strbuf_addstr(sb, "merged thread");
		return;
	}
	t = &a->threads[thread];
	strbuf_addf(sb, "%llu", (unsigned long long)t->tid);
	if (t->name)
		strbuf_addf(sb, " (%s)", mp_analysis_string(a, t->name));
}

const struct mp_kind_totals *mp_analysis_kind(const struct mp_analysis *a, uint32_t kind)
{
	for (size_t i = 0; i < a->nkinds; i++)
		if (a->kinds[i].kind == kind)
			return &a->kinds[i];
	return NULL;
}

struct mp_counts mp_analysis_view_total(const struct mp_analysis *a, enum mp_view view)
{
	struct mp_counts t = { 0, 0 };
	for (size_t i = 0; i < a->nslots; i++) {
		struct mp_counts c = mp_slot_counts(&a->slots[i], view);
		t.bytes += c.bytes;
		t.count += c.count;
	}
	return t;
}

/* ---- flat aggregations -------------------------------------------------- */

struct group_probe {
	const struct mp_group_row *rows;
	const struct mp_group_row *want;
};

static bool group_eq(const void *ctx, uint32_t idx)
{
	const struct group_probe *p = ctx;
	const struct mp_group_row *r = &p->rows[idx], *w = p->want;
	return r->stack == w->stack && r->site == w->site && r->caller == w->caller &&
	       r->module == w->module && r->kind == w->kind && r->thread == w->thread &&
	       r->process == w->process;
}

static int cmp_u32(uint32_t x, uint32_t y)
{
	return x < y ? -1 : x > y;
}

static int row_cmp(const struct mp_group_row *x, const struct mp_group_row *y,
		   enum mp_sort_key key)
{
	uint64_t x1 = key == MP_SORT_BYTES ? x->c.bytes : x->c.count;
	uint64_t y1 = key == MP_SORT_BYTES ? y->c.bytes : y->c.count;
	uint64_t x2 = key == MP_SORT_BYTES ? x->c.count : x->c.bytes;
	uint64_t y2 = key == MP_SORT_BYTES ? y->c.count : y->c.bytes;
	int c;
	if (x1 != y1)
		return x1 > y1 ? -1 : 1;
	if (x2 != y2)
		return x2 > y2 ? -1 : 1;
	if ((c = cmp_u32(x->site, y->site)) || (c = cmp_u32(x->caller, y->caller)) ||
	    (c = cmp_u32(x->module, y->module)) ||
	    (c = cmp_u32(x->stack, y->stack)) || (c = cmp_u32(x->kind, y->kind)))
		return c;
	if ((c = cmp_u32(x->thread, y->thread)))
		return c;
	return cmp_u32(x->process, y->process);
}

static int row_cmp_bytes(const void *x, const void *y)
{
	return row_cmp(x, y, MP_SORT_BYTES);
}

static int row_cmp_count(const void *x, const void *y)
{
	return row_cmp(x, y, MP_SORT_COUNT);
}

void mp_group_sort(struct mp_group_row *rows, size_t n, enum mp_sort_key key)
{
	mp_qsort(rows, n, sizeof(*rows), key == MP_SORT_BYTES ? row_cmp_bytes : row_cmp_count);
}

size_t mp_analysis_group(const struct mp_analysis *a, enum mp_view view, unsigned by,
			 enum mp_sort_key key, struct mp_group_row **rows)
{
	struct mp_idxset set;
	struct mp_group_row *out = NULL;
	size_t n = 0, alloc = 0;

	mp_idxset_init(&set);
	for (size_t i = 0; i < a->nslots; i++) {
		const struct mp_slot *s = &a->slots[i];
		struct mp_counts c = mp_slot_counts(s, view);
		struct mp_group_row want;
		struct group_probe probe = { NULL, &want };
		uint64_t h;
		uint32_t idx;
		if (!c.count)
			continue;
		want.stack = (by & MP_BY_STACK) ? s->stack : MP_NONE;
		want.site = (by & MP_BY_SITE) ? s->site : MP_NONE;
		want.caller = (by & MP_BY_SITE) ? s->caller : MP_NONE;
		want.module = (by & MP_BY_MODULE) ? a->locs[s->site].module : MP_NONE;
		want.kind = (by & MP_BY_KIND) ? s->kind : MP_NONE;
		want.thread = (by & MP_BY_THREAD) ? s->thread : MP_NONE;
		want.process = (by & MP_BY_PROCESS) ? s->process : MP_NONE;
		h = mp_hash_u64(want.stack);
		/* (one word for the site and its caller) */
		h = mp_hash_combine(h, (uint64_t)want.site | (uint64_t)want.caller << 32);
		h = mp_hash_combine(h, want.module);
		h = mp_hash_combine(h, want.kind);
		h = mp_hash_combine(h, want.thread);
		h = mp_hash_combine(h, want.process);
		probe.rows = out;
		idx = mp_idxset_find(&set, h, group_eq, &probe);
		if (idx == MP_NONE) {
			ALLOC_GROW(out, n + 1, alloc);
			idx = (uint32_t)n++;
			want.c.bytes = want.c.count = 0;
			out[idx] = want;
			mp_idxset_add(&set, h, idx);
		}
		out[idx].c.bytes += c.bytes;
		out[idx].c.count += c.count;
	}
	mp_idxset_release(&set);
	mp_group_sort(out, n, key);
	*rows = out;
	return n;
}
