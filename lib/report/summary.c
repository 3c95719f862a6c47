/* The summary report: memory by function, as memray's summary table. */
#include <config.h>
#include "lib/report/summary.h"

#include <stdlib.h>
#include <string.h>

#include "lib/report/report.h"
#include "lib/util/sort.h"
#include "lib/util/xalloc.h"

struct fn_probe {
	const struct mp_summary *s;
	uint32_t function, file;
};

static bool fn_eq(const void *ctx, uint32_t idx)
{
	const struct fn_probe *p = ctx;
	return p->s->rows[idx].function == p->function && p->s->rows[idx].file == p->file;
}

/* The row of a location's function: its file, or its module when the file is unknown. */
static uint32_t row_of(struct mp_summary *s, const struct mp_analysis *a, uint32_t loc)
{
	const struct mp_location *l = mp_analysis_location(a, loc);
	uint32_t file = l->file;
	struct fn_probe probe;
	uint64_t h;
	uint32_t idx;
	if (!file && l->module != MP_NONE)
		file = a->modules[l->module].path;
	probe = (struct fn_probe){ s, l->function, file };
	h = mp_hash_combine(mp_hash_u64(l->function), file);
	idx = mp_idxset_find(&s->set_, h, fn_eq, &probe);
	if (idx != MP_NONE)
		return idx;
	ALLOC_GROW(s->rows, s->n + 1, s->alloc);
	idx = (uint32_t)s->n++;
	memset(&s->rows[idx], 0, sizeof(s->rows[idx]));
	s->rows[idx].function = l->function;
	s->rows[idx].file = file;
	s->rows[idx].loc = loc;
	s->rows[idx].stamp_ = MP_NONE;
	mp_idxset_add(&s->set_, h, idx);
	return idx;
}

void mp_summary_build(struct mp_summary *s, const struct mp_analysis *a, enum mp_view view)
{
	uint32_t *buf = NULL;
	size_t alloc = 0;
	memset(s, 0, sizeof(*s));
	mp_idxset_init(&s->set_);
	for (size_t i = 0; i < a->nslots; i++) {
		struct mp_counts c = mp_slot_counts(&a->slots[i], view);
		uint32_t site;
		size_t n;
		if (!c.count)
			continue;
		s->view_total.bytes += c.bytes;
		s->view_total.count += c.count;
		n = mp_analysis_view_stack(a, a->slots[i].stack, &buf, &alloc);
		/* Own memory is the site's (one of the frames shown): not the allocator's plumbing. */
		site = a->slots[i].site;
		for (size_t k = 0; k < n; k++) {
			uint32_t idx = row_of(s, a, buf[k]); /* may move s->rows */
			struct mp_summary_row *r = &s->rows[idx];
			if (buf[k] == site) {
				r->own.bytes += c.bytes;
				r->own.count += c.count;
				site = MP_NONE;
			}
			if (r->stamp_ == i)
				continue; /* recursion: this stack is already counted */
			r->stamp_ = (uint32_t)i;
			r->total.bytes += c.bytes;
			r->total.count += c.count;
		}
	}
	free(buf);
}

void mp_summary_release(struct mp_summary *s)
{
	free(s->rows);
	mp_idxset_release(&s->set_);
	memset(s, 0, sizeof(*s));
}

struct sort_ctx {
	const struct mp_analysis *a;
	int column;
};

static int cmp_u64_desc(uint64_t x, uint64_t y)
{
	return x > y ? -1 : x < y;
}

static int row_cmp(const void *x, const void *y, void *ctx)
{
	const struct sort_ctx *sc = ctx;
	const struct mp_summary_row *r1 = x, *r2 = y;
	int c;
	switch (sc->column) {
	case 3: case 4:
		if ((c = cmp_u64_desc(r1->own.bytes, r2->own.bytes)))
			return c;
		break;
	case 5:
		if ((c = cmp_u64_desc(r1->total.count, r2->total.count)))
			return c;
		break;
	}
	if ((c = cmp_u64_desc(r1->total.bytes, r2->total.bytes)) ||
	    (c = cmp_u64_desc(r1->own.bytes, r2->own.bytes)) ||
	    (c = cmp_u64_desc(r1->total.count, r2->total.count)))
		return c;
	if ((c = strcmp(mp_analysis_string(sc->a, r1->function), mp_analysis_string(sc->a, r2->function))))
		return c;
	return strcmp(mp_analysis_string(sc->a, r1->file), mp_analysis_string(sc->a, r2->file));
}

void mp_summary_sort(struct mp_summary *s, const struct mp_analysis *a, int column)
{
	struct sort_ctx ctx = { a, column };
	mp_qsort_r(s->rows, s->n, sizeof(*s->rows), row_cmp, &ctx);
}

static void size_cell(struct mp_table *t, size_t col, uint64_t bytes, uint64_t total)
{
	struct strbuf sb = STRBUF_INIT;
	mp_format_size(&sb, bytes);
	mp_table_cell(t, col, sb.buf, mp_share_color(bytes, total));
	strbuf_release(&sb);
}

static void percent_cell(struct mp_table *t, size_t col, uint64_t bytes, uint64_t total)
{
	struct strbuf sb = STRBUF_INIT;
	mp_format_percent(&sb, bytes, total);
	mp_table_cell(t, col, sb.buf, mp_share_color(bytes, total));
	strbuf_release(&sb);
}

void mp_summary_render(const struct mp_summary *s, const struct mp_analysis *a, int column,
		       size_t max_rows, const struct mp_term *t, struct strbuf *out)
{
	static const char *const names[] = {
		"Location", "Total Memory", "Total Memory %", "Own Memory", "Own Memory %",
		"Allocation Count",
	};
	static const enum mp_align align[] = {
		MP_ALIGN_LEFT, MP_ALIGN_RIGHT, MP_ALIGN_RIGHT, MP_ALIGN_RIGHT, MP_ALIGN_RIGHT,
		MP_ALIGN_RIGHT,
	};
	char marked[32];
	const char *headers[6];
	struct mp_table table;
	struct strbuf fn = STRBUF_INIT, file = STRBUF_INIT;
	uint64_t total = s->view_total.bytes;

	/* The sorted column's header is marked (1 and 2 sort alike, as do 3 and 4). */
	for (int c = 0; c < 6; c++)
		headers[c] = names[c];
	if (column >= MP_SUMMARY_MIN_COLUMN && column <= MP_SUMMARY_MAX_COLUMN) {
		snprintf(marked, sizeof(marked), "<%s>", names[column]);
		headers[column] = marked;
	}
	mp_table_init(&table, 6, headers, align, 0);
	for (size_t i = 0; i < s->n && i < max_rows; i++) {
		const struct mp_summary_row *r = &s->rows[i];
		static const enum mp_color colors[3] = { MP_COLOR_MAGENTA, MP_COLOR_RESET,
							 MP_COLOR_CYAN };
		const char *segs[3];
		char count[32];
		strbuf_reset(&fn);
		strbuf_reset(&file);
		mp_report_function(a, r->loc, t->full_names, &fn);
		mp_text_addstr_safe(&file, r->file ? mp_analysis_string(a, r->file) : "???");
		segs[0] = fn.buf;
		segs[1] = " at ";
		segs[2] = file.buf;
		mp_table_row(&table);
		/* [python interpreter] is nowhere: no " at ???". */
		mp_table_cell_segs(&table, 0, r->loc == a->interpreter_loc ? 1 : 3, segs, colors);
		size_cell(&table, 1, r->total.bytes, total);
		percent_cell(&table, 2, r->total.bytes, total);
		size_cell(&table, 3, r->own.bytes, total);
		percent_cell(&table, 4, r->own.bytes, total);
		snprintf(count, sizeof(count), "%llu", (unsigned long long)r->total.count);
		mp_table_cell(&table, 5, count, MP_COLOR_RESET);
	}
	mp_table_render(&table, t, t->limit, out);
	mp_table_release(&table);
	strbuf_release(&fn);
	strbuf_release(&file);
}
