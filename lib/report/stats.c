/* The stats report: an analysis' figures as text for the terminal or as JSON. */
#include <config.h>
#include "lib/report/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/format/dump.h"
#include "lib/report/json.h"
#include "lib/report/render-text.h"
#include "lib/report/report.h"
#include "lib/util/xalloc.h"

#define BAR_WIDTH 25
/* Runs of at least this many empty histogram buckets are folded into one line. */
#define HIST_FOLD 3

/* The histogram's rows: from the bucket of the smallest size to the largest's. */
static void hist_range(const struct mp_analysis *a, unsigned *lo, unsigned *hi)
{
	*lo = MP_HIST_BUCKETS;
	*hi = 0;
	for (unsigned k = 0; k < MP_HIST_BUCKETS; k++) {
		if (!a->totals.hist[k])
			continue;
		if (k < *lo)
			*lo = k;
		*hi = k;
	}
}

/* Kinds by number of allocations, most first (kinds that only freed are left out). */
static size_t kinds_by_count(const struct mp_analysis *a, const struct mp_kind_totals ***out)
{
	const struct mp_kind_totals **k = xcalloc(a->nkinds ? a->nkinds : 1, sizeof(*k));
	size_t n = 0;
	for (size_t i = 0; i < a->nkinds; i++)
		if (a->kinds[i].n_allocs)
			k[n++] = &a->kinds[i];
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && k[j]->n_allocs > k[j - 1]->n_allocs; j--) {
			const struct mp_kind_totals *t = k[j];
			k[j] = k[j - 1];
			k[j - 1] = t;
		}
	*out = k;
	return n;
}

static const char *since(const struct mp_analysis *a)
{
	if (mp_analysis_estimated(a))
		return a->attached ? " since attach (estimated)" : " (estimated)";
	return a->attached ? " since attach" : "";
}

static void section(struct strbuf *out, const struct mp_term *t, const char *title,
		    const char *suffix)
{
	strbuf_addf(out, "\n%s%s%s:%s\n", mp_color(t, MP_COLOR_BOLD), title, suffix,
		    mp_color(t, MP_COLOR_RESET));
}

/* The sections of figures: "(estimated)" after their title for a sampled capture. */
static const char *est(const struct mp_analysis *a)
{
	return mp_analysis_estimated(a) ? " (estimated)" : "";
}

/* "1.234 MiB (2.5%)": one standard error of an estimate of bytes, from its variance. */
static void error_of(struct strbuf *out, double var, uint64_t bytes)
{
	double sd = var > 0 ? sqrt(var) : 0;
	strbuf_addstr(out, "\u00b1");
	mp_format_size(out, (uint64_t)llround(sd));
	if (bytes)
		strbuf_addf(out, " (%.1f%%)", 100 * sd / (double)bytes);
}

/*
 * A sampled capture: the interval, that the figures are estimates, and how
 * far off the main ones may be: one standard error, from the variance of
 * each estimate (analysis.h; blocks of the interval and up add none).
 */
static void text_sampling(const struct mp_analysis *a, struct strbuf *out)
{
	if (!mp_analysis_estimated(a))
		return;
	strbuf_addstr(out, "Sampling: ");
	mp_report_estimated(a, out);
	strbuf_addstr(out, ": every figure below is an estimate\nSampling error (one standard error): ");
	error_of(out, a->totals.var_allocated, a->totals.bytes_allocated);
	strbuf_addstr(out, " of the memory allocated, ");
	error_of(out, a->totals.var_peak, a->totals.peak_bytes);
	strbuf_addstr(out, " of the peak, ");
	error_of(out, a->totals.var_leaked, a->totals.leaked_bytes);
	strbuf_addstr(out, " of the leaks\n");
}

/* A bucket's label: its exclusive upper bound ("< 8 B"), "= 0 B", "<= 16.000 EiB". */
static void hist_label(struct strbuf *sb, unsigned k)
{
	if (!k) {
		strbuf_addstr(sb, "= 0 B");
	} else if (k < 64) {
		strbuf_addstr(sb, "< ");
		mp_format_size(sb, mp_hist_bucket_max(k) + 1);
	} else {
		strbuf_addstr(sb, "<= ");
		mp_format_size(sb, UINT64_MAX);
	}
}

static void text_histogram(const struct mp_analysis *a, struct strbuf *out)
{
	unsigned lo, hi;
	uint64_t max = 0;
	size_t label_w = 0, count_w = 0;
	struct strbuf label = STRBUF_INIT;
	hist_range(a, &lo, &hi);
	if (lo > hi) {
		strbuf_addstr(out, "\t(no allocations)\n");
		return;
	}
	for (unsigned k = lo; k <= hi; k++) {
		struct strbuf num = STRBUF_INIT;
		if (a->totals.hist[k] > max)
			max = a->totals.hist[k];
		mp_format_count(&num, a->totals.hist[k]);
		if (num.len > count_w)
			count_w = num.len;
		strbuf_release(&num);
		strbuf_reset(&label);
		hist_label(&label, k);
		if (label.len > label_w)
			label_w = label.len;
	}
	strbuf_addstr(out, "\tmin: ");
	mp_format_size(out, a->totals.min_size);
	strbuf_addstr(out, "\n\t--------------------------------------------\n");
	for (unsigned k = lo; k <= hi; k++) {
		struct strbuf num = STRBUF_INIT;
		size_t bar = max ? (size_t)((a->totals.hist[k] * BAR_WIDTH + max - 1) / max) : 0;
		unsigned run = 0;
		while (k + run <= hi && !a->totals.hist[k + run])
			run++;
		strbuf_reset(&label);
		strbuf_addch(out, '\t');
		if (run >= HIST_FOLD) {
			/* A long run of empty buckets is one line. */
			strbuf_addstr(&label, "\u2026");
			k += run - 1;
			mp_text_pad(out, label_w > 1 ? label_w - 1 : 0);
		} else {
			hist_label(&label, k);
			mp_text_pad(out, label_w > label.len ? label_w - label.len : 0);
		}
		strbuf_addf(out, "%s : ", label.buf);
		mp_format_count(&num, a->totals.hist[k]);
		mp_text_pad(out, count_w - num.len);
		strbuf_addstr(out, num.buf);
		if (bar)
			strbuf_addch(out, ' ');
		for (size_t i = 0; i < bar; i++)
			strbuf_addstr(out, "\u2587");
		strbuf_addch(out, '\n');
		strbuf_release(&num);
	}
	strbuf_addstr(out, "\t--------------------------------------------\n\tmax: ");
	mp_format_size(out, a->totals.max_size);
	strbuf_addch(out, '\n');
	strbuf_release(&label);
}

/*
 * Append "\t- TEXT" then tail, TEXT cut so that the line fits t->limit (the
 * tab taken as the 8 columns a terminal gives it).
 */
static void fitted_item(struct strbuf *out, const struct strbuf *text, const char *tail,
			const struct mp_term *t)
{
	size_t used = 8 + 2 + mp_text_width(tail, strlen(tail)), room = 1;
	if (t->limit > used + 1)
		room = t->limit - used;
	strbuf_addstr(out, "\t- ");
	mp_text_fit(out, text->buf, t->limit ? room : 0);
	strbuf_addstr(out, tail);
}

static void text_top_sites(const struct mp_analysis *a, const struct mp_stats_opts *o,
			   enum mp_sort_key key, const struct mp_term *t, struct strbuf *out)
{
	struct mp_group_row *rows;
	struct strbuf loc = STRBUF_INIT, tail = STRBUF_INIT;
	size_t n = mp_analysis_group(a, MP_VIEW_ALLOCATED, MP_BY_SITE, key, &rows);
	for (size_t i = 0; i < n && i < o->num_largest; i++) {
		strbuf_reset(&loc);
		strbuf_reset(&tail);
		mp_report_site(a, rows[i].site, rows[i].caller, MP_LOC_STYLE_COLON, t->full_names, &loc);
		strbuf_addstr(&tail, " -> ");
		if (key == MP_SORT_BYTES)
			mp_format_size(&tail, rows[i].c.bytes);
		else
			strbuf_addf(&tail, "%llu", (unsigned long long)rows[i].c.count);
		strbuf_addch(&tail, '\n');
		fitted_item(out, &loc, tail.buf, t);
	}
	if (!n)
		strbuf_addstr(out, "\t(no allocations)\n");
	strbuf_release(&loc);
	strbuf_release(&tail);
	free(rows);
}

static const char *module_path(const struct mp_analysis *a, uint32_t module)
{
	return module == MP_NONE ? "<unknown>" : mp_analysis_string(a, a->modules[module].path);
}

static void text_top_modules(const struct mp_analysis *a, const struct mp_stats_opts *o,
			     enum mp_sort_key key, const struct mp_term *t, struct strbuf *out)
{
	struct mp_group_row *rows;
	struct strbuf path = STRBUF_INIT, tail = STRBUF_INIT;
	size_t n = mp_analysis_group(a, MP_VIEW_ALLOCATED, MP_BY_MODULE, key, &rows);
	for (size_t i = 0; i < n && i < o->num_largest; i++) {
		strbuf_reset(&path);
		strbuf_reset(&tail);
		mp_text_addstr_safe(&path, module_path(a, rows[i].module));
		strbuf_addstr(&tail, ": ");
		mp_format_size(&tail, rows[i].c.bytes);
		strbuf_addf(&tail, " total | %llu allocation%s\n", (unsigned long long)rows[i].c.count,
			    rows[i].c.count == 1 ? "" : "s");
		fitted_item(out, &path, tail.buf, t);
	}
	if (!n)
		strbuf_addstr(out, "\t(no allocations)\n");
	strbuf_release(&path);
	strbuf_release(&tail);
	free(rows);
}

/* Each process: its name, what it allocated, what it leaked and how it ended. */
static void text_processes(const struct mp_analysis *a, struct strbuf *tmp, struct strbuf *out)
{
	for (size_t i = 0; i < a->nprocesses; i++) {
		const struct mp_process *pr = &a->processes[i];
		strbuf_addstr(out, "\t- ");
		strbuf_reset(tmp);
		mp_analysis_process_label(a, (uint32_t)i, tmp);
		mp_text_add_safe(out, tmp->buf, tmp->len);
		strbuf_addf(out, ": %llu allocation%s, ", (unsigned long long)pr->n_allocs,
			    pr->n_allocs == 1 ? "" : "s");
		mp_format_size(out, pr->bytes_allocated);
		strbuf_addf(out, ", %llu free%s, ", (unsigned long long)pr->n_frees,
			    pr->n_frees == 1 ? "" : "s");
		mp_format_size(out, pr->leaked.bytes);
		strbuf_addstr(out, " leaked, exit status ");
		strbuf_reset(tmp);
		mp_report_process_exit(a, (uint32_t)i, tmp);
		mp_text_add_safe(out, tmp->buf, tmp->len);
		strbuf_addch(out, '\n');
	}
}

void mp_stats_text(const struct mp_analysis *a, const struct mp_stats_opts *o,
		   const struct mp_term *t, struct strbuf *out)
{
	const struct mp_kind_totals **kinds;
	struct strbuf tmp = STRBUF_INIT;
	size_t nk;
	char num[32];

	strbuf_addstr(out, "Capture: ");
	mp_text_addstr_safe(out, o->capture);
	if (a->nprocesses > 1)
		strbuf_addf(out, " and %zu more: a process tree of %zu processes, the first one's "
			    "command line, pid and exit status below", a->nprocesses - 1, a->nprocesses);
	strbuf_addstr(out, "\nCommand line: ");
	mp_report_command_line(a, true, &tmp);
	mp_text_add_safe(out, tmp.buf, tmp.len);
	strbuf_addf(out, "\nPID: %llu\n", (unsigned long long)a->header.pid);
	strbuf_addstr(out, "Start time: ");
	mp_format_time(out, a->header.start_time_us);
	strbuf_addstr(out, "\nDuration: ");
	mp_format_duration(out, a->duration_us);
	strbuf_addstr(out, "\nExit status: ");
	mp_report_exit_status(a, out);
	strbuf_addch(out, '\n');
	if (a->attached)
		strbuf_addstr(out, "Tracking: since attach (allocations made before are not seen)\n");
	if (a->opts.flags & MP_ANALYSIS_NO_MMAP)
		strbuf_addf(out, "Mappings: left out (--no-mmap), %llu events ignored\n",
			    (unsigned long long)a->totals.n_ignored);
	if (a->totals.n_lost)
		strbuf_addf(out, "Events lost by the tracker: %llu\n",
			    (unsigned long long)a->totals.n_lost);
	if (a->totals.n_libunwind)
		strbuf_addf(out, "Stacks walked by libunwind (slow): %llu\n",
			    (unsigned long long)a->totals.n_libunwind);
	text_sampling(a, out);

	section(out, t, "Total allocations", since(a));
	snprintf(num, sizeof(num), "%llu", (unsigned long long)a->totals.n_allocs);
	strbuf_addf(out, "\t%s\n", num);
	section(out, t, "Total memory allocated", since(a));
	strbuf_addch(out, '\t');
	mp_format_size(out, a->totals.bytes_allocated);
	strbuf_addch(out, '\n');
	section(out, t, "Total frees", since(a));
	strbuf_addf(out, "\t%llu\n", (unsigned long long)a->totals.n_frees);
	if (a->attached || a->totals.n_unknown_frees) {
		section(out, t, "Unknown frees", "");
		strbuf_addf(out, "\t%llu (of memory allocated before tracking started, or not seen)\n",
			    (unsigned long long)a->totals.n_unknown_frees);
	}
	section(out, t, "Peak memory usage", est(a));
	strbuf_addch(out, '\t');
	mp_format_size(out, a->totals.peak_bytes);
	strbuf_addf(out, " in %llu block%s, ", (unsigned long long)a->totals.peak_count,
		    a->totals.peak_count == 1 ? "" : "s");
	mp_report_peak_time(a, out);
	strbuf_addch(out, '\n');
	section(out, t, "Leaked memory (still allocated at the end)", est(a));
	strbuf_addch(out, '\t');
	mp_format_size(out, a->totals.leaked_bytes);
	strbuf_addf(out, " in %llu block%s\n", (unsigned long long)a->totals.leaked_count,
		    a->totals.leaked_count == 1 ? "" : "s");
	section(out, t, "Histogram of allocation size", est(a));
	text_histogram(a, out);
	section(out, t, "Allocator type distribution", est(a));
	nk = kinds_by_count(a, &kinds);
	for (size_t i = 0; i < nk; i++)
		strbuf_addf(out, "\t %s: %llu\n", mp_kind_name(kinds[i]->kind),
			    (unsigned long long)kinds[i]->n_allocs);
	if (!nk)
		strbuf_addstr(out, "\t(no allocations)\n");
	free(kinds);
	if (a->nprocesses > 1) {
		section(out, t, "Allocations by process", est(a));
		text_processes(a, &tmp, out);
	}
	section(out, t, "Allocations by thread", est(a));
	for (size_t i = 0; i < a->nthreads; i++) {
		strbuf_addstr(out, "\t- ");
		strbuf_reset(&tmp);
		mp_analysis_thread_label(a, (uint32_t)i, &tmp);
		mp_text_add_safe(out, tmp.buf, tmp.len);
		strbuf_addf(out, ": %llu allocation%s, ", (unsigned long long)a->threads[i].n_allocs,
			    a->threads[i].n_allocs == 1 ? "" : "s");
		mp_format_size(out, a->threads[i].bytes_allocated);
		strbuf_addf(out, ", %llu free%s\n", (unsigned long long)a->threads[i].n_frees,
			    a->threads[i].n_frees == 1 ? "" : "s");
	}
	if (!a->nthreads)
		strbuf_addstr(out, "\t(no threads)\n");
	snprintf(num, sizeof(num), "Top %zu", o->num_largest);
	for (int k = 0; k < 4; k++) {
		static const char *const what[4] = {
			" largest allocating locations (by size)",
			" largest allocating locations (by number of allocations)",
			" allocating modules (by size)",
			" allocating modules (by number of allocations)",
		};
		enum mp_sort_key by = k % 2 ? MP_SORT_COUNT : MP_SORT_BYTES;
		strbuf_reset(&tmp);
		strbuf_addstr(&tmp, what[k]);
		strbuf_addstr(&tmp, est(a));
		section(out, t, num, tmp.buf);
		if (k < 2)
			text_top_sites(a, o, by, t, out);
		else
			text_top_modules(a, o, by, t, out);
	}
	strbuf_release(&tmp);
}

/* ---- JSON --------------------------------------------------------------- */

static void json_kind_name(struct strbuf *sb, uint32_t kind)
{
	/* memray's keys are its AllocatorType names: upper case. */
	for (const char *c = mp_kind_name(kind); *c; c++)
		strbuf_addch(sb, *c >= 'a' && *c <= 'z' ? *c - 'a' + 'A' : *c == '#' ? '_' : *c);
}

static void json_processes(struct mp_json *j, const struct mp_analysis *a)
{
	struct strbuf sb = STRBUF_INIT;
	mp_json_key(j, "processes");
	mp_json_begin_array(j);
	for (size_t i = 0; i < a->nprocesses; i++) {
		const struct mp_process *pr = &a->processes[i];
		mp_json_begin_object(j);
		mp_json_field_uint(j, "pid", pr->pid);
		mp_json_field_string(j, "command", mp_analysis_string(a, pr->name));
		mp_json_field_string(j, "capture", mp_analysis_string(a, pr->capture));
		mp_json_key(j, "parent");
		if (pr->parent == MP_NONE)
			mp_json_null(j);
		else
			mp_json_uint(j, pr->parent);
		mp_json_field_uint(j, "start_us", pr->start_us);
		mp_json_field_uint(j, "duration_us", pr->duration_us);
		mp_json_field_uint(j, "num_allocations", pr->n_allocs);
		mp_json_field_uint(j, "total_bytes", pr->bytes_allocated);
		mp_json_field_uint(j, "num_frees", pr->n_frees);
		mp_json_field_uint(j, "leaked_bytes", pr->leaked.bytes);
		mp_json_field_uint(j, "leaked_blocks", pr->leaked.count);
		if (mp_analysis_estimated(a))
			mp_json_field_uint(j, "sampling_interval", pr->sampling_interval);
		strbuf_reset(&sb);
		mp_report_process_exit(a, (uint32_t)i, &sb);
		mp_json_field_string(j, "exit_status", sb.buf);
		mp_json_end_object(j);
	}
	mp_json_end_array(j);
	strbuf_release(&sb);
}

static void json_top_sites(struct mp_json *j, const struct mp_analysis *a,
			   const struct mp_stats_opts *o, enum mp_sort_key key)
{
	struct mp_group_row *rows;
	struct strbuf loc = STRBUF_INIT;
	size_t n = mp_analysis_group(a, MP_VIEW_ALLOCATED, MP_BY_SITE, key, &rows);
	mp_json_key(j, key == MP_SORT_BYTES ? "top_allocations_by_size" : "top_allocations_by_count");
	mp_json_begin_array(j);
	for (size_t i = 0; i < n && i < o->num_largest; i++) {
		const struct mp_location *l = mp_analysis_location(a, rows[i].site);
		strbuf_reset(&loc);
		mp_location_format(a, rows[i].site, MP_LOC_STYLE_COLON, &loc);
		mp_json_begin_object(j);
		mp_json_key(j, "location");
		mp_json_string_len(j, loc.buf, loc.len);
		/* memray's key first: "size" in the list by size, "count" in the other. */
		mp_json_field_uint(j, key == MP_SORT_BYTES ? "size" : "count",
				   key == MP_SORT_BYTES ? rows[i].c.bytes : rows[i].c.count);
		mp_json_field_uint(j, key == MP_SORT_BYTES ? "count" : "size",
				   key == MP_SORT_BYTES ? rows[i].c.count : rows[i].c.bytes);
		mp_json_field_string(j, "function", mp_analysis_string(a, l->function));
		mp_json_field_string(j, "file", mp_analysis_string(a, l->file));
		mp_json_field_uint(j, "line", l->line);
		mp_json_field_string(j, "module", mp_location_module(a, rows[i].site));
		if (rows[i].caller != MP_NONE) {
			/* A library's site called from Python: the Python frame that called it. */
			const struct mp_location *c = mp_analysis_location(a, rows[i].caller);
			mp_json_key(j, "caller");
			mp_json_begin_object(j);
			mp_json_field_string(j, "function", mp_analysis_string(a, c->function));
			mp_json_field_string(j, "file", mp_analysis_string(a, c->file));
			mp_json_field_uint(j, "line", c->line);
			mp_json_end_object(j);
		}
		mp_json_end_object(j);
	}
	mp_json_end_array(j);
	strbuf_release(&loc);
	free(rows);
}

static void json_top_modules(struct mp_json *j, const struct mp_analysis *a,
			     const struct mp_stats_opts *o, enum mp_sort_key key)
{
	struct mp_group_row *rows;
	size_t n = mp_analysis_group(a, MP_VIEW_ALLOCATED, MP_BY_MODULE, key, &rows);
	mp_json_key(j, key == MP_SORT_BYTES ? "top_modules_by_allocation_size"
					    : "top_modules_by_allocation_count");
	mp_json_begin_array(j);
	for (size_t i = 0; i < n && i < o->num_largest; i++) {
		mp_json_begin_object(j);
		mp_json_field_string(j, "module", module_path(a, rows[i].module));
		mp_json_field_uint(j, "num_allocations", rows[i].c.count);
		mp_json_field_uint(j, "total_bytes", rows[i].c.bytes);
		mp_json_end_object(j);
	}
	mp_json_end_array(j);
	free(rows);
}

static void json_time(struct mp_json *j, uint64_t epoch_us)
{
	struct strbuf sb = STRBUF_INIT;
	mp_format_time(&sb, epoch_us);
	mp_json_string_len(j, sb.buf, sb.len);
	strbuf_release(&sb);
}

static void json_metadata(struct mp_json *j, const struct mp_analysis *a)
{
	struct strbuf sb = STRBUF_INIT;
	mp_json_key(j, "metadata");
	mp_json_begin_object(j);
	mp_json_key(j, "start_time");
	json_time(j, a->header.start_time_us);
	mp_json_key(j, "end_time");
	json_time(j, a->trailer.present && a->trailer.end_time_us
			     ? a->trailer.end_time_us
			     : a->header.start_time_us + a->duration_us);
	mp_json_field_uint(j, "duration_us", a->duration_us);
	mp_json_field_uint(j, "total_allocations", a->totals.n_allocs);
	mp_json_field_uint(j, "total_frames", a->ntraces);
	mp_json_field_uint(j, "peak_memory", a->totals.peak_bytes);
	mp_json_key(j, "command_line");
	mp_report_command_line(a, false, &sb);
	mp_json_string_len(j, sb.buf, sb.len);
	mp_json_field_strings(j, "argv", a->header.argv, a->header.argc);
	mp_json_field_uint(j, "pid", a->header.pid);
	mp_json_field_uint(j, "main_thread_id", a->header.main_tid);
	mp_json_field_bool(j, "has_native_traces", true);
	mp_json_field_bool(j, "symbolized", a->header.flags & MP_HF_SYMBOLIZED);
	mp_json_key(j, "capture_format");
	strbuf_reset(&sb);
	strbuf_addf(&sb, "%u.%u", a->header.major, a->header.minor);
	mp_json_string_len(j, sb.buf, sb.len);
	mp_json_field_string(j, "hostname", a->header.hostname);
	mp_json_field_string(j, "exe", a->header.exe);
	mp_json_end_object(j);
	strbuf_release(&sb);
}

void mp_stats_json(const struct mp_analysis *a, const struct mp_stats_opts *o, struct strbuf *out)
{
	struct mp_json j;
	struct strbuf sb = STRBUF_INIT;
	const struct mp_kind_totals **kinds;
	size_t nk;
	unsigned lo, hi;

	mp_json_init(&j, out, MP_JSON_PRETTY);
	mp_json_begin_object(&j);
	mp_json_field_uint(&j, "total_num_allocations", a->totals.n_allocs);
	mp_json_field_uint(&j, "total_bytes_allocated", a->totals.bytes_allocated);
	mp_json_field_uint(&j, "total_num_frees", a->totals.n_frees);

	mp_json_key(&j, "allocation_size_histogram");
	mp_json_begin_array(&j);
	hist_range(a, &lo, &hi);
	for (unsigned k = lo; k <= hi && lo <= hi; k++) {
		mp_json_begin_object(&j);
		mp_json_field_uint(&j, "min_bytes", mp_hist_bucket_min(k));
		mp_json_field_uint(&j, "max_bytes", mp_hist_bucket_max(k));
		mp_json_field_uint(&j, "count", a->totals.hist[k]);
		mp_json_end_object(&j);
	}
	mp_json_end_array(&j);

	mp_json_key(&j, "allocator_type_distribution");
	mp_json_begin_object(&j);
	nk = kinds_by_count(a, &kinds);
	for (size_t i = 0; i < nk; i++) {
		strbuf_reset(&sb);
		json_kind_name(&sb, kinds[i]->kind);
		mp_json_field_uint(&j, sb.buf, kinds[i]->n_allocs);
	}
	free(kinds);
	mp_json_end_object(&j);

	json_top_sites(&j, a, o, MP_SORT_BYTES);
	json_top_sites(&j, a, o, MP_SORT_COUNT);
	json_top_modules(&j, a, o, MP_SORT_BYTES);
	json_top_modules(&j, a, o, MP_SORT_COUNT);

	mp_json_key(&j, "threads");
	mp_json_begin_array(&j);
	for (size_t i = 0; i < a->nthreads; i++) {
		const struct mp_thread *t = &a->threads[i];
		mp_json_begin_object(&j);
		mp_json_field_uint(&j, "tid", t->tid);
		mp_json_field_string(&j, "name", mp_analysis_string(a, t->name));
		mp_json_field_uint(&j, "num_allocations", t->n_allocs);
		mp_json_field_uint(&j, "total_bytes", t->bytes_allocated);
		mp_json_field_uint(&j, "num_frees", t->n_frees);
		mp_json_field_uint(&j, "leaked_bytes", t->live.bytes);
		mp_json_end_object(&j);
	}
	mp_json_end_array(&j);
	if (a->nprocesses > 1)
		json_processes(&j, a);

	json_metadata(&j, a);

	mp_json_field_uint(&j, "peak_memory_bytes", a->totals.peak_bytes);
	mp_json_field_uint(&j, "peak_memory_blocks", a->totals.peak_count);
	mp_json_key(&j, "peak_time_us");
	if (a->totals.peak_ticks)
		mp_json_uint(&j, a->totals.peak_time_us);
	else
		mp_json_null(&j);
	mp_json_field_uint(&j, "leaked_bytes", a->totals.leaked_bytes);
	mp_json_field_uint(&j, "leaked_blocks", a->totals.leaked_count);
	mp_json_field_uint(&j, "unknown_frees", a->totals.n_unknown_frees);
	mp_json_field_bool(&j, "since_attach", a->attached);
	mp_json_field_uint(&j, "lost_events", a->totals.n_lost);
	mp_json_field_uint(&j, "libunwind_stacks", a->totals.n_libunwind);
	mp_json_field_bool(&j, "mappings_included", !(a->opts.flags & MP_ANALYSIS_NO_MMAP));
	/* A sampled capture's figures are estimates (0: every event recorded, the figures exact). */
	mp_json_field_uint(&j, "sampling_interval", a->sampling_interval);
	mp_json_field_bool(&j, "estimated", mp_analysis_estimated(a));
	if (a->sampling_mixed)
		mp_json_field_bool(&j, "sampling_intervals_differ", true);
	if (mp_analysis_estimated(a)) {
		/* One standard error of the estimates, in bytes. */
		mp_json_key(&j, "estimate_errors");
		mp_json_begin_object(&j);
		mp_json_field_uint(&j, "total_bytes_allocated", (uint64_t)llround(sqrt(a->totals.var_allocated)));
		mp_json_field_uint(&j, "peak_memory_bytes", (uint64_t)llround(sqrt(a->totals.var_peak)));
		mp_json_field_uint(&j, "leaked_bytes", (uint64_t)llround(sqrt(a->totals.var_leaked)));
		mp_json_end_object(&j);
	}
	if (a->trailer.present && a->trailer.has_exit_signal) {
		mp_json_field_int(&j, "exit_signal", a->trailer.exit_signal);
		mp_json_field_bool(&j, "core_dumped", a->trailer.core_dumped);
	} else {
		mp_json_key(&j, "exit_status");
		if (a->trailer.present && a->trailer.has_exit_code)
			mp_json_int(&j, a->trailer.exit_code);
		else
			mp_json_null(&j);
	}
	mp_json_field_bool(&j, "truncated", !a->trailer.present);
	mp_json_end_object(&j);
	strbuf_release(&sb);
}
