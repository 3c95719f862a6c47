/* Terminal formatting helpers: sizes, durations, colours, widths and tables. */
#include <config.h>
#include "lib/report/render-text.h"

#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "lib/util/xalloc.h"

void mp_format_size(struct strbuf *sb, uint64_t bytes)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v = (double)bytes;
	size_t u = 0;
	if (bytes < 1024) {
		strbuf_addf(sb, "%llu B", (unsigned long long)bytes);
		return;
	}
	v /= 1024;
	/* Move up a unit when the value would print as 1024.000. */
	while (u + 1 < sizeof(units) / sizeof(units[0]) && v >= 1024 - 0.0005) {
		v /= 1024;
		u++;
	}
	strbuf_addf(sb, "%.3f %s", v, units[u]);
}

void mp_format_duration(struct strbuf *sb, uint64_t us)
{
	if (us < 1000) {
		strbuf_addf(sb, "%llu us", (unsigned long long)us);
	} else if (us < 1000000) {
		strbuf_addf(sb, "%.3f ms", (double)us / 1e3);
	} else if (us < 60 * 1000000ULL) {
		strbuf_addf(sb, "%.3f s", (double)us / 1e6);
	} else if (us < 3600 * 1000000ULL) {
		strbuf_addf(sb, "%llu min %.3f s", (unsigned long long)(us / 60000000),
			    (double)(us % 60000000) / 1e6);
	} else {
		uint64_t s = us / 1000000;
		strbuf_addf(sb, "%llu h %llu min %llu s", (unsigned long long)(s / 3600),
			    (unsigned long long)(s / 60 % 60), (unsigned long long)(s % 60));
	}
}

void mp_format_percent(struct strbuf *sb, uint64_t part, uint64_t total)
{
	strbuf_addf(sb, "%.2f %%", total ? (double)part * 100.0 / (double)total : 0.0);
}

void mp_format_count(struct strbuf *sb, uint64_t n)
{
	char digits[32];
	int len = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)n);
	for (int i = 0; i < len; i++) {
		if (i && (len - i) % 3 == 0)
			strbuf_addch(sb, ',');
		strbuf_addch(sb, digits[i]);
	}
}

void mp_term_detect(struct mp_term *t, int fd)
{
	struct winsize ws;
	const char *no_color = getenv("NO_COLOR"), *term = getenv("TERM");
	const char *columns = getenv("COLUMNS");
	char *end;
	long n;
	t->tty = isatty(fd);
	t->color = t->tty && !(no_color && *no_color) && !(term && !strcmp(term, "dumb"));
	t->width = 80;
	t->height = 24;
	t->limit = MP_TERM_PIPE_LIMIT;
	t->full_names = false;
	if (t->tty && !ioctl(fd, TIOCGWINSZ, &ws)) {
		if (ws.ws_col)
			t->limit = t->width = ws.ws_col;
		if (ws.ws_row)
			t->height = ws.ws_row;
	}
	/* As ls(1) and less(1): COLUMNS says the width, terminal or not. */
	if (columns && *columns) {
		n = strtol(columns, &end, 10);
		if (!*end && n > 0 && n <= 100000)
			t->limit = (size_t)n;
	}
}

const char *mp_color(const struct mp_term *t, enum mp_color c)
{
	static const char *const codes[] = {
		[MP_COLOR_RESET] = "\033[0m",   [MP_COLOR_BOLD] = "\033[1m",
		[MP_COLOR_DIM] = "\033[2m",     [MP_COLOR_RED] = "\033[31m",
		[MP_COLOR_GREEN] = "\033[32m",  [MP_COLOR_YELLOW] = "\033[33m",
		[MP_COLOR_MAGENTA] = "\033[35m", [MP_COLOR_CYAN] = "\033[36m",
		[MP_COLOR_BRIGHT_GREEN] = "\033[92m",
	};
	return t && t->color ? codes[c] : "";
}

enum mp_color mp_share_color(uint64_t part, uint64_t total)
{
	double share = total ? (double)part / (double)total : 0;
	if (share > 0.60)
		return MP_COLOR_RED;
	if (share > 0.20)
		return MP_COLOR_YELLOW;
	if (share > 0.05)
		return MP_COLOR_GREEN;
	return MP_COLOR_BRIGHT_GREEN;
}

size_t mp_utf8_decode(const unsigned char *s, size_t len, uint32_t *cp)
{
	size_t n;
	uint32_t c = s[0], min;
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2, c &= 0x1f, min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3, c &= 0x0f, min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4, c &= 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (len < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

void mp_text_add_safe(struct strbuf *sb, const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	for (size_t i = 0; i < len;) {
		uint32_t cp;
		size_t n = mp_utf8_decode(s + i, len - i, &cp);
		if (!n || cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) {
			/* A control character or a stray byte: shown, never obeyed. */
			for (size_t k = 0; k < (n ? n : 1); k++)
				strbuf_addf(sb, "\\x%02x", s[i + k]);
			i += n ? n : 1;
			continue;
		}
		strbuf_add(sb, s + i, n);
		i += n;
	}
}

/* Bytes of the escape sequence at s ("\033[...m"), or 0. */
static size_t escape_len(const char *s, size_t len)
{
	size_t i = 2;
	if (len < 2 || s[0] != '\033' || s[1] != '[')
		return 0;
	while (i < len && s[i] != 'm')
		i++;
	return i < len ? i + 1 : len;
}

size_t mp_text_width(const char *s, size_t len)
{
	size_t w = 0;
	for (size_t i = 0; i < len;) {
		size_t e = escape_len(s + i, len - i);
		if (e) {
			i += e;
			continue;
		}
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			w++;
		i++;
	}
	return w;
}

/* Bytes of s (without escapes) that hold its first `cols` code points. */
static size_t bytes_for_width(const char *s, size_t len, size_t cols)
{
	size_t w = 0, i = 0;
	while (i < len) {
		if (((unsigned char)s[i] & 0xc0) != 0x80) {
			if (w == cols)
				break;
			w++;
		}
		i++;
	}
	return i;
}

void mp_text_fit(struct strbuf *sb, const char *s, size_t width)
{
	size_t len = strlen(s);
	if (!width || mp_text_width(s, len) <= width) {
		strbuf_add(sb, s, len);
		return;
	}
	strbuf_add(sb, s, bytes_for_width(s, len, width - 1));
	strbuf_addstr(sb, "\u2026");
}

void mp_text_cut(struct strbuf *sb, size_t start, size_t width, const struct mp_term *t)
{
	const char *s = sb->buf + start;
	size_t len = sb->len - start, w = 0, i = 0;
	if (!width || mp_text_width(s, len) <= width)
		return;
	/* Keep width - 1 columns (escape sequences take none), then the mark. */
	while (i < len) {
		size_t e = escape_len(s + i, len - i);
		if (e) {
			i += e;
			continue;
		}
		if (((unsigned char)s[i] & 0xc0) != 0x80) {
			if (w == width - 1)
				break;
			w++;
		}
		i++;
	}
	strbuf_setlen(sb, start + i);
	strbuf_addstr(sb, "\u2026");
	strbuf_addstr(sb, mp_color(t, MP_COLOR_RESET));
}

void mp_text_pad(struct strbuf *sb, size_t n)
{
	while (n--)
		strbuf_addch(sb, ' ');
}

/* ---- tables ------------------------------------------------------------- */

void mp_table_init(struct mp_table *t, size_t ncols, const char *const *headers,
		   const enum mp_align *align, size_t flex)
{
	memset(t, 0, sizeof(*t));
	t->ncols = ncols;
	t->headers = headers;
	t->align = align;
	t->flex = flex;
}

void mp_table_release(struct mp_table *t)
{
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i].text);
	free(t->cells);
	memset(t, 0, sizeof(*t));
}

void mp_table_row(struct mp_table *t)
{
	ALLOC_GROW(t->cells, (t->nrows + 1) * t->ncols, t->alloc);
	memset(t->cells + t->nrows * t->ncols, 0, t->ncols * sizeof(*t->cells));
	t->nrows++;
}

void mp_table_cell_segs(struct mp_table *t, size_t col, size_t n, const char *const *texts,
			const enum mp_color *colors)
{
	struct mp_table_cell *c = &t->cells[(t->nrows - 1) * t->ncols + col];
	struct strbuf sb = STRBUF_INIT;
	if (n > MP_TABLE_MAX_SEGS)
		n = MP_TABLE_MAX_SEGS;
	for (size_t i = 0; i < n; i++) {
		strbuf_addstr(&sb, texts[i]);
		c->seg_end[i] = sb.len;
		c->seg_color[i] = colors[i];
	}
	c->nseg = n;
	free(c->text);
	c->text = strbuf_detach(&sb, NULL);
}

void mp_table_cell(struct mp_table *t, size_t col, const char *text, enum mp_color color)
{
	mp_table_cell_segs(t, col, 1, &text, &color);
}

static void hline(struct strbuf *sb, const size_t *w, size_t ncols, const char *left,
		  const char *fill, const char *mid, const char *right)
{
	strbuf_addstr(sb, left);
	for (size_t c = 0; c < ncols; c++) {
		for (size_t i = 0; i < w[c] + 2; i++)
			strbuf_addstr(sb, fill);
		strbuf_addstr(sb, c + 1 < ncols ? mid : right);
	}
	strbuf_addch(sb, '\n');
}

/* One cell's text, cut to width columns, coloured by segment, padded to width. */
static void put_cell(struct strbuf *sb, const struct mp_table_cell *c, size_t width,
		     enum mp_align align, const struct mp_term *term)
{
	const char *text = c->text ? c->text : "";
	size_t len = strlen(text), tw = mp_text_width(text, len), keep = len, start = 0;
	bool cut = tw > width;
	if (cut) {
		keep = bytes_for_width(text, len, width ? width - 1 : 0);
		tw = width;
	}
	if (align == MP_ALIGN_RIGHT)
		mp_text_pad(sb, width - tw);
	for (size_t i = 0; i < c->nseg && start < keep; i++) {
		size_t end = c->seg_end[i] < keep ? c->seg_end[i] : keep;
		bool colored = c->seg_color[i] != MP_COLOR_RESET && *mp_color(term, c->seg_color[i]);
		if (colored)
			strbuf_addstr(sb, mp_color(term, c->seg_color[i]));
		strbuf_add(sb, text + start, end - start);
		if (cut && end == keep)
			strbuf_addstr(sb, "\u2026");
		if (colored)
			strbuf_addstr(sb, mp_color(term, MP_COLOR_RESET));
		start = end;
	}
	if (cut && !c->nseg)
		strbuf_addstr(sb, "\u2026");
	if (align == MP_ALIGN_LEFT)
		mp_text_pad(sb, width - tw);
}

void mp_table_render(const struct mp_table *t, const struct mp_term *term, size_t max_width,
		     struct strbuf *sb)
{
	size_t *w = xcalloc(t->ncols, sizeof(*w)), total = 1;
	for (size_t c = 0; c < t->ncols; c++) {
		w[c] = mp_text_width(t->headers[c], strlen(t->headers[c]));
		for (size_t r = 0; r < t->nrows; r++) {
			const char *text = t->cells[r * t->ncols + c].text;
			size_t cw = text ? mp_text_width(text, strlen(text)) : 0;
			if (cw > w[c])
				w[c] = cw;
		}
		total += w[c] + 3;
	}
	if (max_width && total > max_width && t->flex < t->ncols) {
		size_t over = total - max_width, min = 10;
		w[t->flex] = w[t->flex] > over + min ? w[t->flex] - over : (w[t->flex] < min ? w[t->flex] : min);
	}
	hline(sb, w, t->ncols, "\u250f", "\u2501", "\u2533", "\u2513");
	strbuf_addstr(sb, "\u2503");
	for (size_t c = 0; c < t->ncols; c++) {
		struct mp_table_cell h = { (char *)t->headers[c], 1, { strlen(t->headers[c]) },
					   { MP_COLOR_BOLD } };
		strbuf_addch(sb, ' ');
		put_cell(sb, &h, w[c], t->align[c], term);
		strbuf_addstr(sb, " \u2503");
	}
	strbuf_addch(sb, '\n');
	hline(sb, w, t->ncols, "\u2521", "\u2501", "\u2547", "\u2529");
	for (size_t r = 0; r < t->nrows; r++) {
		strbuf_addstr(sb, "\u2502");
		for (size_t c = 0; c < t->ncols; c++) {
			strbuf_addch(sb, ' ');
			put_cell(sb, &t->cells[r * t->ncols + c], w[c], t->align[c], term);
			strbuf_addstr(sb, " \u2502");
		}
		strbuf_addch(sb, '\n');
	}
	hline(sb, w, t->ncols, "\u2514", "\u2500", "\u2534", "\u2518");
	free(w);
}
