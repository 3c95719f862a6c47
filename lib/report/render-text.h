/*
 * Terminal formatting for the text reporters: human-readable sizes and
 * durations (binary units), colours that appear only on a terminal and never
 * with NO_COLOR, UTF-8 aware widths, and box-drawn tables.
 */
#ifndef MEMPROF_LIB_REPORT_RENDER_TEXT_H
#define MEMPROF_LIB_REPORT_RENDER_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/util/strbuf.h"

/* "0 B", "1023 B", "1.000 KiB", "1.500 MiB", ... "16.000 EiB": powers of 1024. */
void mp_format_size(struct strbuf *sb, uint64_t bytes);
/* "950 us", "20.102 ms", "1.234 s", "2 min 3.456 s", "1 h 2 min 3 s". */
void mp_format_duration(struct strbuf *sb, uint64_t us);
/* "12.34 %" of part in total ("0.00 %" when total is 0). */
void mp_format_percent(struct strbuf *sb, uint64_t part, uint64_t total);
/* "1,234,567": digits grouped by thousands. */
void mp_format_count(struct strbuf *sb, uint64_t n);

/* What the output terminal can do, and how reports fit it. */
struct mp_term {
	bool tty;       /* the output is a terminal */
	bool color;     /* use colours: a terminal, NO_COLOR unset, TERM not "dumb" */
	int width;      /* columns (80 when unknown) */
	int height;     /* lines (24 when unknown) */
	/*
	 * The columns a report's line may take: $COLUMNS when set, else the
	 * terminal's width, else MP_TERM_PIPE_LIMIT; 0: no limit.
	 */
	size_t limit;
	bool full_names; /* C++ names whole (--full-names); else template arguments elided */
};
#define MP_TERM_PIPE_LIMIT 160
/* Inspect fd (and the environment) to fill t. */
void mp_term_detect(struct mp_term *t, int fd);

enum mp_color {
	MP_COLOR_RESET, MP_COLOR_BOLD, MP_COLOR_DIM, MP_COLOR_RED, MP_COLOR_GREEN,
	MP_COLOR_YELLOW, MP_COLOR_MAGENTA, MP_COLOR_CYAN, MP_COLOR_BRIGHT_GREEN,
};
/* The escape sequence of a colour, or "" when t does not use colours. */
const char *mp_color(const struct mp_term *t, enum mp_color c);
/*
 * The colour of a share of the total, as memray's reports use it: above
 * 60 % red, above 20 % yellow, above 5 % green, else bright green.
 */
enum mp_color mp_share_color(uint64_t part, uint64_t total);

/*
 * Decode the UTF-8 sequence at s: its length (1 to 4) with the code point in
 * *cp, or 0 when the bytes are not valid UTF-8 (overlong, surrogate, cut).
 */
size_t mp_utf8_decode(const unsigned char *s, size_t len, uint32_t *cp);
/*
 * Append text from a capture (untrusted) for a terminal: control characters
 * (C0, DEL, C1) and invalid UTF-8 bytes become \xNN, so no escape sequence
 * from a symbol name, path or thread name reaches the terminal.
 */
void mp_text_add_safe(struct strbuf *sb, const char *s, size_t len);
static inline void mp_text_addstr_safe(struct strbuf *sb, const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	mp_text_add_safe(sb, s, n);
}

/* Display width of UTF-8 text (one column per code point; escape sequences count 0). */
size_t mp_text_width(const char *s, size_t len);
/*
 * Append s, cut to at most width columns with a final "…" when it is
 * longer; width 0 means no limit.
 */
void mp_text_fit(struct strbuf *sb, const char *s, size_t width);
/* Append n spaces. */
void mp_text_pad(struct strbuf *sb, size_t n);
/*
 * Cut what sb holds from byte start on (a line, colours included) to at
 * most width columns, with a final "…" and, when t uses colours, a reset;
 * width 0 means no limit.
 */
void mp_text_cut(struct strbuf *sb, size_t start, size_t width, const struct mp_term *t);

/* Box-drawing pieces for trees. */
#define MP_TREE_BRANCH "\u251c\u2500\u2500 " /* "├── " */
#define MP_TREE_LAST "\u2514\u2500\u2500 "   /* "└── " */
#define MP_TREE_PIPE "\u2502   "             /* "│   " */
#define MP_TREE_SPACE "    "

/*
 * A table drawn with box characters (memray's heavy-head style). A cell is
 * up to three segments of text, each with its own colour; widths come from
 * the content, and the column marked `flex` is cut (with "…") so the table
 * fits max_width.
 */
enum mp_align { MP_ALIGN_LEFT, MP_ALIGN_RIGHT };

#define MP_TABLE_MAX_SEGS 3

struct mp_table_cell {
	char *text;
	size_t nseg;
	size_t seg_end[MP_TABLE_MAX_SEGS];          /* byte offsets in text */
	enum mp_color seg_color[MP_TABLE_MAX_SEGS]; /* MP_COLOR_RESET: none */
};

struct mp_table {
	size_t ncols;
	const char *const *headers;
	const enum mp_align *align;
	size_t flex;            /* the column that shrinks; ncols for none */
	struct mp_table_cell *cells; /* nrows * ncols */
	size_t nrows, alloc;
};

void mp_table_init(struct mp_table *t, size_t ncols, const char *const *headers,
		   const enum mp_align *align, size_t flex);
void mp_table_release(struct mp_table *t);
/* Start a new row; its cells are empty until set. */
void mp_table_row(struct mp_table *t);
/* Set a cell of the last row to one segment (text is copied). */
void mp_table_cell(struct mp_table *t, size_t col, const char *text, enum mp_color color);
/* Set a cell of the last row to n segments (at most MP_TABLE_MAX_SEGS). */
void mp_table_cell_segs(struct mp_table *t, size_t col, size_t n, const char *const *texts,
			const enum mp_color *colors);
/* Render to sb; max_width 0 means no limit (nothing is cut). */
void mp_table_render(const struct mp_table *t, const struct mp_term *term, size_t max_width,
		     struct strbuf *sb);

#endif
