/* The live view's screen as lines of text: header, table and keys, fitted to the terminal. */
#include <config.h>
#include "lib/live/screen.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "lib/report/render-text.h"
#include "lib/report/report.h"
#include "lib/util/xalloc.h"

size_t mp_live_table_height(int height)
{
	return height > MP_LIVE_HEADER_LINES + 1 ? (size_t)(height - MP_LIVE_HEADER_LINES - 1) : 0;
}

void mp_live_screen_init(struct mp_live_screen *s)
{
	memset(s, 0, sizeof(*s));
}

void mp_live_screen_release(struct mp_live_screen *s)
{
	for (int i = 0; i < s->height; i++)
		strbuf_release(&s->text[i]);
	free(s->text);
	free(s->style);
	memset(s, 0, sizeof(*s));
}

static void screen_size(struct mp_live_screen *s, int width, int height)
{
	if (height != s->height) {
		mp_live_screen_release(s);
		s->text = xcalloc(height > 0 ? (size_t)height : 1, sizeof(*s->text));
		s->style = xcalloc(height > 0 ? (size_t)height : 1, sizeof(*s->style));
		for (int i = 0; i < height; i++)
			strbuf_init(&s->text[i], 0);
		s->height = height;
	}
	s->width = width;
	for (int i = 0; i < height; i++) {
		strbuf_reset(&s->text[i]);
		s->style[i] = MP_LIVE_PLAIN;
	}
}

/* ---- text ---------------------------------------------------------------- */

void mp_live_format_size(struct strbuf *sb, uint64_t bytes)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v;
	size_t u = 0;
	if (bytes < 1000) {
		strbuf_addf(sb, "%llu B", (unsigned long long)bytes);
		return;
	}
	v = (double)bytes / 1024;
	while (v >= 999.5 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024;
		u++;
	}
	strbuf_addf(sb, v < 9.995 ? "%.2f %s" : v < 99.95 ? "%.1f %s" : "%.0f %s", v, units[u]);
}

/* "12.3 s", "5 min 02 s", "3 h 05 min". */
static void format_duration(struct strbuf *sb, uint64_t us)
{
	uint64_t s = us / 1000000;
	if (s < 60)
		strbuf_addf(sb, "%llu.%llu s", (unsigned long long)s,
			    (unsigned long long)(us % 1000000 / 100000));
	else if (s < 3600)
		strbuf_addf(sb, "%llu min %02llu s", (unsigned long long)(s / 60),
			    (unsigned long long)(s % 60));
	else
		strbuf_addf(sb, "%llu h %02llu min", (unsigned long long)(s / 3600),
			    (unsigned long long)(s % 3600 / 60));
}

/*
 * Append text from the capture (untrusted): no control character reaches the
 * terminal, and without UTF-8 nothing but ASCII does.
 */
static void add_name(struct strbuf *sb, const char *s, bool utf8)
{
	struct strbuf safe = STRBUF_INIT;
	mp_text_addstr_safe(&safe, s);
	if (utf8) {
		strbuf_add(sb, safe.buf, safe.len);
	} else {
		for (size_t i = 0; i < safe.len; i++) {
			unsigned char c = (unsigned char)safe.buf[i];
			if (c < 0x80)
				strbuf_addch(sb, (char)c);
			else if ((c & 0xc0) != 0x80)
				strbuf_addch(sb, '?'); /* one per character, not per byte */
		}
	}
	strbuf_release(&safe);
}

/* The byte length of the first `cols` columns of s (a code point each). */
static size_t cut_at(const char *s, size_t len, size_t cols)
{
	size_t i = 0;
	while (i < len && cols) {
		i++;
		while (i < len && ((unsigned char)s[i] & 0xc0) == 0x80)
			i++;
		cols--;
	}
	return i;
}

/* Append s in exactly width columns: cut with a mark when longer, padded when pad. */
static void add_fit(struct strbuf *sb, const char *s, size_t width, bool utf8, bool pad)
{
	size_t len = strlen(s), w = mp_text_width(s, len);
	if (w <= width) {
		strbuf_add(sb, s, len);
		if (pad)
			mp_text_pad(sb, width - w);
		return;
	}
	if (!width)
		return;
	strbuf_add(sb, s, cut_at(s, len, width - 1));
	strbuf_addstr(sb, utf8 ? "\u2026" : "~");
}

/* A line of left text and right text (right-aligned), the left one cut to leave room. */
static void two_sides(struct strbuf *line, const char *left, const char *right, int width, bool utf8)
{
	size_t rw = mp_text_width(right, strlen(right)), w = width > 0 ? (size_t)width : 0;
	if (!rw || rw + 2 > w) {
		add_fit(line, left, w, utf8, false);
		return;
	}
	add_fit(line, left, w - rw - 2, utf8, true);
	strbuf_addstr(line, "  ");
	strbuf_addstr(line, right);
}

/* ---- the header ----------------------------------------------------------- */

static void state_text(const struct mp_live *m, struct strbuf *sb)
{
	const char *sig;
	switch (m->state) {
	case MP_LIVE_WAITING:
		strbuf_addstr(sb, "waiting for the tracker");
		return;
	case MP_LIVE_RUNNING:
		strbuf_addstr(sb, "running ");
		break;
	case MP_LIVE_ENDED:
		if (m->waited && WIFEXITED(m->wait_status)) {
			strbuf_addf(sb, "exited with status %d after ", WEXITSTATUS(m->wait_status));
		} else if (m->waited && WIFSIGNALED(m->wait_status)) {
			sig = sigabbrev_np(WTERMSIG(m->wait_status));
			if (sig)
				strbuf_addf(sb, "killed by SIG%s after ", sig);
			else
				strbuf_addf(sb, "killed by signal %d after ", WTERMSIG(m->wait_status));
		} else if (m->exit_seen && m->exit_status_known) {
			strbuf_addf(sb, "exited with status %lld after ", (long long)m->exit_status);
		} else if (m->exit_seen) {
			strbuf_addstr(sb, "exited after ");
		} else if (m->detached) {
			strbuf_addstr(sb, "tracking stopped after ");
		} else {
			strbuf_addstr(sb, "ended after ");
		}
		break;
	}
	format_duration(sb, m->time_us);
}

static void title_line(const struct mp_live *m, const struct mp_live_view *v, int width,
		       struct strbuf *line)
{
	struct strbuf left = STRBUF_INIT, right = STRBUF_INIT;
	strbuf_addstr(&left, "memprof live");
	if (m->pid)
		strbuf_addf(&left, "  pid %d ", (int)m->pid);
	if (m->have_analysis) {
		const struct mp_header *h = &m->a.header;
		for (size_t i = 0; i < h->argc; i++) {
			strbuf_addch(&left, ' ');
			add_name(&left, h->argv[i], v->utf8);
		}
		if (!h->argc && h->exe) {
			strbuf_addch(&left, ' ');
			add_name(&left, h->exe, v->utf8);
		}
	}
	state_text(m, &right);
	two_sides(line, left.buf, right.buf, width, v->utf8);
	strbuf_release(&left);
	strbuf_release(&right);
}

static void figures_line(const struct mp_live *m, const struct mp_live_view *v, int width,
			 struct strbuf *line)
{
	struct strbuf sb = STRBUF_INIT, count = STRBUF_INIT;
	struct mp_counts heap = mp_live_heap(m);
	bool estimated = m->have_analysis && mp_analysis_estimated(&m->a);
	/* A sampled stream: every figure but the RSS an estimate. */
	strbuf_addstr(&sb, estimated ? "estimated heap " : "heap ");
	mp_live_format_size(&sb, heap.bytes);
	mp_format_count(&count, heap.count);
	strbuf_addf(&sb, " in %s block%s   peak ", count.buf, heap.count == 1 ? "" : "s");
	mp_live_format_size(&sb, mp_live_peak(m));
	strbuf_addstr(&sb, "   RSS ");
	if (m->rss)
		mp_live_format_size(&sb, m->rss);
	else
		strbuf_addstr(&sb, "-");
	if (m->have_analysis) {
		strbuf_reset(&count);
		mp_format_count(&count, m->a.totals.n_allocs);
		strbuf_addf(&sb, "   %s allocations, ", count.buf);
		strbuf_reset(&count);
		mp_format_count(&count, m->a.totals.n_frees);
		strbuf_addf(&sb, "%s frees", count.buf);
		if (estimated) {
			strbuf_addstr(&sb, "   sampled, one per ");
			mp_live_format_size(&sb, m->a.sampling_interval);
		}
	}
	add_fit(line, sb.buf, width > 0 ? (size_t)width : 0, v->utf8, false);
	strbuf_release(&sb);
	strbuf_release(&count);
}

static const char *const sort_names[] = { "own", "total", "allocations", "blocks" };

static void thread_line(const struct mp_live *m, const struct mp_live_view *v, int width,
			struct strbuf *line)
{
	struct strbuf left = STRBUF_INIT, right = STRBUF_INIT;
	size_t n = m->have_analysis ? m->a.nthreads : 0;
	if (m->thread == MP_THREAD_MERGED || m->thread >= n) {
		strbuf_addf(&left, "threads: all %zu", n);
	} else {
		const struct mp_thread *t = &m->a.threads[m->thread];
		strbuf_addf(&left, "thread %u of %zu: tid %llu", m->thread + 1, n,
			    (unsigned long long)t->tid);
		if (t->name) {
			strbuf_addstr(&left, " '");
			add_name(&left, mp_analysis_string(&m->a, t->name), v->utf8);
			strbuf_addch(&left, '\'');
		}
		strbuf_addstr(&left, ", live ");
		mp_live_format_size(&left, t->live.bytes);
	}
	strbuf_addf(&right, "%ssorted by %s", v->paused ? "table paused, " : "", sort_names[m->sort]);
	two_sides(line, left.buf, right.buf, width, v->utf8);
	strbuf_release(&left);
	strbuf_release(&right);
}

/* ---- the table ------------------------------------------------------------ */

enum { COL_OWN, COL_OWN_PCT, COL_TOTAL, COL_TOTAL_PCT, COL_ALLOCS, COL_BLOCKS, NCOLS };
static const char *const col_names[NCOLS] = { "Own", "Own%", "Total", "Total%", "Allocs", "Blocks" };
static const size_t col_width[NCOLS] = { 8, 6, 8, 6, 11, 9 };
/* The sort each column stands for (the percentages share their figure's). */
static const enum mp_live_sort col_sort[NCOLS] = {
	MP_LIVE_BY_OWN, MP_LIVE_BY_OWN, MP_LIVE_BY_TOTAL, MP_LIVE_BY_TOTAL, MP_LIVE_BY_ALLOCS,
	MP_LIVE_BY_BLOCKS,
};

/* Percentages only where the location keeps room: 100 columns and more. */
static bool col_shown(int c, int width)
{
	return width >= 100 || (c != COL_OWN_PCT && c != COL_TOTAL_PCT);
}

static void add_right(struct strbuf *line, const char *s, size_t width)
{
	size_t len = strlen(s);
	if (len < width)
		mp_text_pad(line, width - len);
	strbuf_addstr(line, s);
	strbuf_addch(line, ' ');
}

/* Columns left for the location. */
static size_t location_width(int width)
{
	size_t used = 1;
	for (int c = 0; c < NCOLS; c++)
		if (col_shown(c, width))
			used += col_width[c] + 1;
	return width > 0 && (size_t)width > used ? (size_t)width - used : 0;
}

static void heading_line(const struct mp_live *m, int width, struct strbuf *line)
{
	for (int c = 0; c < NCOLS; c++) {
		char name[16];
		if (!col_shown(c, width))
			continue;
		/* The sorted figure is marked: <Own>. */
		if (col_sort[c] == m->sort && c != COL_OWN_PCT && c != COL_TOTAL_PCT)
			snprintf(name, sizeof(name), "<%s>", col_names[c]);
		else
			snprintf(name, sizeof(name), "%s", col_names[c]);
		add_right(line, name, col_width[c]);
	}
	strbuf_addstr(line, " Location");
}

static void percent(struct strbuf *sb, uint64_t part, uint64_t total)
{
	uint64_t tenths = total ? (part * 1000 + total / 2) / total : 0;
	if (total && part > UINT64_MAX / 1000)
		tenths = (uint64_t)((double)part * 1000 / (double)total + 0.5);
	strbuf_addf(sb, "%llu.%llu%%", (unsigned long long)(tenths / 10),
		    (unsigned long long)(tenths % 10));
}

static void row_line(const struct mp_live *m, const struct mp_live_view *v,
		     const struct mp_live_row *r, int width, struct strbuf *line)
{
	struct strbuf cell = STRBUF_INIT, loc = STRBUF_INIT;
	for (int c = 0; c < NCOLS; c++) {
		if (!col_shown(c, width))
			continue;
		strbuf_reset(&cell);
		switch (c) {
		case COL_OWN: mp_live_format_size(&cell, r->own); break;
		case COL_OWN_PCT: percent(&cell, r->own, m->shown.bytes); break;
		case COL_TOTAL: mp_live_format_size(&cell, r->total); break;
		case COL_TOTAL_PCT: percent(&cell, r->total, m->shown.bytes); break;
		case COL_ALLOCS: mp_format_count(&cell, r->allocs); break;
		case COL_BLOCKS: mp_format_count(&cell, r->blocks); break;
		}
		add_right(line, cell.buf, col_width[c]);
	}
	strbuf_addch(line, ' ');
	{
		struct strbuf fn = STRBUF_INIT;
		mp_report_name(mp_analysis_string(&m->a, r->function), m->full_names, &fn);
		add_name(&loc, fn.buf, v->utf8);
		strbuf_release(&fn);
	}
	if (r->file) {
		const char *file = mp_analysis_string(&m->a, r->file), *base = strrchr(file, '/');
		strbuf_addstr(&loc, " at ");
		add_name(&loc, base ? base + 1 : file, v->utf8);
	}
	add_fit(line, loc.buf, location_width(width), v->utf8, false);
	strbuf_release(&cell);
	strbuf_release(&loc);
}

static void keys_line(const struct mp_live *m, const struct mp_live_view *v, size_t rows,
		      int width, struct strbuf *line)
{
	struct strbuf left = STRBUF_INIT, right = STRBUF_INIT;
	if (v->note)
		add_name(&left, v->note, v->utf8);
	else
		strbuf_addstr(&left, "q quit  o/t/a/b sort  </> thread  up/down PgUp/PgDn  "
				     "space pause");
	if (m->nrows)
		strbuf_addf(&right, "%zu-%zu of %zu", v->top + 1,
			    v->top + rows < m->nrows ? v->top + rows : m->nrows, m->nrows);
	two_sides(line, left.buf, right.buf, width, v->utf8);
	strbuf_release(&left);
	strbuf_release(&right);
}

void mp_live_render(const struct mp_live *m, const struct mp_live_view *v, int width, int height,
		    struct mp_live_screen *s)
{
	size_t rows = mp_live_table_height(height);
	int y = 0;
	screen_size(s, width, height);
	if (height <= 0)
		return;
	title_line(m, v, width, &s->text[y]);
	s->style[y++] = MP_LIVE_BOLD;
	if (y < height)
		figures_line(m, v, width, &s->text[y++]);
	if (y < height)
		thread_line(m, v, width, &s->text[y++]);
	if (y < height) {
		heading_line(m, width, &s->text[y]);
		s->style[y++] = MP_LIVE_REVERSE;
	}
	for (size_t i = 0; i < rows; i++, y++) {
		size_t r = v->top + i;
		if (r < m->nrows)
			row_line(m, v, &m->rows[r], width, &s->text[y]);
		else if (i == 0 && m->state == MP_LIVE_WAITING)
			strbuf_addstr(&s->text[y], "  (waiting for the process's first records)");
		else if (i == 0 && !m->nrows)
			strbuf_addstr(&s->text[y], "  (no allocation since tracking began)");
	}
	if (y < height) {
		keys_line(m, v, rows, width, &s->text[height - 1]);
		s->style[height - 1] = MP_LIVE_REVERSE;
	}
	/* Nothing wider than the screen (the heading's fixed columns on a narrow one). */
	for (int i = 0; i < height; i++) {
		struct strbuf *l = &s->text[i];
		if (width >= 0 && mp_text_width(l->buf, l->len) > (size_t)width)
			strbuf_setlen(l, cut_at(l->buf, l->len, (size_t)width));
	}
}
