/* The live view on the terminal, with ncurses: drawing the screen, and the keys. */
#include <config.h>
#include "lib/live/tui.h"

#include <curses.h>
#include <langinfo.h>
#include <locale.h>
#include <poll.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <term.h>
#include <time.h>
#include <unistd.h>

#include "lib/live/screen.h"
#include "lib/util/xalloc.h"

struct mp_live_tui {
	struct mp_live *m;
	SCREEN *scr;
	struct mp_live_view view;
	struct mp_live_screen screen;
	long next_ms;           /* when the next refresh is due (monotonic ms) */
	bool dirty;             /* redraw at the next service */
	enum mp_live_state drawn_state;
	char *note;
};

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int mp_live_tui_check(struct strbuf *err)
{
	const char *term = getenv("TERM");
	int e = 0;
	if (!isatty(STDOUT_FILENO)) {
		strbuf_addstr(err, "the live view needs a terminal: standard output is not one");
		return -1;
	}
	if (!isatty(STDIN_FILENO)) {
		strbuf_addstr(err, "the live view needs a terminal: standard input is not one");
		return -1;
	}
	if (!term || !*term) {
		strbuf_addstr(err, "the live view needs a terminal: TERM is not set");
		return -1;
	}
	/* The terminal's description, as ncurses will look for it. */
	if (setupterm(NULL, STDOUT_FILENO, &e) != OK || e != 1) {
		strbuf_addf(err, "cannot drive the terminal '%s' (%s)", term,
			    e == 0 ? "it is not in the terminfo database, or is a hard-copy one"
				   : "no terminfo database");
		return -1;
	}
	del_curterm(cur_term);
	return 0;
}

struct mp_live_tui *mp_live_tui_open(struct mp_live *m, struct strbuf *err)
{
	struct mp_live_tui *t;
	const char *codeset;
	if (mp_live_tui_check(err) < 0)
		return NULL;
	t = xcalloc(1, sizeof(*t));
	t->m = m;
	/* Names are shown as the terminal's character set allows. */
	setlocale(LC_CTYPE, "");
	codeset = nl_langinfo(CODESET);
	t->view.utf8 = codeset && (!strcmp(codeset, "UTF-8") || !strcmp(codeset, "utf8"));
	fflush(stdout);
	t->scr = newterm(NULL, stdout, stdin);
	if (!t->scr) {
		strbuf_addf(err, "cannot drive the terminal '%s'", getenv("TERM"));
		free(t);
		return NULL;
	}
	set_term(t->scr);
	raw();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(50);
	curs_set(0);
	mp_live_screen_init(&t->screen);
	t->drawn_state = m->state;
	t->dirty = true;
	t->next_ms = 0;
	return t;
}

int mp_live_tui_fd(const struct mp_live_tui *t)
{
	(void)t;
	return STDIN_FILENO;
}

int mp_live_tui_timeout(const struct mp_live_tui *t)
{
	long left = t->next_ms - now_ms();
	if (t->dirty || t->m->state != t->drawn_state)
		return 0;
	return left < 0 ? 0 : left > MP_LIVE_REFRESH_MS ? MP_LIVE_REFRESH_MS : (int)left;
}

/* Keep the scroll position within the rows. */
static void clamp(struct mp_live_tui *t)
{
	size_t rows = mp_live_table_height(LINES), n = t->m->nrows;
	if (t->view.top + rows > n)
		t->view.top = n > rows ? n - rows : 0;
}

static void draw(struct mp_live_tui *t)
{
	mp_live_render(t->m, &t->view, COLS, LINES, &t->screen);
	erase();
	for (int y = 0; y < t->screen.height; y++) {
		const struct strbuf *l = &t->screen.text[y];
		int attr = t->screen.style[y] == MP_LIVE_BOLD	 ? A_BOLD
			   : t->screen.style[y] == MP_LIVE_REVERSE ? A_REVERSE
								     : A_NORMAL;
		attrset(attr);
		if (attr == A_REVERSE) {
			/* The bar spans the width. */
			move(y, 0);
			hline(' ', COLS);
		}
		mvaddnstr(y, 0, l->buf, (int)l->len);
	}
	attrset(A_NORMAL);
	refresh();
}

static void update(struct mp_live_tui *t)
{
	if (!t->view.paused)
		mp_live_update(t->m);
	clamp(t);
}

/* One key; false to quit. */
static bool key(struct mp_live_tui *t, int c)
{
	size_t page = mp_live_table_height(LINES);
	enum mp_live_sort by = t->m->sort;
	switch (c) {
	case 'q': case 'Q': case 3 /* Ctrl-C */: case 27 /* Esc */:
		return false;
	case 'o': by = MP_LIVE_BY_OWN; break;
	case 't': by = MP_LIVE_BY_TOTAL; break;
	case 'a': by = MP_LIVE_BY_ALLOCS; break;
	case 'b': by = MP_LIVE_BY_BLOCKS; break;
	case KEY_LEFT: case '<': case ',':
		mp_live_next_thread(t->m, -1);
		mp_live_update(t->m);
		t->view.top = 0;
		break;
	case KEY_RIGHT: case '>': case '.':
		mp_live_next_thread(t->m, 1);
		mp_live_update(t->m);
		t->view.top = 0;
		break;
	case KEY_UP: case 'k':
		if (t->view.top)
			t->view.top--;
		break;
	case KEY_DOWN: case 'j':
		t->view.top++;
		break;
	case KEY_PPAGE:
		t->view.top = t->view.top > page ? t->view.top - page : 0;
		break;
	case KEY_NPAGE:
		t->view.top += page;
		break;
	case KEY_HOME: case 'g':
		t->view.top = 0;
		break;
	case KEY_END: case 'G':
		t->view.top = t->m->nrows;
		break;
	case ' ': case 'p':
		t->view.paused = !t->view.paused;
		if (!t->view.paused)
			mp_live_update(t->m);
		break;
	case 12 /* Ctrl-L */:
		clearok(curscr, TRUE);
		break;
	case KEY_RESIZE:
		break;
	default:
		return true; /* nothing changes */
	}
	if (by != t->m->sort) {
		t->m->sort = by;
		mp_live_sort_rows(t->m);
		t->view.top = 0;
	}
	clamp(t);
	t->dirty = true;
	return true;
}

bool mp_live_tui_service(struct mp_live_tui *t, short revents)
{
	long now = now_ms();
	if (revents & POLLIN) {
		int c;
		while ((c = getch()) != ERR)
			if (!key(t, c))
				return false;
	}
	/* The terminal hung up (its window closed): nobody to show anything to. */
	if (revents & (POLLHUP | POLLERR | POLLNVAL))
		return false;
	if (now >= t->next_ms || t->m->state != t->drawn_state) {
		update(t);
		t->drawn_state = t->m->state;
		t->next_ms = now + MP_LIVE_REFRESH_MS;
		t->dirty = true;
	}
	if (t->dirty) {
		draw(t);
		t->dirty = false;
	}
	return true;
}

bool mp_live_tui_resized(struct mp_live_tui *t, int sig)
{
	struct winsize ws;
	if (sig != SIGWINCH)
		return false;
	if (!t)
		return true;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col)
		resizeterm(ws.ws_row, ws.ws_col);
	clamp(t);
	t->dirty = true;
	return true;
}

void mp_live_tui_note(struct mp_live_tui *t, const char *note)
{
	free(t->note);
	t->note = note ? xstrdup(note) : NULL;
	t->view.note = t->note;
	draw(t);
}

void mp_live_tui_close(struct mp_live_tui *t)
{
	if (!t)
		return;
	endwin();
	delscreen(t->scr);
	mp_live_screen_release(&t->screen);
	free(t->note);
	free(t);
}
