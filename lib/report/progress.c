/* The progress bar of long analyses, drawn on a terminal only. */
#include <config.h>
#include "lib/report/progress.h"

#include <errno.h>
#include <time.h>
#include <unistd.h>

#include "lib/report/render-text.h"

#define FIRST_DRAW_S 0.5
#define REDRAW_S 0.1

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void mp_progress_init(struct mp_progress *p, int fd, const char *label)
{
	struct mp_term term;
	mp_term_detect(&term, fd);
	p->fd = fd;
	p->enabled = term.tty;
	p->shown = false;
	p->total = 0;
	p->start = p->last = now();
	p->width = term.width;
	p->label = label;
}

void mp_progress_start(struct mp_progress *p, uint64_t total)
{
	p->total = total;
	p->start = p->last = now();
}

void mp_progress_format(struct strbuf *sb, const char *label, uint64_t bytes, uint64_t total,
			uint64_t records, double elapsed, int width)
{
	struct strbuf tail = STRBUF_INIT;
	size_t used;
	strbuf_addstr(sb, label);
	if (total) {
		unsigned pct = bytes >= total ? 100 : (unsigned)(bytes * 100 / total);
		strbuf_addf(&tail, " %3u%%  ", pct);
		mp_format_size(&tail, bytes);
		strbuf_addch(&tail, '/');
		mp_format_size(&tail, total);
	} else {
		strbuf_addstr(&tail, "  ");
		mp_format_size(&tail, bytes);
	}
	strbuf_addstr(&tail, "  ");
	mp_format_count(&tail, records);
	strbuf_addstr(&tail, " records");
	if (elapsed > 0)
		strbuf_addf(&tail, "  %.1f M/s", (double)records / elapsed / 1e6);
	/* The bar takes what is left of the line, between 10 and 40 columns. */
	used = mp_text_width(sb->buf, sb->len) + tail.len + 3;
	if (total && width > 0 && (size_t)width > used + 10) {
		size_t bar = (size_t)width - used - 1, done;
		if (bar > 40)
			bar = 40;
		done = bytes >= total ? bar : (size_t)((double)bar * (double)bytes / (double)total);
		strbuf_addstr(sb, " [");
		for (size_t i = 0; i < bar; i++)
			strbuf_addch(sb, i < done ? '#' : '-');
		strbuf_addch(sb, ']');
	}
	strbuf_add(sb, tail.buf, tail.len);
	strbuf_release(&tail);
	if (width > 1 && mp_text_width(sb->buf, sb->len) >= (size_t)width) {
		/* Never wrap: a wrapped line cannot be erased with \r. */
		struct strbuf cut = STRBUF_INIT;
		mp_text_fit(&cut, sb->buf, (size_t)width - 1);
		strbuf_reset(sb);
		strbuf_add(sb, cut.buf, cut.len);
		strbuf_release(&cut);
	}
}

static void put(int fd, const char *s, size_t len)
{
	while (len) {
		ssize_t n = write(fd, s, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		s += n;
		len -= (size_t)n;
	}
}

void mp_progress_update(struct mp_progress *p, uint64_t bytes, uint64_t records)
{
	struct strbuf sb = STRBUF_INIT;
	double t;
	if (!p->enabled)
		return;
	t = now();
	if (t - p->start < FIRST_DRAW_S || (p->shown && t - p->last < REDRAW_S))
		return;
	p->last = t;
	strbuf_addch(&sb, '\r');
	mp_progress_format(&sb, p->label, bytes, p->total, records, t - p->start, p->width);
	strbuf_addstr(&sb, "\033[K");
	put(p->fd, sb.buf, sb.len);
	p->shown = true;
	strbuf_release(&sb);
}

void mp_progress_done(struct mp_progress *p)
{
	if (p->shown)
		put(p->fd, "\r\033[K", 4);
	p->shown = false;
}
