/*
 * The live view of a program memprof run starts (memprof run --live,
 * runview.c): the view holds the terminal, so what of the program's
 * standard streams is that terminal goes elsewhere: output and errors to a
 * file (memprof-<prog>.<pid>.out, named when the program ends), input from
 * /dev/null; streams that are not the terminal stay the program's. The
 * model is the session's observer; the terminal is one of its hooks
 * (lib/process/track.h).
 */
#ifndef MEMPROF_LIB_LIVE_RUNVIEW_H
#define MEMPROF_LIB_LIVE_RUNVIEW_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "lib/live/model.h"
#include "lib/process/track.h"
#include "lib/util/strbuf.h"

struct mp_live_tui;

struct mp_live_run {
	const char *prog;             /* what the user called the program */
	FILE *msgs;                   /* where its lines go (NULL: nowhere) */
	bool out, err, in;            /* which of the program's streams are the terminal */
	char *log;                    /* the output's file, when out or err */
	pid_t pid;
	bool exited;
	struct mp_live model;
	struct mp_collect_observer obs;
	struct mp_live_tui *tui;      /* the view, while it is shown */
};

/* Check the terminal (-1 with err when the view cannot be shown) and see which streams it is. */
int mp_live_run_init(struct mp_live_run *v, const char *prog, FILE *msgs, struct strbuf *err);
/*
 * Before the program pid runs: the file for its output, if any (force:
 * over one that exists); the model, the session's observer. -1 with err.
 */
int mp_live_run_prepare(struct mp_live_run *v, pid_t pid, bool force, struct strbuf *err);
const struct mp_collect_observer *mp_live_run_observer(struct mp_live_run *v);
/* In the program's child, before it runs: its streams as the view needs them. 0, or an errno. */
int mp_live_run_child(const struct mp_live_run *v);
/* Show the view, once the program runs: -1 with err when it cannot (the run goes on without). */
int mp_live_run_open(struct mp_live_run *v, struct strbuf *err);
/* The session's hooks for the view: the terminal, its signals, the program's end. */
struct mp_track_hooks mp_live_run_hooks(struct mp_live_run *v);
/* The program ended: where its output is (an empty file is removed); the model freed. */
void mp_live_run_finish(struct mp_live_run *v);

#endif
