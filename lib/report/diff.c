/* memprof diff: two captures compared by allocation site. */
#include <config.h>
#include "lib/report/diff.h"

#include <stdlib.h>
#include <string.h>

#include "lib/report/json.h"
#include "lib/report/report.h"
#include "lib/util/sort.h"
#include "lib/util/xalloc.h"

struct site_probe {
	const struct mp_diff *d;
	const char *function, *file, *caller, *caller_file;
};

static bool site_eq(const void *ctx, uint32_t idx)
{
	const struct site_probe *q = ctx;
	const struct mp_diff_row *r = &q->d->rows[idx];
	return !strcmp(r->function, q->function) && !strcmp(r->file, q->file) &&
	       !strcmp(r->caller, q->caller) && !strcmp(r->caller_file, q->caller_file);
}

static uint64_t hash_str(const char *s)
{
	return mp_hash_bytes(s, strlen(s));
}

/* A location's function and its file ("" when unknown; the module's path for native code). */
static void name_of(const struct mp_analysis *a, uint32_t loc, const char **function,
		    const char **file)
{
	const struct mp_location *l = mp_analysis_location(a, loc);
	*function = mp_analysis_string(a, l->function);
	*file = "";
	if (l->file)
		*file = mp_analysis_string(a, l->file);
	else if (l->module != MP_NONE)
		*file = mp_analysis_string(a, a->modules[l->module].path);
}

static void add_counts(struct mp_counts *to, struct mp_counts c)
{
	to->bytes += c.bytes;
	to->count += c.count;
}

/* Add every slot of a to the rows of its site, on one side. */
static void add_analysis(struct mp_diff *d, const struct mp_analysis *a, bool is_new)
{
	for (size_t i = 0; i < a->nslots; i++) {
		const struct mp_slot *s = &a->slots[i];
		struct site_probe probe = { d, "", "", "", "" };
		struct mp_diff_side *side;
		uint64_t h;
		uint32_t idx;
		name_of(a, s->site, &probe.function, &probe.file);
		if (s->caller != MP_NONE)
			name_of(a, s->caller, &probe.caller, &probe.caller_file);
		h = mp_hash_combine(mp_hash_combine(hash_str(probe.function), hash_str(probe.file)),
				    mp_hash_combine(hash_str(probe.caller), hash_str(probe.caller_file)));
		idx = mp_idxset_find(&d->set_, h, site_eq, &probe);
		if (idx == MP_NONE) {
			ALLOC_GROW(d->rows, d->n + 1, d->alloc);
			idx = (uint32_t)d->n++;
			memset(&d->rows[idx], 0, sizeof(d->rows[idx]));
			d->rows[idx].function = probe.function;
			d->rows[idx].file = probe.file;
			d->rows[idx].caller = probe.caller;
			d->rows[idx].caller_file = probe.caller_file;
			mp_idxset_add(&d->set_, h, idx);
		}
		side = is_new ? &d->rows[idx].new : &d->rows[idx].base;
		add_counts(&side->peak, s->peak);
		add_counts(&side->leaked, s->leaked);
		add_counts(&side->allocated, s->allocated);
	}
}

static bool counts_eq(struct mp_counts x, struct mp_counts y)
{
	return x.bytes == y.bytes && x.count == y.count;
}

static bool changed(const struct mp_diff_row *r)
{
	return !counts_eq(r->base.peak, r->new.peak) || !counts_eq(r->base.leaked, r->new.leaked) ||
	       !counts_eq(r->base.allocated, r->new.allocated);
}

static uint64_t abs_change(uint64_t from, uint64_t to)
{
	return from > to ? from - to : to - from;
}

/* The sort key: the largest absolute change of peak or leaked bytes. */
static uint64_t bytes_change(const struct mp_diff_row *r)
{
	uint64_t p = abs_change(r->base.peak.bytes, r->new.peak.bytes);
	uint64_t l = abs_change(r->base.leaked.bytes, r->new.leaked.bytes);
	return p > l ? p : l;
}

static int cmp_desc(uint64_t x, uint64_t y)
{
	return x > y ? -1 : x < y;
}

static int row_cmp(const void *x, const void *y)
{
	const struct mp_diff_row *r1 = x, *r2 = y;
	int c;
	if ((c = cmp_desc(bytes_change(r1), bytes_change(r2))) ||
	    (c = cmp_desc(abs_change(r1->base.allocated.count, r1->new.allocated.count),
			  abs_change(r2->base.allocated.count, r2->new.allocated.count))) ||
	    (c = cmp_desc(abs_change(r1->base.allocated.bytes, r1->new.allocated.bytes),
			  abs_change(r2->base.allocated.bytes, r2->new.allocated.bytes))) ||
	    (c = strcmp(r1->function, r2->function)) || (c = strcmp(r1->file, r2->file)) ||
	    (c = strcmp(r1->caller, r2->caller)))
		return c;
	return strcmp(r1->caller_file, r2->caller_file);
}

static void totals(struct mp_diff_side *t, const struct mp_analysis *a)
{
	t->peak = mp_analysis_view_total(a, MP_VIEW_PEAK);
	t->leaked = mp_analysis_view_total(a, MP_VIEW_LEAKS);
	t->allocated = mp_analysis_view_total(a, MP_VIEW_ALLOCATED);
}

void mp_diff_build(struct mp_diff *d, const struct mp_analysis *base, const struct mp_analysis *new)
{
	size_t kept = 0;
	memset(d, 0, sizeof(*d));
	mp_idxset_init(&d->set_);
	add_analysis(d, base, false);
	add_analysis(d, new, true);
	/* The set indexes rows by position: it goes before the rows move. */
	mp_idxset_release(&d->set_);
	for (size_t i = 0; i < d->n; i++)
		if (changed(&d->rows[i]))
			d->rows[kept++] = d->rows[i];
	d->n = kept;
	mp_qsort(d->rows, d->n, sizeof(*d->rows), row_cmp);
	totals(&d->total_base, base);
	totals(&d->total_new, new);
}

void mp_diff_release(struct mp_diff *d)
{
	free(d->rows);
	mp_idxset_release(&d->set_);
	memset(d, 0, sizeof(*d));
}

/* A signed change of bytes: "+1.000 KiB", "-24 B", "0 B". */
static void size_change(struct strbuf *sb, uint64_t from, uint64_t to)
{
	if (from != to)
		strbuf_addch(sb, to > from ? '+' : '-');
	mp_format_size(sb, abs_change(from, to));
}

static void count_change(struct strbuf *sb, uint64_t from, uint64_t to)
{
	if (from != to)
		strbuf_addch(sb, to > from ? '+' : '-');
	mp_format_count(sb, abs_change(from, to));
}

/* "Peak memory: 4.000 KiB in 3 allocations -> 1.000 KiB in 1 allocation (-3.000 KiB, -2)" */
static void total_line(struct strbuf *out, const char *what, struct mp_counts from,
		       struct mp_counts to)
{
	strbuf_addf(out, "%s: ", what);
	mp_format_size(out, from.bytes);
	strbuf_addf(out, " in %llu allocation%s -> ", (unsigned long long)from.count,
		    from.count == 1 ? "" : "s");
	mp_format_size(out, to.bytes);
	strbuf_addf(out, " in %llu allocation%s (", (unsigned long long)to.count,
		    to.count == 1 ? "" : "s");
	size_change(out, from.bytes, to.bytes);
	strbuf_addstr(out, ", ");
	count_change(out, from.count, to.count);
	strbuf_addstr(out, ")\n");
}

static void capture_line(struct strbuf *out, const char *label, const char *path,
			 const struct mp_analysis *a)
{
	struct strbuf cmd = STRBUF_INIT;
	mp_report_command_line(a, true, &cmd);
	strbuf_addf(out, "%s", label);
	mp_text_addstr_safe(out, path);
	strbuf_addstr(out, " (");
	mp_text_add_safe(out, cmd.buf, cmd.len);
	strbuf_addch(out, ')');
	/* A sampled capture's figures, and so their differences, are estimates. */
	if (mp_analysis_estimated(a)) {
		strbuf_addstr(out, ", ");
		mp_report_estimated(a, out);
	}
	strbuf_addch(out, '\n');
	strbuf_release(&cmd);
}

static enum mp_color change_color(uint64_t from, uint64_t to)
{
	return to > from ? MP_COLOR_RED : to < from ? MP_COLOR_GREEN : MP_COLOR_RESET;
}

static void cell(struct mp_table *t, size_t col, struct strbuf *sb, enum mp_color color)
{
	mp_table_cell(t, col, sb->buf, color);
	strbuf_reset(sb);
}

void mp_diff_text(const struct mp_diff *d, const struct mp_diff_names *names, size_t max_rows,
		  const struct mp_term *t, struct strbuf *out)
{
	static const char *const headers[] = {
		"Location", "Δ Peak", "Peak", "Δ Leaked", "Leaked", "Δ Allocations", "Allocations",
	};
	static const enum mp_align align[] = {
		MP_ALIGN_LEFT, MP_ALIGN_RIGHT, MP_ALIGN_RIGHT, MP_ALIGN_RIGHT, MP_ALIGN_RIGHT,
		MP_ALIGN_RIGHT, MP_ALIGN_RIGHT,
	};
	static const enum mp_color colors[3] = { MP_COLOR_MAGENTA, MP_COLOR_RESET, MP_COLOR_CYAN };
	struct mp_table table;
	struct strbuf fn = STRBUF_INIT, file = STRBUF_INIT, sb = STRBUF_INIT;

	capture_line(out, "Base: ", names->base, names->base_a);
	capture_line(out, "New:  ", names->new, names->new_a);
	total_line(out, "Peak memory", d->total_base.peak, d->total_new.peak);
	total_line(out, "Leaked memory", d->total_base.leaked, d->total_new.leaked);
	total_line(out, "All allocations", d->total_base.allocated, d->total_new.allocated);
	if (!d->n) {
		strbuf_addstr(out, "No allocation site changed its peak, leaked memory or allocations.\n");
		return;
	}
	strbuf_addstr(out, "By allocation site (Δ: new - base; Peak, Leaked, Allocations: new):\n");
	mp_table_init(&table, 7, headers, align, 0);
	for (size_t i = 0; i < d->n && i < max_rows; i++) {
		const struct mp_diff_row *r = &d->rows[i];
		const char *segs[3];
		strbuf_reset(&fn);
		strbuf_reset(&file);
		mp_report_name(r->function, t->full_names, &fn);
		mp_text_addstr_safe(&file, *r->file ? r->file : "???");
		if (*r->caller) {
			/* A library's site and the Python function that called it. */
			strbuf_addstr(&file, " called from ");
			mp_text_addstr_safe(&file, r->caller);
			strbuf_addstr(&file, " at ");
			mp_text_addstr_safe(&file, r->caller_file);
		}
		segs[0] = fn.buf;
		segs[1] = " at ";
		segs[2] = file.buf;
		mp_table_row(&table);
		mp_table_cell_segs(&table, 0, 3, segs, colors);
		size_change(&sb, r->base.peak.bytes, r->new.peak.bytes);
		cell(&table, 1, &sb, change_color(r->base.peak.bytes, r->new.peak.bytes));
		mp_format_size(&sb, r->new.peak.bytes);
		cell(&table, 2, &sb, MP_COLOR_RESET);
		size_change(&sb, r->base.leaked.bytes, r->new.leaked.bytes);
		cell(&table, 3, &sb, change_color(r->base.leaked.bytes, r->new.leaked.bytes));
		mp_format_size(&sb, r->new.leaked.bytes);
		cell(&table, 4, &sb, MP_COLOR_RESET);
		count_change(&sb, r->base.allocated.count, r->new.allocated.count);
		cell(&table, 5, &sb, change_color(r->base.allocated.count, r->new.allocated.count));
		mp_format_count(&sb, r->new.allocated.count);
		cell(&table, 6, &sb, MP_COLOR_RESET);
	}
	mp_table_render(&table, t, t->limit, out);
	mp_table_release(&table);
	if (d->n > max_rows)
		strbuf_addf(out, "%zu more location%s (-r %zu shows them all)\n", d->n - max_rows,
			    d->n - max_rows == 1 ? "" : "s", d->n);
	strbuf_release(&fn);
	strbuf_release(&file);
	strbuf_release(&sb);
}

static void json_counts(struct mp_json *j, const char *key, struct mp_counts c)
{
	mp_json_key(j, key);
	mp_json_begin_object(j);
	mp_json_field_uint(j, "bytes", c.bytes);
	mp_json_field_uint(j, "count", c.count);
	mp_json_end_object(j);
}

static void json_change(struct mp_json *j, const char *key, struct mp_counts from,
			struct mp_counts to)
{
	mp_json_key(j, key);
	mp_json_begin_object(j);
	mp_json_field_int(j, "bytes", (int64_t)(to.bytes - from.bytes));
	mp_json_field_int(j, "count", (int64_t)(to.count - from.count));
	mp_json_end_object(j);
}

static void json_side(struct mp_json *j, const char *key, const struct mp_diff_side *s)
{
	mp_json_key(j, key);
	mp_json_begin_object(j);
	json_counts(j, "peak", s->peak);
	json_counts(j, "leaked", s->leaked);
	json_counts(j, "allocated", s->allocated);
	mp_json_end_object(j);
}

static void json_sides(struct mp_json *j, const struct mp_diff_side *base,
		       const struct mp_diff_side *new)
{
	json_side(j, "base", base);
	json_side(j, "new", new);
	mp_json_key(j, "change");
	mp_json_begin_object(j);
	json_change(j, "peak", base->peak, new->peak);
	json_change(j, "leaked", base->leaked, new->leaked);
	json_change(j, "allocated", base->allocated, new->allocated);
	mp_json_end_object(j);
}

static void json_capture(struct mp_json *j, const char *key, const char *path,
			 const struct mp_analysis *a)
{
	struct strbuf cmd = STRBUF_INIT;
	mp_report_command_line(a, true, &cmd);
	mp_json_key(j, key);
	mp_json_begin_object(j);
	mp_json_field_string(j, "path", path);
	mp_json_field_string(j, "command_line", cmd.buf);
	/* 0: every event recorded; else its figures are estimates. */
	mp_json_field_uint(j, "sampling_interval", a->sampling_interval);
	mp_json_field_bool(j, "estimated", mp_analysis_estimated(a));
	mp_json_end_object(j);
	strbuf_release(&cmd);
}

void mp_diff_json(const struct mp_diff *d, const struct mp_diff_names *names, struct strbuf *out)
{
	struct mp_json j;
	mp_json_init(&j, out, MP_JSON_PRETTY);
	mp_json_begin_object(&j);
	mp_json_key(&j, "captures");
	mp_json_begin_object(&j);
	json_capture(&j, "base", names->base, names->base_a);
	json_capture(&j, "new", names->new, names->new_a);
	mp_json_end_object(&j);
	mp_json_key(&j, "totals");
	mp_json_begin_object(&j);
	json_sides(&j, &d->total_base, &d->total_new);
	mp_json_end_object(&j);
	mp_json_key(&j, "locations");
	mp_json_begin_array(&j);
	for (size_t i = 0; i < d->n; i++) {
		const struct mp_diff_row *r = &d->rows[i];
		mp_json_begin_object(&j);
		mp_json_field_string(&j, "function", r->function);
		mp_json_field_string(&j, "file", r->file);
		if (*r->caller) {
			mp_json_key(&j, "caller");
			mp_json_begin_object(&j);
			mp_json_field_string(&j, "function", r->caller);
			mp_json_field_string(&j, "file", r->caller_file);
			mp_json_end_object(&j);
		}
		json_sides(&j, &r->base, &r->new);
		mp_json_end_object(&j);
	}
	mp_json_end_array(&j);
	mp_json_end_object(&j);
}
