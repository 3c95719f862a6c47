/* memprof run --live: the view of the program the session started, and its standard streams. */
#include <config.h>
#include "lib/live/runview.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/live/tui.h"
#include "lib/util/xalloc.h"

int mp_live_run_init(struct mp_live_run *v, const char *prog, FILE *msgs, struct strbuf *err)
{
	memset(v, 0, sizeof(*v));
	v->prog = prog;
	v->msgs = msgs;
	if (mp_live_tui_check(err) < 0)
		return -1;
	v->out = isatty(STDOUT_FILENO);
	v->err = isatty(STDERR_FILENO);
	v->in = isatty(STDIN_FILENO);
	return 0;
}

static char *log_path(const char *prog, pid_t pid)
{
	const char *base = strrchr(prog, '/');
	return xasprintf("memprof-%s.%d.out", base ? base + 1 : prog, (int)pid);
}

int mp_live_run_prepare(struct mp_live_run *v, pid_t pid, bool force, struct strbuf *err)
{
	int fd;
	v->pid = pid;
	mp_live_init(&v->model, pid);
	v->obs = mp_live_observer(&v->model);
	if (!v->out && !v->err)
		return 0;
	v->log = log_path(v->prog, pid);
	fd = open(v->log, O_WRONLY | O_CREAT | O_CLOEXEC | (force ? O_TRUNC : O_EXCL), 0644);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (errno == EEXIST)
		strbuf_addf(err, "'%s' exists (use -f to overwrite it)", v->log);
	else
		strbuf_addf(err, "cannot create '%s' for the program's output: %s", v->log,
			    strerror(errno));
	free(v->log);
	v->log = NULL;
	return -1;
}

const struct mp_collect_observer *mp_live_run_observer(struct mp_live_run *v)
{
	return &v->obs;
}

int mp_live_run_child(const struct mp_live_run *v)
{
	int fd;
	if (v->out || v->err) {
		char *path = log_path(v->prog, getpid());
		fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
		free(path);
		if (fd < 0 || (v->out && dup2(fd, STDOUT_FILENO) < 0) ||
		    (v->err && dup2(fd, STDERR_FILENO) < 0))
			return errno;
		close(fd);
	}
	if (v->in) {
		fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (fd < 0 || dup2(fd, STDIN_FILENO) < 0)
			return errno;
		close(fd);
	}
	return 0;
}

int mp_live_run_open(struct mp_live_run *v, struct strbuf *err)
{
	v->tui = mp_live_tui_open(&v->model, err);
	return v->tui ? 0 : -1;
}

/* The view is closed (the user quit, or the program is being signalled): the terminal is back. */
static void close_view(struct mp_live_run *v)
{
	if (!v->tui)
		return;
	mp_live_tui_close(v->tui);
	v->tui = NULL;
	if (!v->exited && v->msgs)
		fprintf(v->msgs, "memprof: '%s' (pid %d) runs on; memprof ends when it does%s%s%s\n",
			v->prog, (int)v->pid, v->log ? " (its output goes to '" : "", v->log ? v->log : "",
			v->log ? "')" : "");
}

static void on_signal(void *ctx, const struct signalfd_siginfo *si)
{
	struct mp_live_run *v = ctx;
	if (mp_live_tui_resized(v->tui, (int)si->ssi_signo))
		return;
	/* The terminal back before any message, and for what the signal does. */
	close_view(v);
}

static void on_exited(void *ctx, int wait_status)
{
	struct mp_live_run *v = ctx;
	v->exited = true;
	mp_live_exited(&v->model, wait_status);
}

static int view_fd(void *ctx)
{
	struct mp_live_run *v = ctx;
	return v->tui ? mp_live_tui_fd(v->tui) : -1;
}

static int view_timeout(void *ctx)
{
	struct mp_live_run *v = ctx;
	return v->tui ? mp_live_tui_timeout(v->tui) : -1;
}

static void view_ready(void *ctx, short revents)
{
	struct mp_live_run *v = ctx;
	if (v->tui && !mp_live_tui_service(v->tui, revents))
		close_view(v);
}

static void say(void *ctx, const char *line)
{
	struct mp_live_run *v = ctx;
	close_view(v); /* (a line is for the terminal, which the view holds) */
	if (v->msgs)
		fprintf(v->msgs, "memprof: %s\n", line);
}

struct mp_track_hooks mp_live_run_hooks(struct mp_live_run *v)
{
	return (struct mp_track_hooks){ .ctx = v, .signal = on_signal, .exited = on_exited,
					 .fd = view_fd, .timeout = view_timeout, .ready = view_ready,
					 .say = say };
}

void mp_live_run_finish(struct mp_live_run *v)
{
	struct stat st;
	close_view(v);
	if (v->log) {
		if (stat(v->log, &st) == 0 && st.st_size == 0)
			unlink(v->log);
		else if (v->msgs)
			fprintf(v->msgs, "memprof: the output of '%s' is in '%s'\n", v->prog, v->log);
	}
	free(v->log);
	v->log = NULL;
	if (v->pid)
		mp_live_release(&v->model);
}
