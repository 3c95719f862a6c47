/* memprof run: run a program with every allocation tracked into a capture file. */
#include <config.h>
#include <stdio.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/options.h"
#include "lib/live/model.h"
#include "lib/live/tui.h"
#include "lib/process/collect.h"
#include "lib/util/paths.h"
#include "lib/process/target.h"
#include "lib/transport/merge.h"
#include "lib/util/usage.h"
#include "lib/util/xalloc.h"

static const struct mp_cmd_spec spec = {
	.name = "run",
	.synopsis = "[options] PROGRAM [ARGS...]",
	.summary = "Run PROGRAM with every allocation tracked, with its call stack, into a capture.",
	.flags = MP_CMD_STOP_AT_NONOPT,
	.min_args = 1,
	.max_args = -1,
};

struct run_opts {
	struct mp_track_opts t;
	bool paused, live, python_allocators;
	/* --reporter: its argv, the name first, the capture to be appended. */
	const struct mp_reporter *reporter;
	char **rargv;
	int rargc;
};

static const int forwarded[] = { SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGALRM };

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

/*
 * A signal sent to memprof by a process goes on to the program, as if memprof
 * were the program. But a kill of the whole process group, or of every
 * process of a service, gives the program its own copy, and nothing tells the
 * two apart. So: terminal signals (SIGINT, SIGQUIT from the kernel) are never
 * passed on; a signal the program has pending is not; a signal the program
 * catches is not either (a second copy could make a graceful shutdown a
 * forced one), with a note saying so; any other (default or ignored action)
 * is passed on, which is harmless even if it arrived twice.
 */
static void forward_signal(pid_t pid, const struct signalfd_siginfo *si, const char *prog)
{
	int sig = (int)si->ssi_signo;
	bool pending, caught;
	if (si->ssi_code != SI_USER && si->ssi_code != SI_QUEUE && si->ssi_code != SI_TKILL)
		return;
	signal_state(pid, sig, &pending, &caught);
	if (pending)
		return;
	if (caught) {
		warning("%s not passed on to '%s' (pid %d), which handles it itself and may have had "
			"it already; send it there if it was meant for the program",
			strsignal(sig), prog, (int)pid);
		return;
	}
	kill(pid, sig);
}

/*
 * --live: the view holds the terminal, so what of the program's standard
 * streams is that terminal goes elsewhere: output and errors to a file
 * (memprof-<prog>.<pid>.out, named when the program ends), input from
 * /dev/null. Streams that are not the terminal stay the program's.
 */
struct live {
	bool on, out, err, in;
	char *log;                    /* the output's file, when out or err */
	struct mp_live model;
	struct mp_collect_observer obs;
	struct mp_live_tui *tui;      /* the view, while it is shown */
};

static char *live_log_path(const char *prog, pid_t pid)
{
	const char *base = strrchr(prog, '/');
	return xasprintf("memprof-%s.%d.out", base ? base + 1 : prog, (int)pid);
}

/* In the child: the program's streams as struct live says. 0, or an errno. */
static int live_stdio(const struct live *lv, const char *prog)
{
	int fd;
	if (lv->out || lv->err) {
		char *path = live_log_path(prog, getpid());
		fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
		free(path);
		if (fd < 0 || (lv->out && dup2(fd, STDOUT_FILENO) < 0) ||
		    (lv->err && dup2(fd, STDERR_FILENO) < 0))
			return errno;
		close(fd);
	}
	if (lv->in) {
		fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (fd < 0 || dup2(fd, STDIN_FILENO) < 0)
			return errno;
		close(fd);
	}
	return 0;
}

/* The view is closed (the user quit, or the program is being signalled): the terminal is back. */
static void live_close_view(struct live *lv, const char *prog, pid_t pid, bool exited, bool quiet)
{
	if (!lv->tui)
		return;
	mp_live_tui_close(lv->tui);
	lv->tui = NULL;
	if (!exited && !quiet)
		fprintf(stderr, "memprof: '%s' (pid %d) runs on; memprof ends when it does%s%s%s\n",
			prog, (int)pid, lv->log ? " (its output goes to '" : "",
			lv->log ? lv->log : "", lv->log ? "')" : "");
}

/* The program ended: where its output is (an empty file is removed). */
static void live_finish(struct live *lv, const char *prog, bool quiet)
{
	struct stat st;
	if (!lv->log)
		return;
	if (stat(lv->log, &st) == 0 && st.st_size == 0)
		unlink(lv->log);
	else if (!quiet)
		fprintf(stderr, "memprof: the output of '%s' is in '%s'\n", prog, lv->log);
}

/* The child: restore what memprof changed, wait for the go, run the program. */
static void child_exec(const struct mp_target *t, const sigset_t *orig_mask, int go_fd, int err_fd,
		       const struct live *lv, const char *prog)
{
	char go;
	ssize_t n;
	int err;
	signal(SIGPIPE, mp_saved_sigpipe_handler());
	sigprocmask(SIG_SETMASK, orig_mask, NULL);
	do
		n = read(go_fd, &go, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		_exit(127); /* memprof gave up before the start */
	if (lv->on && (err = live_stdio(lv, prog)) != 0) {
		/* Told apart from exec's errors by its sign. */
		err = -err;
		if (write(err_fd, &err, sizeof(err)) < 0)
			_exit(126);
		_exit(126);
	}
	mp_close_missing_stdio();
	execv(t->path, t->argv);
	err = errno;
	if (write(err_fd, &err, sizeof(err)) < 0)
		_exit(127);
	_exit(err == ENOENT ? 127 : 126);
}

static char *default_output(const char *prog, pid_t pid)
{
	const char *base = strrchr(prog, '/');
	return xasprintf("memprof-%s.%d.bin", base ? base + 1 : prog, (int)pid);
}

static void set_env(const struct run_opts *o, const char *sock)
{
	char *tracker = mp_tracker_path(), *pre;
	const char *old = getenv("LD_PRELOAD");
	struct stat st;
	char num[32];
	if (stat(tracker, &st) < 0)
		die("cannot find the tracker library '%s' (set MEMPROF_LIBDIR to its directory)",
		    tracker);
	/* Ours first, so the user's own preloaded allocator stays next in line. */
	pre = old && *old ? xasprintf("%s:%s", tracker, old) : xstrdup(tracker);
	setenv("LD_PRELOAD", pre, 1);
	setenv("MEMPROF_SOCKET", sock, 1);
	unsetenv("MEMPROF_OUTPUT");
	snprintf(num, sizeof(num), "%u", o->t.interval_ms);
	setenv("MEMPROF_INTERVAL_MS", num, 1);
	snprintf(num, sizeof(num), "%u", o->t.max_depth);
	setenv("MEMPROF_MAX_DEPTH", num, 1);
	if (o->t.follow_fork)
		setenv("MEMPROF_FOLLOW_FORK", "1", 1);
	else
		unsetenv("MEMPROF_FOLLOW_FORK");
	if (o->paused)
		setenv("MEMPROF_PAUSED", "1", 1);
	else
		unsetenv("MEMPROF_PAUSED");
	if (!o->t.python_frames)
		setenv("MEMPROF_PYTHON_FRAMES", "0", 1);
	else
		unsetenv("MEMPROF_PYTHON_FRAMES");
	/* The interpreter's small-object allocator off: each object is a malloc of its own. */
	if (o->python_allocators)
		setenv("PYTHONMALLOC", "malloc", 1);
	/* Records keyed by the time-stamp counter need a barrier only the collector can ask for. */
	if (!mp_merge_can_fence())
		setenv("MEMPROF_CLOCK", "counter", 1);
	free(pre);
	free(tracker);
}

/* A private directory with the socket the tracked processes connect to. */
static int make_socket(char *dir, size_t dirlen, char *path, size_t pathlen)
{
	const char *tmp = getenv("TMPDIR");
	struct strbuf err = STRBUF_INIT;
	int fd;
	if (!tmp || !*tmp || strlen(tmp) > 60)
		tmp = "/tmp";
	fd = mp_collector_socket(tmp, "memprof", getuid(), getgid(), dir, dirlen, path, pathlen,
				 &err);
	if (fd < 0)
		die("%s", err.buf);
	strbuf_release(&err);
	return fd;
}

/* Messages about the captures; returns whether the main one was written. */
static bool report(const struct run_opts *o, struct mp_collector *c, const char *prog)
{
	const struct mp_capture_info *infos;
	bool written;
	size_t n = mp_track_finish(&o->t, c, &infos, &written);
	char *hint;
	if (o->t.quiet)
		return written;
	hint = mp_collector_symbols_hint(c);
	/* One line however many modules: it is normal, and worth knowing. */
	if (hint)
		fprintf(stderr, "memprof: note: %s\n", hint);
	free(hint);
	for (size_t i = 0; i < n; i++) {
		const struct mp_capture_info *ci = &infos[i];
		if (ci->failed)
			continue;
		char what[64] = " (a child process)";
		if (ci->main || ci->capture == 1)
			what[0] = '\0';
		else if (ci->capture)
			snprintf(what, sizeof(what), " (capture %u, from 'memprof ctl start')", ci->capture);
		fprintf(stderr, "memprof: wrote '%s'%s: %llu allocations, %llu frees, %llu stacks, %llu bytes on disk\n",
			ci->path, what, (unsigned long long)ci->allocs,
			(unsigned long long)ci->frees, (unsigned long long)ci->traces,
			(unsigned long long)ci->file_bytes);
		if (ci->lost)
			fprintf(stderr, "memprof: warning: '%s' misses %llu allocations and frees the tracker "
					"could not record (made in signal handlers that interrupted it); "
					"'memprof stats' counts them\n", ci->path, (unsigned long long)ci->lost);
		if (ci->exec_replaced)
			fprintf(stderr, "memprof: note: '%s' replaced itself with another program (exec), "
					"which was not tracked%s\n", prog,
				o->t.follow_fork ? "" : "; --follow-fork tracks it");
	}
	for (size_t i = 0; i < n; i++)
		if (infos[i].main && !infos[i].failed && !o->reporter)
			fprintf(stderr, "memprof: next: memprof flamegraph %s\n", infos[i].path);
	return written;
}

/*
 * --reporter: the report of the capture, as `memprof <reporter> ARG...
 * capture` would write it. The program's exit status stays, unless it was
 * 0 and the report failed: then 1.
 */
static int run_reporter(struct run_opts *o, bool written, const char *capture, int status)
{
	int rs = MP_EXIT_FAILURE;
	if (!written) {
		error("no %s report: the capture '%s' was not written", o->reporter->name, capture);
	} else {
		o->rargv[o->rargc + 1] = (char *)capture;
		o->rargv[o->rargc + 2] = NULL;
		rs = o->reporter->run(o->rargc + 2, o->rargv, o->t.quiet ? NULL : stderr);
	}
	if (rs != MP_EXIT_OK && WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return W_EXITCODE(MP_EXIT_FAILURE, 0);
	return status;
}

/* End as the program did: its exit status, or its death by the same signal. */
static int transparent_exit(int status)
{
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);
		struct rlimit no_core = { 0, 0 };
		sigset_t set;
		/* The program dumped its core already; memprof must not add one. */
		setrlimit(RLIMIT_CORE, &no_core);
		fflush(stdout);
		fflush(stderr);
		signal(sig, SIG_DFL);
		sigemptyset(&set);
		sigaddset(&set, sig);
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		raise(sig);
		return 128 + sig;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

/* --live: the view, once the program runs; without a terminal it carries on without. */
static void live_open_view(struct live *lv)
{
	struct strbuf err = STRBUF_INIT;
	lv->tui = mp_live_tui_open(&lv->model, &err);
	if (!lv->tui)
		warning("no live view: %s", err.buf);
	strbuf_release(&err);
}

/* --live: the file for the program's output, created before it runs. 0, or -1 with errno. */
static int live_create_log(struct live *lv, const char *prog, pid_t pid, bool force)
{
	int fd;
	if (!lv->out && !lv->err)
		return 0;
	lv->log = live_log_path(prog, pid);
	fd = open(lv->log, O_WRONLY | O_CREAT | O_CLOEXEC | (force ? O_TRUNC : O_EXCL), 0644);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static int run(struct run_opts *o, int argc, char **argv)
{
	struct mp_target t;
	struct strbuf err = STRBUF_INIT;
	char dir[PATH_MAX], sock[PATH_MAX], *output = NULL;
	int listen_fd, sfd, go[2], errp[2], status = 0, code, out_fd = -1;
	sigset_t block, orig;
	pid_t pid;
	bool exited = false, written;
	struct mp_collector *c;
	struct live lv = { .on = o->live };

	if (mp_target_resolve(&t, argc, argv, &err, &code) < 0) {
		error("%s", err.buf);
		return code;
	}
	if (lv.on) {
		if (mp_live_tui_check(&err) < 0)
			die("%s", err.buf);
		lv.out = isatty(STDOUT_FILENO);
		lv.err = isatty(STDERR_FILENO);
		lv.in = isatty(STDIN_FILENO);
	}
	listen_fd = make_socket(dir, sizeof(dir), sock, sizeof(sock));
	mp_remove_on_die(dir);
	mp_remove_on_die(sock);
	set_env(o, sock);

	sigemptyset(&block);
	sigaddset(&block, SIGCHLD);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGQUIT);
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(forwarded[0]); i++)
		sigaddset(&block, forwarded[i]);
	if (lv.on)
		sigaddset(&block, SIGWINCH);
	sigprocmask(SIG_BLOCK, &block, &orig);
	sfd = signalfd(-1, &block, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0 || pipe2(go, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0)
		die_errno("cannot set up the child process");

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		die_errno("cannot fork");
	if (pid == 0) {
		/* Only the parent may hold the write end: its close must read as "give up". */
		close(listen_fd);
		close(go[1]);
		close(errp[0]);
		child_exec(&t, &orig, go[0], errp[1], &lv, argv[0]);
	}
	close(go[0]);
	close(errp[1]);

	/* The capture must be creatable before the program runs (--live writes one with -o only). */
	if (!lv.on || o->t.output) {
		output = o->t.output ? xstrdup(o->t.output) : default_output(argv[0], pid);
		out_fd = open(output, O_WRONLY | O_CREAT | O_CLOEXEC | (o->t.force ? O_TRUNC : O_EXCL),
			      0644);
	}
	if ((output && out_fd < 0) ||
	    (lv.on && live_create_log(&lv, argv[0], pid, o->t.force) < 0)) {
		int e = errno;
		const char *what = output && out_fd < 0 ? output : lv.log;
		close(go[1]);
		waitpid(pid, NULL, 0);
		if (out_fd >= 0) {
			close(out_fd);
			unlink(output);
		}
		unlink(sock);
		rmdir(dir);
		if (e == EEXIST)
			die("'%s' exists (use -f to overwrite it)", what);
		errno = e;
		die_errno("cannot create '%s'%s", what, what == lv.log ? " for the program's output" : "");
	}
	if (output)
		mp_remove_on_die(output); /* until the program runs */
	if (lv.on) {
		mp_live_init(&lv.model, pid);
		lv.obs = mp_live_observer(&lv.model);
	}
	c = mp_track_collector(&o->t, output, out_fd, pid, listen_fd, lv.on ? &lv.obs : NULL);
	if (!o->t.quiet && o->paused)
		fprintf(stderr, "memprof: '%s' runs as pid %d with tracking paused; 'memprof ctl %d "
				"start' starts a capture into '%s'\n", argv[0], (int)pid, (int)pid, output);
	else if (!o->t.quiet && output)
		fprintf(stderr, "memprof: tracking '%s' into '%s'\n", argv[0], output);

	if (write(go[1], "g", 1) != 1)
		die_errno("cannot start '%s'", argv[0]);
	close(go[1]);
	{
		int e;
		ssize_t n;
		do
			n = read(errp[0], &e, sizeof(e));
		while (n < 0 && errno == EINTR);
		close(errp[0]);
		if (n == (ssize_t)sizeof(e)) {
			waitpid(pid, NULL, 0);
			if (output)
				unlink(output);
			if (lv.log)
				unlink(lv.log);
			unlink(sock);
			rmdir(dir);
			if (e < 0) {
				errno = -e;
				error_errno("cannot give '%s' its output file or input", argv[0]);
				return 126;
			}
			errno = e;
			error_errno("cannot execute '%s'", argv[0]);
			return e == ENOENT ? 127 : 126;
		}
	}
	mp_keep_on_die();
	if (lv.on)
		live_open_view(&lv);

	/*
	 * Collect until the program ended and every tracked process closed its
	 * stream; with the view, until the user leaves it too.
	 */
	for (;;) {
		struct pollfd fds[1024];
		size_t n = 0, first, ns;
		int timeout = -1, r;
		short input = 0;
		fds[n++] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		if (lv.tui)
			fds[n++] = (struct pollfd){ .fd = mp_live_tui_fd(lv.tui), .events = POLLIN };
		first = n;
		ns = mp_collector_pollfds(c, fds + n, sizeof(fds) / sizeof(fds[0]) - n);
		if (exited && mp_collector_open_streams(c) == 0 && !lv.tui) {
			/*
			 * A followed child connects before it lets go of its parent's
			 * connection: one may wait to be accepted (a daemon's, whose
			 * parent left at once).
			 */
			if (poll(fds + first, ns, 0) > 0) {
				mp_collector_service(c, fds + first, ns);
				if (mp_collector_open_streams(c))
					continue;
			}
			break;
		}
		if (exited && mp_collector_open_streams(c))
			timeout = 5000; /* a descendant holding the main stream open */
		if (lv.tui && (timeout < 0 || mp_live_tui_timeout(lv.tui) < timeout))
			timeout = mp_live_tui_timeout(lv.tui);
		r = poll(fds, n + ns, timeout);
		if (r == 0 && exited && mp_collector_open_streams(c) && !lv.tui) {
			/* Nothing for 5 s after the program ended: only followed children remain. */
			if (!o->t.follow_fork)
				break;
			continue;
		}
		if (fds[0].revents) {
			struct signalfd_siginfo si;
			while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
				int sig = (int)si.ssi_signo;
				if (sig == SIGCHLD) {
					int st;
					pid_t w;
					while ((w = waitpid(-1, &st, WNOHANG)) > 0)
						if (w == pid) {
							status = st;
							exited = true;
							mp_collector_main_exited(c, st);
							if (lv.on)
								mp_live_exited(&lv.model, st);
						}
				} else if (sig == SIGWINCH) {
					if (lv.tui)
						mp_live_tui_resized(lv.tui);
				} else {
					/* The terminal back before any message, and for what the signal does. */
					live_close_view(&lv, argv[0], pid, exited, o->t.quiet);
					if (!exited)
						forward_signal(pid, &si, argv[0]);
				}
			}
		}
		if (lv.tui && first > 1)
			input = fds[1].revents;
		mp_collector_service(c, fds + first, ns);
		if (lv.tui && !mp_live_tui_service(lv.tui, input))
			live_close_view(&lv, argv[0], pid, exited, o->t.quiet);
	}
	unlink(sock);
	rmdir(dir);
	if (lv.on) {
		live_finish(&lv, argv[0], o->t.quiet);
		free(lv.log);
	}
	if (!mp_collector_streams(c) && o->paused) {
		/* Nobody asked for a capture: the program ran as it would have without us. */
		close(out_fd);
		unlink(output);
		if (!o->t.quiet)
			fprintf(stderr, "memprof: '%s' ended with tracking still paused; no capture "
					"written\n", argv[0]);
		mp_collector_free(c);
		return transparent_exit(status);
	}
	if (!mp_collector_streams(c)) {
		if (output) {
			close(out_fd);
			unlink(output);
		}
		error("'%s' ran without being tracked: no tracker reached memprof (LD_PRELOAD was "
		      "ignored or replaced, or the tracker could not start)", argv[0]);
		mp_collector_free(c);
		if (lv.on)
			mp_live_release(&lv.model);
		return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? MP_EXIT_FAILURE
								       : transparent_exit(status);
	}
	written = report(o, c, argv[0]);
	mp_collector_free(c);
	/* A capture that could not be written (a full disk) fails a run that succeeded. */
	if (!written && output && !o->reporter && WIFEXITED(status) && WEXITSTATUS(status) == 0)
		status = W_EXITCODE(MP_EXIT_FAILURE, 0);
	/* The model is the collector's observer to the end. */
	if (lv.on)
		mp_live_release(&lv.model);
	if (o->reporter)
		status = run_reporter(o, written, output, status);
	free(output);
	mp_target_release(&t);
	strbuf_release(&err);
	return transparent_exit(status);
}

/* --reporter and its arguments: checked before the program starts, so a typo costs no run. */
static void check_reporter(struct run_opts *o, const char *name)
{
	static const struct mp_reporter *const reporters[] = { &mp_reporter_flamegraph,
							       &mp_reporter_table };
	struct strbuf err = STRBUF_INIT;
	const char *needs_events;
	int r;
	for (size_t i = 0; i < sizeof(reporters) / sizeof(reporters[0]); i++)
		if (!strcmp(name, reporters[i]->name))
			o->reporter = reporters[i];
	if (!o->reporter)
		mp_usage_error(&spec, "unknown reporter '%s' (flamegraph or table)", name);
	if (!o->rargv)
		o->rargv = xcalloc(3, sizeof(*o->rargv));
	o->rargv[0] = (char *)o->reporter->name;
	o->rargv[o->rargc + 1] = NULL;
	/* The default capture's name has the pid: its report's cannot be checked yet. */
	r = o->reporter->check(o->rargc + 1, o->rargv, o->t.output, &needs_events, &err);
	if (r < 0)
		mp_usage_error(&spec, "invalid --reporter-arg for '%s': %s", name, err.buf);
	if (r > 0)
		die("cannot write the %s report: %s (add --reporter-arg -f to overwrite it)", name,
		    err.buf);
	strbuf_release(&err);
	/* What an aggregated capture cannot answer, before the program runs rather than after. */
	if (o->t.aggregate && needs_events)
		mp_usage_error(&spec, "--reporter-arg --%s needs every event; an aggregated capture "
				      "(--aggregate) has totals per stack", needs_events);
}

/* --reporter-arg ARG: one more argument for the reporter, after its name. */
static int reporter_arg_option(const struct mp_opt *opt, const char *arg, struct strbuf *err)
{
	struct run_opts *o = opt->value;
	(void)err;
	o->rargv = xreallocarray(o->rargv, (size_t)o->rargc + 4, sizeof(*o->rargv));
	o->rargv[++o->rargc] = (char *)arg;
	return 0;
}

int cmd_run(int argc, char **argv)
{
	struct run_opts o = { .t = MP_TRACK_OPTS_INIT };
	const char *reporter_name = NULL;
	const struct mp_opt opts[] = {
		MP_TRACK_OUTPUT_OPTS(&o.t, "memprof-<prog>.<pid>.bin"),
		MP_TRACK_OPTS(&o.t, "track forked children and programs they run, each into "
				    "FILE.<pid>"),
		MP_OPT_BOOL(0, "trace-python-allocators", &o.python_allocators,
			    "run a Python program with PYTHONMALLOC=malloc: every object allocation "
			    "tracked on its own"),
		MP_OPT_BOOL(0, "paused", &o.paused,
			    "start with tracking off: 'memprof ctl PID start' starts a capture, stop "
			    "ends it"),
		MP_OPT_BOOL(0, "live", &o.live,
			    "show where the memory is while the program runs, in the terminal (a "
			    "capture only with -o)"),
		MP_OPT_STRING(0, "reporter", "NAME", &reporter_name,
			      "then write the report NAME (flamegraph or table) of the capture"),
		MP_OPT_CALLBACK(0, "reporter-arg", "ARG", &o, reporter_arg_option,
				"pass ARG to the reporter, as one argument (repeatable)"),
		MP_OPT_END,
	};
	int first = mp_parse_options(&spec, opts, argc, argv);

	if (o.rargc && !reporter_name)
		mp_usage_error(&spec, "option '--reporter-arg' needs --reporter");
	if (o.live && o.paused)
		mp_usage_error(&spec, "options '--live' and '--paused' do not go together (a paused "
				      "program has nothing to show)");
	if (o.live && reporter_name && !o.t.output)
		mp_usage_error(&spec, "option '--reporter' with '--live' needs -o FILE (--live writes "
				      "no capture without it)");
	if (reporter_name)
		check_reporter(&o, reporter_name);
	return run(&o, argc - first, argv + first);
}
