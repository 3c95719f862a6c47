/*
 * The live view on the terminal (tui.c, ncurses): draws the screen of
 * lib/live/screen about once a second and at each key, and reads the keys.
 * The caller owns the event loop: it polls mp_live_tui_fd() with
 * mp_live_tui_timeout() next to its own descriptors, then calls
 * mp_live_tui_service(). Signals are the caller's (it passes them on to
 * mp_live_tui_resized(), which takes SIGWINCH); the terminal is in raw mode, so Ctrl-C and
 * Ctrl-Z are keys, which no process of the terminal gets as a signal.
 *
 * Keys: q, Esc or Ctrl-C quit; o, t, a, b sort by own, total, allocations,
 * blocks; Left/Right (or < and >) choose the thread; Up/Down, PgUp/PgDn,
 * Home/End scroll; space (or p) pauses the table; Ctrl-L redraws.
 */
#ifndef MEMPROF_LIB_LIVE_TUI_H
#define MEMPROF_LIB_LIVE_TUI_H

#include <stdbool.h>

#include "lib/live/model.h"
#include "lib/util/strbuf.h"

/* How often the view is refreshed, in milliseconds. */
#define MP_LIVE_REFRESH_MS 1000

struct mp_live_tui;

/*
 * Check that standard input and output are a terminal ncurses can drive;
 * -1 with a one-line reason in err when they are not. Touches nothing.
 */
int mp_live_tui_check(struct strbuf *err);
/*
 * Take over the terminal of standard input and output to show m; NULL with
 * a one-line reason in err when it cannot.
 */
struct mp_live_tui *mp_live_tui_open(struct mp_live *m, struct strbuf *err);
/* The descriptor to poll for keys (readable). */
int mp_live_tui_fd(const struct mp_live_tui *t);
/* Milliseconds until the next refresh (0: due now). */
int mp_live_tui_timeout(const struct mp_live_tui *t);
/*
 * After a poll: read the keys when mp_live_tui_fd() has input (revents is
 * what poll returned for it, 0 when it was not polled), and redraw when a
 * refresh is due, a key changed the view, or the model's state changed.
 * Returns false when the user asked to quit, or the terminal is gone.
 */
bool mp_live_tui_service(struct mp_live_tui *t, short revents);
/*
 * A signal came: when it is SIGWINCH (the terminal changed size), lay the
 * view t (if any) out again and return true.
 */
bool mp_live_tui_resized(struct mp_live_tui *t, int sig);
/* Show note in place of the line of keys (NULL: the keys again), at once. */
void mp_live_tui_note(struct mp_live_tui *t, const char *note);
/* Give the terminal back as it was, and free t (NULL is fine). */
void mp_live_tui_close(struct mp_live_tui *t);

#endif
