/*
 * The live view's screen as text (screen.c): the header lines (process,
 * state, heap, peak, RSS, thread), the table of rows and the line of keys,
 * laid out for a terminal of a given size. No terminal is touched here:
 * lib/live/tui draws these lines with ncurses, and the unit tests read them.
 */
#ifndef MEMPROF_LIB_LIVE_SCREEN_H
#define MEMPROF_LIB_LIVE_SCREEN_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/live/model.h"
#include "lib/util/strbuf.h"

/* What the view adds to the model: where the table is scrolled, and the like. */
struct mp_live_view {
	size_t top;             /* the first row shown */
	bool paused;            /* the table is not updated (the figures above it are) */
	bool utf8;              /* the terminal shows UTF-8 (else names are cut to ASCII) */
	const char *note;       /* a line from the driver ("stopping...") or NULL */
};

enum mp_live_style {
	MP_LIVE_PLAIN,
	MP_LIVE_BOLD,           /* the first header line */
	MP_LIVE_REVERSE,        /* the table's column headings and the line of keys */
};

struct mp_live_screen {
	int width, height;
	struct strbuf *text;    /* height lines, none wider than width columns */
	enum mp_live_style *style;
};

/* Header lines above the table, and the table's heading. */
#define MP_LIVE_HEADER_LINES 4
/* The table's rows on a screen of this height (the line of keys below it). */
size_t mp_live_table_height(int height);

void mp_live_screen_init(struct mp_live_screen *s);
void mp_live_screen_release(struct mp_live_screen *s);
/* Lay out the view of m at width x height into s. */
void mp_live_render(const struct mp_live *m, const struct mp_live_view *v, int width, int height,
		    struct mp_live_screen *s);

/* Sizes as the table shows them, in 8 columns at most: "512 B", "3.91 MiB", "123 GiB". */
void mp_live_format_size(struct strbuf *sb, uint64_t bytes);

#endif
