/* The HTML reports: the report data of an analysis, and its page from a template. */
#include <config.h>
#include "lib/report/render-html.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/analysis/calltree.h"
#include "lib/report/difftree.h"
#include "lib/report/html-template.h"
#include "lib/report/html-tree.h"
#include "lib/report/json.h"
#include "lib/report/report.h"
#include "lib/util/sort.h"
#include "lib/symbols/cxxname.h"
#include "lib/util/strtab.h"
#include "lib/util/xalloc.h"

const char *mp_html_report_name(enum mp_html_report report)
{
	return report == MP_HTML_TABLE ? "table" : "flamegraph";
}

/* ---- the report data ------------------------------------------------------ */

/* What is being written: the output's string table and locations, numbered on first use. */
struct builder {
	const struct mp_analysis *a;
	const struct mp_html_opts *o;
	struct mp_json j;
	struct mp_strtab strings;
	uint32_t *loc_out;      /* analysis location -> output index, MP_NONE when not used */
	uint32_t *locs;         /* output index -> analysis location (| BASE_LOC: of o->base) */
	size_t nlocs;
	uint32_t *base_loc_out; /* the same for o->base's locations */
	uint32_t merged_loc;    /* the output location of merged frames and rows, MP_NONE until used */
	struct mp_html_report_limits limits; /* lowered until the data fits MP_HTML_MAX_DATA */
	size_t merged_frames, merged_buckets, merged_rows; /* what the limits merged */
};
#define BASE_LOC (1u << 31)

static uint32_t out_string_of(struct builder *b, const struct mp_analysis *a,
			      uint32_t analysis_string)
{
	return mp_strtab_intern(&b->strings, mp_analysis_string(a, analysis_string),
				mp_strtab_len(&a->strings, analysis_string));
}

static uint32_t out_string(struct builder *b, uint32_t analysis_string)
{
	return out_string_of(b, b->a, analysis_string);
}

static uint32_t out_location(struct builder *b, uint32_t loc)
{
	if (loc == MP_HTML_MERGED_LOC) {
		if (b->merged_loc == MP_NONE) {
			b->merged_loc = (uint32_t)b->nlocs;
			b->locs[b->nlocs++] = MP_HTML_MERGED_LOC;
		}
		return b->merged_loc;
	}
	if (b->loc_out[loc] == MP_NONE) {
		b->loc_out[loc] = (uint32_t)b->nlocs;
		b->locs[b->nlocs++] = loc;
	}
	return b->loc_out[loc];
}

/* A location of the base analysis of a differential flame graph. */
static uint32_t out_base_location(struct builder *b, uint32_t loc)
{
	if (b->base_loc_out[loc] == MP_NONE) {
		b->base_loc_out[loc] = (uint32_t)b->nlocs;
		b->locs[b->nlocs++] = loc | BASE_LOC;
	}
	return b->base_loc_out[loc];
}

static const char *mode_name(enum mp_view view)
{
	return view == MP_VIEW_LEAKS ? "leaks" : view == MP_VIEW_TEMPORARY ? "temporary" : "peak";
}

/* ISO 8601 UTC with milliseconds: "2026-11-22T07:22:21.250Z". */
static void iso_time(struct strbuf *sb, uint64_t epoch_us)
{
	time_t sec = (time_t)(epoch_us / 1000000);
	struct tm tm;
	char buf[64];
	gmtime_r(&sec, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	strbuf_addf(sb, "%s.%03uZ", buf, (unsigned)(epoch_us % 1000000 / 1000));
}

static void write_meta(struct builder *b, const char *key, const struct mp_analysis *a,
		       const char *capture)
{
	struct mp_json *j = &b->j;
	struct strbuf sb = STRBUF_INIT;

	mp_json_key(j, key);
	mp_json_begin_object(j);
	mp_json_field_strings(j, "argv", a->header.argv, a->header.argc);
	mp_json_field_uint(j, "pid", a->header.pid);
	if (a->header.hostname)
		mp_json_field_string(j, "hostname", a->header.hostname);
	if (a->header.start_time_us) {
		iso_time(&sb, a->header.start_time_us);
		mp_json_field_string(j, "start", sb.buf);
		strbuf_reset(&sb);
	}
	mp_json_field_uint(j, "duration_us", a->duration_us);
	if (a->trailer.present && a->trailer.has_exit_code)
		strbuf_addf(&sb, "exited with status %d", a->trailer.exit_code);
	else
		mp_report_exit_status(a, &sb);
	mp_json_field_string(j, "exit", sb.buf);
	mp_json_field_bool(j, "since_attach", a->attached);
	mp_json_field_uint(j, "total_allocations", a->totals.n_allocs);
	mp_json_field_uint(j, "total_bytes", a->totals.bytes_allocated);
	mp_json_field_uint(j, "peak_bytes", a->totals.peak_bytes);
	mp_json_field_uint(j, "peak_time_us", a->totals.peak_time_us);
	mp_json_field_uint(j, "leaked_bytes", a->totals.leaked_bytes);
	mp_json_field_uint(j, "leaked_blocks", a->totals.leaked_count);
	mp_json_field_uint(j, "unknown_frees", a->totals.n_unknown_frees);
	/* A sampled capture's figures are estimates (an exact one's page is as it was). */
	if (mp_analysis_estimated(a)) {
		mp_json_field_uint(j, "sampling_interval", a->sampling_interval);
		if (a->sampling_mixed)
			mp_json_field_bool(j, "sampling_mixed", true);
	}
	if (capture)
		mp_json_field_string(j, "capture", capture);
	mp_json_field_string(j, "tool", "memprof " PACKAGE_VERSION);
	mp_json_end_object(j);
	strbuf_release(&sb);
}

/* Row i of column c of a table of columns; negative values are written as such (-1: none). */
typedef int64_t (*cell_fn)(struct builder *b, const void *ctx, size_t c, size_t i);

/* An object of columns, "key": {"col": [n values], ...}; columns whose bit is in skip left out. */
static void write_columns(struct builder *b, const char *key, const char *const *cols,
			  size_t ncols, unsigned skip, size_t n, cell_fn cell, const void *ctx)
{
	struct mp_json *j = &b->j;
	mp_json_key(j, key);
	mp_json_begin_object(j);
	for (size_t c = 0; c < ncols; c++) {
		if (skip & (1u << c))
			continue;
		mp_json_key(j, cols[c]);
		mp_json_begin_array(j);
		for (size_t i = 0; i < n; i++)
			mp_json_int(j, cell(b, ctx, c, i));
		mp_json_end_array(j);
	}
	mp_json_end_object(j);
}

#define NCOLS(cols) (sizeof(cols) / sizeof(cols[0]))

/* The time series of the analysis ctx. */
static int64_t memory_cell(struct builder *b, const void *ctx, size_t c, size_t i)
{
	const struct mp_sample *s = &((const struct mp_analysis *)ctx)->samples[i];
	(void)b;
	return mp_count_i64(c == 0 ? s->time_us : c == 1 ? s->rss : c == 2 ? s->heap : s->heap_max);
}

static int64_t thread_cell(struct builder *b, const void *ctx, size_t c, size_t i)
{
	const struct mp_thread *t = &b->a->threads[i];
	(void)ctx;
	return c == 0 ? (int64_t)t->tid : c == 1 ? out_string(b, t->name) : (int64_t)t->process;
}

/* The name of the frames, or of the table's rows, merged to keep a report within its limits. */
static const char *merged_name(const struct builder *b)
{
	return b->o->report == MP_HTML_TABLE ? "[smaller locations]" : "[smaller frames]";
}

/* The classes of locations.class (share/templates/README.md): how the page folds stacks. */
enum { CLASS_FOLDED = 1, CLASS_PYTHON = 2, CLASS_INTERPRETER = 4, CLASS_PROCESS = 8 };

/* The short name of a location (a C++ one's template arguments elided), as an output string. */
static int64_t short_name(struct builder *b, const struct mp_analysis *a,
			  const struct mp_location *l)
{
	const char *fn = mp_analysis_string(a, l->function);
	struct strbuf sb = STRBUF_INIT;
	uint32_t id;
	if ((l->flags & (MP_LOC_PYTHON | MP_LOC_PROCESS)) || !mp_cxx_is_name(fn))
		return out_string_of(b, a, l->function);
	mp_cxx_shorten(fn, &sb);
	id = mp_strtab_intern(&b->strings, sb.buf, sb.len);
	strbuf_release(&sb);
	return id;
}

enum { LOC_FUNCTION, LOC_FILE, LOC_LINE, LOC_MODULE, LOC_SHORT, LOC_CLASS };

static int64_t location_cell(struct builder *b, const void *ctx, size_t c, size_t i)
{
	const struct mp_analysis *a = b->locs[i] & BASE_LOC ? b->o->base : b->a;
	const struct mp_location *l;
	(void)ctx;
	if (b->locs[i] == MP_HTML_MERGED_LOC) {
		const char *name = merged_name(b);
		return c == LOC_FUNCTION || c == LOC_SHORT ? mp_strtab_intern(&b->strings, name, strlen(name))
		       : c == LOC_FILE ? out_string_of(b, b->a, 0) : 0;
	}
	l = mp_analysis_location(a, b->locs[i] & ~BASE_LOC);
	switch (c) {
	case LOC_FUNCTION: return out_string_of(b, a, l->function);
	case LOC_FILE: return out_string_of(b, a, l->file);
	case LOC_LINE: return l->line;
	case LOC_MODULE: return l->module == MP_NONE ? 0 : out_string_of(b, a, a->modules[l->module].path);
	case LOC_SHORT: return short_name(b, a, l);
	default:
		return (mp_location_folded(l) ? CLASS_FOLDED : 0) |
		       (l->flags & MP_LOC_PYTHON ? CLASS_PYTHON : 0) |
		       (l->flags & MP_LOC_INTERPRETER ? CLASS_INTERPRETER : 0) |
		       (l->flags & MP_LOC_PROCESS ? CLASS_PROCESS : 0);
	}
}

/* Whether a location's short name differs from its name. */
static bool shortens(const struct builder *b, uint32_t out)
{
	const struct mp_analysis *a = b->locs[out] & BASE_LOC ? b->o->base : b->a;
	const struct mp_location *l;
	const char *fn;
	struct strbuf sb = STRBUF_INIT;
	bool differs;
	if (b->locs[out] == MP_HTML_MERGED_LOC)
		return false;
	l = mp_analysis_location(a, b->locs[out] & ~BASE_LOC);
	fn = mp_analysis_string(a, l->function);
	if ((l->flags & (MP_LOC_PYTHON | MP_LOC_PROCESS)) || !mp_cxx_is_name(fn))
		return false;
	mp_cxx_shorten(fn, &sb);
	differs = strcmp(sb.buf, fn) != 0;
	strbuf_release(&sb);
	return differs;
}

/* Whether the page folds stacks: a flame graph of a capture with Python frames. */
static bool page_folds(const struct builder *b)
{
	return b->o->report == MP_HTML_FLAMEGRAPH &&
	       (b->a->interpreter_loc != MP_NONE || (b->o->base && b->o->base->interpreter_loc != MP_NONE));
}

static int64_t process_cell(struct builder *b, const void *ctx, size_t c, size_t i)
{
	const struct mp_process *p = &b->a->processes[i];
	(void)ctx;
	switch (c) {
	case 0: return (int64_t)p->pid;
	case 1: return out_string(b, p->name);
	case 2: return p->location == MP_NONE ? -1 : (int64_t)out_location(b, p->location);
	default: return p->parent == MP_NONE ? -1 : (int64_t)p->parent;
	}
}

static void write_memory_and_threads(struct builder *b)
{
	static const char *const mem[] = { "time_us", "rss", "heap", "heap_max" };
	static const char *const threads[] = { "tid", "name", "process" };
	static const char *const procs[] = { "pid", "name", "location", "parent" };
	bool several = b->a->nprocesses > 1;
	write_columns(b, "memory", mem, NCOLS(mem), 0, b->a->nsamples, memory_cell, b->a);
	/* A differential report draws both captures' memory on one chart. */
	if (b->o->base)
		write_columns(b, "base_memory", mem, NCOLS(mem), 0, b->o->base->nsamples, memory_cell,
			      b->o->base);
	write_columns(b, "threads", threads, NCOLS(threads), several ? 0 : 1u << 2, b->a->nthreads,
		      thread_cell, NULL);
	if (several)
		write_columns(b, "processes", procs, NCOLS(procs), 0, b->a->nprocesses, process_cell,
			      NULL);
}

/*
 * The locations used, then the string table: last, once everything is
 * numbered. A flame graph's have their short names when one differs (unless
 * whole names were asked for), and their classes when the page folds.
 */
static void write_locations_and_strings(struct builder *b)
{
	static const char *const cols[] = { "function", "file", "line", "module", "short", "class" };
	struct mp_json *j = &b->j;
	unsigned skip = 0;
	bool any_short = false;
	for (size_t i = 0; i < b->nlocs && !any_short && b->o->report == MP_HTML_FLAMEGRAPH &&
			   !b->o->full_names; i++)
		any_short = shortens(b, (uint32_t)i);
	if (!any_short)
		skip |= 1u << LOC_SHORT;
	if (!page_folds(b))
		skip |= 1u << LOC_CLASS;
	write_columns(b, "locations", cols, NCOLS(cols), skip, b->nlocs, location_cell, NULL);
	mp_json_key(j, "strings");
	mp_json_begin_array(j);
	for (size_t i = 0; i < b->strings.n; i++)
		mp_json_string_len(j, mp_strtab_get(&b->strings, (uint32_t)i),
				   mp_strtab_len(&b->strings, (uint32_t)i));
	mp_json_end_array(j);
}

/* ---- the flame graph's tree ---- */

static int64_t interval_cell(struct builder *b, const void *ctx, size_t c, size_t i)
{
	const struct mp_html_interval *iv = (const struct mp_html_interval *)ctx + i;
	(void)b;
	switch (c) {
	case 0: return iv->node;
	case 1: return iv->alloc;
	case 2: return iv->free == MP_NONE ? -1 : (int64_t)iv->free;
	case 3: return mp_count_i64(iv->c.count);
	default: return mp_count_i64(iv->c.bytes);
	}
}

static void write_u64s(struct mp_json *j, const char *key, const uint64_t *v, size_t n)
{
	mp_json_key(j, key);
	mp_json_begin_array(j);
	for (size_t i = 0; i < n; i++)
		mp_json_int(j, mp_count_i64(v[i]));
	mp_json_end_array(j);
}

static void write_timeline(struct builder *b, const struct mp_html_tree *t)
{
	struct mp_json *j = &b->j;
	static const char *const cols[] = { "node", "alloc", "free", "count", "bytes" };
	mp_json_key(j, "timeline");
	mp_json_begin_object(j);
	write_u64s(j, "bucket_us", t->bucket_us, t->nbuckets + 1);
	write_u64s(j, "hwm_us", t->hwm_us, t->nbuckets);
	write_u64s(j, "hwm_bytes", t->hwm_bytes, t->nbuckets);
	write_columns(b, "intervals", cols, NCOLS(cols), 0, t->niv, interval_cell, t->iv);
	mp_json_end_object(j);
}

static int64_t tree_cell(struct builder *b, const void *ctx, size_t c, size_t i)
{
	const struct mp_html_node *n = &((const struct mp_html_tree *)ctx)->nodes[i];
	switch (c) {
	case 0: return n->depth;
	case 1: return n->location == MP_NONE ? -1 : (int64_t)out_location(b, n->location);
	case 2: return n->thread == MP_THREAD_MERGED ? -1 : (int64_t)n->thread;
	case 3: return mp_count_i64(n->self.bytes);
	default: return mp_count_i64(n->self.count);
	}
}

static void write_tree(struct builder *b, bool split)
{
	const struct mp_html_opts *o = b->o;
	struct mp_html_tree t;
	static const char *const cols[] = { "depth", "location", "thread", "self_bytes", "self_count" };
	struct mp_html_limits lim = { b->limits.nodes, b->limits.intervals };

	mp_html_tree_build(&t, b->a, o->view, o->inverted, split, o->temporal, &lim);
	write_columns(b, "tree", cols, NCOLS(cols), split ? 0 : 1u << 2, t.n, tree_cell, &t);
	if (o->temporal)
		write_timeline(b, &t);
	b->merged_frames = t.frames_merged;
	b->merged_buckets = t.buckets_merged;
	mp_html_tree_release(&t);
}

/* ---- the differential flame graph's tree: both captures' values per node ---- */

static int64_t diff_cell(struct builder *b, const void *ctx, size_t c, size_t i)
{
	const struct mp_difftree_node *n = &((const struct mp_difftree *)ctx)->nodes[i];
	switch (c) {
	case 0: return n->depth;
	case 1: return n->loc == MP_NONE ? -1 :
		       n->side == MP_DIFF_NEW ? (int64_t)out_location(b, n->loc) :
						(int64_t)out_base_location(b, n->loc);
	case 2: return mp_count_i64(n->self[MP_DIFF_NEW].bytes);
	case 3: return mp_count_i64(n->self[MP_DIFF_NEW].count);
	case 4: return mp_count_i64(n->self[MP_DIFF_BASE].bytes);
	default: return mp_count_i64(n->self[MP_DIFF_BASE].count);
	}
}

static void write_diff_tree(struct builder *b)
{
	static const char *const cols[] = { "depth", "location", "self_bytes", "self_count",
					    "base_self_bytes", "base_self_count" };
	struct mp_difftree t;
	mp_difftree_build(&t, b->o->base, b->a, b->o->view, b->o->inverted);
	write_columns(b, "tree", cols, NCOLS(cols), 0, t.n, diff_cell, &t);
	mp_difftree_release(&t);
}

/* ---- the table's rows ---- */

struct rows_ctx {
	const struct mp_group_row *rows;
	const uint32_t *kind_of;
};

static int64_t row_cell(struct builder *b, const void *ctx, size_t c, size_t i)
{
	const struct rows_ctx *x = ctx;
	const struct mp_group_row *r = &x->rows[i];
	switch (c) {
	case 0: return r->thread;
	case 1: return x->kind_of[i];
	case 2: return out_location(b, r->site == MP_NONE ? MP_LOCATION_NO_STACK : r->site);
	case 3: return mp_count_i64(r->c.bytes);
	case 4: return mp_count_i64(r->c.count);
	case 5: return r->process == MP_NONE ? -1 : (int64_t)r->process;
	default: return r->caller == MP_NONE ? -1 : (int64_t)out_location(b, r->caller);
	}
}

static int kind_thread_cmp(const void *x, const void *y)
{
	const struct mp_group_row *p = x, *q = y;
	if (p->thread != q->thread)
		return p->thread < q->thread ? -1 : 1;
	if (p->process != q->process)
		return p->process < q->process ? -1 : 1;
	return p->kind < q->kind ? -1 : p->kind > q->kind;
}

/*
 * More rows than the limit: the smallest go, merged into one row per
 * allocator and thread, sorted in with the rest. Returns the rows left.
 */
static size_t bound_rows(struct builder *b, struct mp_group_row *rows, size_t n)
{
	size_t limit = b->limits.rows, keep, m;
	if (n <= limit)
		return n;
	keep = limit > 256 ? limit - 128 : limit / 2;
	mp_qsort(rows + keep, n - keep, sizeof(*rows), kind_thread_cmp);
	m = keep;
	for (size_t i = keep; i < n; i++) {
		if (m > keep && !kind_thread_cmp(&rows[m - 1], &rows[i])) {
			rows[m - 1].c.bytes += rows[i].c.bytes;
			rows[m - 1].c.count += rows[i].c.count;
			continue;
		}
		rows[m] = rows[i];
		rows[m].site = MP_HTML_MERGED_LOC;
		rows[m].stack = rows[m].module = rows[m].caller = MP_NONE;
		m++;
	}
	b->merged_rows = n - keep;
	mp_group_sort(rows, m, MP_SORT_BYTES);
	return m;
}

static void write_rows(struct builder *b, bool split)
{
	struct mp_json *j = &b->j;
	struct mp_group_row *rows;
	bool several = b->a->nprocesses > 1;
	unsigned by = MP_BY_SITE | MP_BY_KIND | (split ? MP_BY_THREAD : 0) |
		      (several ? MP_BY_PROCESS : 0);
	size_t n = mp_analysis_group(b->a, b->o->view, by, MP_SORT_BYTES, &rows);
	uint32_t kinds[64], nkinds = 0, *kind_of;
	static const char *const cols[] = { "thread", "kind", "location", "bytes", "count",
					    "process", "caller" };
	unsigned skip = (split ? 0 : 1u) | (several ? 0 : 1u << 5);
	bool callers = false;

	n = bound_rows(b, rows, n);
	for (size_t i = 0; i < n && !callers; i++)
		callers = rows[i].caller != MP_NONE;
	if (!callers)
		skip |= 1u << 6; /* no site called from Python: no column */
	kind_of = xcalloc(n ? n : 1, sizeof(*kind_of));
	/* Allocator names, numbered on first use (at most one per kind of the capture). */
	for (size_t i = 0; i < n; i++) {
		uint32_t k = 0;
		while (k < nkinds && kinds[k] != rows[i].kind)
			k++;
		if (k == nkinds && nkinds < sizeof(kinds) / sizeof(kinds[0]))
			kinds[nkinds++] = rows[i].kind;
		kind_of[i] = k < nkinds ? k : 0;
	}
	mp_json_key(j, "kinds");
	mp_json_begin_array(j);
	for (uint32_t k = 0; k < nkinds; k++)
		mp_json_string(j, mp_kind_name(kinds[k]));
	mp_json_end_array(j);
	write_columns(b, "rows", cols, NCOLS(cols), skip, n, row_cell,
		      &(struct rows_ctx){ rows, kind_of });
	free(kind_of);
	free(rows);
}

/* What the limits merged, when they merged anything (share/templates/README.md). */
static void write_bounds(struct builder *b)
{
	struct mp_json *j = &b->j;
	if (!b->merged_frames && !b->merged_buckets && !b->merged_rows)
		return;
	mp_json_key(j, "bounds");
	mp_json_begin_object(j);
	if (b->merged_frames)
		mp_json_field_uint(j, "frames_merged", b->merged_frames);
	if (b->merged_buckets)
		mp_json_field_uint(j, "bucket_halvings", b->merged_buckets);
	if (b->merged_rows)
		mp_json_field_uint(j, "rows_merged", b->merged_rows);
	mp_json_end_object(j);
}

/* The report data into out, within b->limits. */
static void write_data(struct builder *b, struct strbuf *out, bool split)
{
	const struct mp_analysis *a = b->a;
	const struct mp_html_opts *o = b->o;
	bool flame = o->report == MP_HTML_FLAMEGRAPH;

	mp_strtab_init(&b->strings);
	b->loc_out = xcalloc(a->nlocs ? a->nlocs : 1, sizeof(*b->loc_out));
	memset(b->loc_out, 0xff, a->nlocs * sizeof(*b->loc_out));
	b->locs = xcalloc(a->nlocs + (o->base ? o->base->nlocs : 0) + 2, sizeof(*b->locs));
	b->nlocs = 0;
	b->merged_loc = MP_NONE;
	b->merged_frames = b->merged_buckets = b->merged_rows = 0;
	if (o->base) {
		b->base_loc_out = xcalloc(o->base->nlocs + 1, sizeof(*b->base_loc_out));
		memset(b->base_loc_out, 0xff, o->base->nlocs * sizeof(*b->base_loc_out));
	}
	mp_json_init(&b->j, out, 0);

	mp_json_begin_object(&b->j);
	mp_json_field_uint(&b->j, "version", 1);
	mp_json_field_string(&b->j, "report", mp_html_report_name(o->report));
	mp_json_field_string(&b->j, "mode", mode_name(o->view));
	mp_json_field_uint(&b->j, "temporary_threshold",
			   o->view == MP_VIEW_TEMPORARY ? a->opts.temporary_threshold : 0);
	mp_json_field_bool(&b->j, "inverted", flame && o->inverted);
	mp_json_field_bool(&b->j, "split_threads", split);
	mp_json_field_bool(&b->j, "temporal", flame && o->temporal);
	if (a->nprocesses > 1)
		mp_json_field_bool(&b->j, "split_processes", o->split_processes);
	write_meta(b, "meta", a, o->capture);
	if (o->base) {
		mp_json_field_bool(&b->j, "diff", true);
		write_meta(b, "base_meta", o->base, o->base_capture);
		write_diff_tree(b);
	} else if (flame) {
		write_tree(b, split);
	} else {
		write_rows(b, split);
	}
	if (page_folds(b)) {
		/* The page folds the stacks itself, so that it can show them all too. */
		mp_json_key(&b->j, "fold");
		mp_json_begin_object(&b->j);
		mp_json_field_uint(&b->j, "group", a->interpreter_loc != MP_NONE
							  ? out_location(b, a->interpreter_loc)
							  : out_base_location(b, o->base->interpreter_loc));
		mp_json_field_bool(&b->j, "all_frames", (a->opts.flags & MP_ANALYSIS_ALL_FRAMES) != 0);
		mp_json_end_object(&b->j);
	}
	write_memory_and_threads(b);
	write_locations_and_strings(b);
	write_bounds(b);
	mp_json_end_object(&b->j);

	mp_strtab_release(&b->strings);
	free(b->loc_out);
	free(b->locs);
	free(b->base_loc_out);
	b->base_loc_out = NULL;
}

int mp_html_data(const struct mp_analysis *a, const struct mp_html_opts *o, struct strbuf *out,
		 struct strbuf *err)
{
	struct builder b;
	bool split = a->opts.flags & MP_ANALYSIS_SPLIT_THREADS;
	bool flame = o->report == MP_HTML_FLAMEGRAPH;
	size_t start;

	if (o->view == MP_VIEW_ALLOCATED) {
		strbuf_addstr(err, "the HTML reports show the peak, leaks or temporary allocations");
		return -1;
	}
	if (!flame && (o->temporal || o->inverted)) {
		strbuf_addf(err, "a table report cannot be %s", o->temporal ? "temporal" : "inverted");
		return -1;
	}
	if (o->temporal && o->view == MP_VIEW_TEMPORARY) {
		strbuf_addstr(err, "a temporal report shows the peak or the leaks, not temporary allocations");
		return -1;
	}
	if (o->temporal && !(a->opts.flags & MP_ANALYSIS_TEMPORAL)) {
		strbuf_addstr(err, "a temporal report needs an analysis with intervals");
		return -1;
	}
	if (o->base && (!flame || o->temporal || split ||
			(o->base->opts.flags & MP_ANALYSIS_SPLIT_THREADS))) {
		strbuf_addstr(err, "a differential report is a flame graph of merged threads, not temporal");
		return -1;
	}
	memset(&b, 0, sizeof(b));
	b.a = a;
	b.o = o;
	b.limits = (struct mp_html_report_limits)MP_HTML_LIMITS_INIT;
	start = out->len;
	for (;;) {
		write_data(&b, out, split);
		/* Over the bound: again with half the nodes, intervals and rows. */
		if (out->len - start <= MP_HTML_MAX_DATA || b.limits.nodes < 64)
			break;
		strbuf_setlen(out, start);
		b.limits.nodes /= 2;
		b.limits.intervals /= 2;
		b.limits.rows /= 2;
	}
	return 0;
}

int mp_html_render(const struct mp_analysis *a, const struct mp_html_opts *o,
		   const char *template_dir, struct strbuf *out, struct strbuf *err)
{
	struct strbuf data = STRBUF_INIT, path = STRBUF_INIT;
	int ret;
	if (mp_html_data(a, o, &data, err) < 0) {
		strbuf_release(&data);
		return -1;
	}
	strbuf_addf(&path, "%s/%s.html", template_dir, mp_html_report_name(o->report));
	ret = mp_html_expand(path.buf, data.buf, data.len, out, err);
	strbuf_release(&data);
	strbuf_release(&path);
	return ret;
}
