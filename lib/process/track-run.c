/*
 * The program a session starts (memprof run): a child that waits for the
 * go before it executes the program, so that the capture can fail first;
 * its end; and the signals memprof passes on to it.
 */
#include <config.h>
#include "lib/process/track-private.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/process/target.h"

/* The child: the signal mask back, wait for the go, prepare, run the program. */
static void child_exec(struct mp_track *t, const struct mp_target *tg, int go, int errp,
		       int (*prepare)(void *ctx), void *ctx)
{
	char byte;
	ssize_t n;
	int err;
	sigprocmask(SIG_SETMASK, &t->old_mask, NULL);
	do
		n = read(go, &byte, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		_exit(127); /* memprof gave up before the start */
	if (prepare && (err = prepare(ctx)) != 0) {
		/* Told apart from exec's errors by its sign. */
		err = -err;
		if (write(errp, &err, sizeof(err)) < 0)
			_exit(126);
		_exit(126);
	}
	execv(tg->path, tg->argv);
	err = errno;
	if (write(errp, &err, sizeof(err)) < 0)
		_exit(127);
	_exit(err == ENOENT ? 127 : 126);
}

pid_t mp_track_spawn(struct mp_track *t, const struct mp_target *tg, const char *name,
		     int (*prepare)(void *ctx), void *ctx, struct strbuf *err)
{
	int go[2], errp[2];
	pid_t pid;
	if (pipe2(go, O_CLOEXEC) < 0)
		goto fail;
	if (pipe2(errp, O_CLOEXEC) < 0) {
		close(go[0]);
		close(go[1]);
		goto fail;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(go[0]);
		close(go[1]);
		close(errp[0]);
		close(errp[1]);
		strbuf_addf(err, "cannot fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		/* Only the parent may hold the write end: its close must read as "give up". */
		close(go[1]);
		close(errp[0]);
		if (t->listen_fd >= 0)
			close(t->listen_fd);
		child_exec(t, tg, go[0], errp[1], prepare, ctx);
	}
	close(go[0]);
	close(errp[1]);
	t->child = pid;
	t->name = name;
	t->go_fd = go[1];
	t->err_fd = errp[0];
	return pid;
fail:
	strbuf_addf(err, "cannot set up the child process: %s", strerror(errno));
	return -1;
}

int mp_track_go(struct mp_track *t, struct strbuf *err, int *status)
{
	ssize_t n;
	int e;
	if (write(t->go_fd, "g", 1) != 1) {
		strbuf_addf(err, "cannot start '%s': %s", t->name, strerror(errno));
		*status = 126;
		mp_track_abandon(t);
		return -1;
	}
	close(t->go_fd);
	t->go_fd = -1;
	do
		n = read(t->err_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(t->err_fd);
	t->err_fd = -1;
	if (n != (ssize_t)sizeof(e))
		return 0; /* (the pipe closed at exec) */
	waitpid(t->child, NULL, 0);
	t->child = 0;
	if (e < 0) {
		strbuf_addf(err, "cannot give '%s' its output file or input: %s", t->name, strerror(-e));
		*status = 126;
	} else {
		strbuf_addf(err, "cannot execute '%s': %s", t->name, strerror(e));
		*status = e == ENOENT ? 127 : 126;
	}
	return -1;
}

void mp_track_abandon(struct mp_track *t)
{
	if (t->go_fd < 0)
		return;
	close(t->go_fd);
	t->go_fd = -1;
	if (t->err_fd >= 0)
		close(t->err_fd);
	t->err_fd = -1;
	waitpid(t->child, NULL, 0);
	t->child = 0;
}

static void child_exited(struct mp_track *t, int st)
{
	t->status = st;
	t->exited = true;
	if (t->c)
		mp_collector_main_exited(t->c, st);
	if (t->h.exited)
		t->h.exited(t->h.ctx, st);
}

void mp_track_reap(struct mp_track *t)
{
	int st;
	pid_t w;
	/* (Collected by the collector, which had it stopped when it exited: lib/process/collect-wake.c.) */
	if (!t->exited && mp_collector_take_reaped(t->c, &st))
		child_exited(t, st);
	while ((w = waitpid(-1, &st, WNOHANG)) > 0) {
		if (w != t->child || t->exited)
			continue;
		child_exited(t, st);
	}
}

/* Whether pid has sig pending (SigPnd/ShdPnd) and whether it catches it (SigCgt). */
static void signal_state(pid_t pid, int sig, bool *pending, bool *caught)
{
	char path[64], line[256];
	FILE *f;
	*pending = *caught = false;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long mask;
		bool *flag = !strncmp(line, "SigPnd:", 7) || !strncmp(line, "ShdPnd:", 7) ? pending
			     : !strncmp(line, "SigCgt:", 7)                             ? caught
											  : NULL;
		if (flag && sscanf(line + 7, "%llx", &mask) == 1 && (mask >> (sig - 1)) & 1)
			*flag = true;
	}
	fclose(f);
}

int mp_track_forward(struct mp_track *t, const struct signalfd_siginfo *si, struct strbuf *why)
{
	int sig = (int)si->ssi_signo;
	bool pending, caught;
	if (t->child <= 0 || t->exited ||
	    (si->ssi_code != SI_USER && si->ssi_code != SI_QUEUE && si->ssi_code != SI_TKILL))
		return 0;
	signal_state(t->child, sig, &pending, &caught);
	if (pending)
		return 0;
	if (caught) {
		strbuf_addf(why, "%s not passed on to '%s' (pid %d), which handles it itself and may "
			    "have had it already; send it there if it was meant for the program",
			    strsignal(sig), t->name, (int)t->child);
		return 1;
	}
	kill(t->child, sig);
	return 0;
}
