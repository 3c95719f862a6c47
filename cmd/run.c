/* memprof run: run a program with every allocation tracked into a capture file. */
#include <config.h>
#include <stdio.h>

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/options.h"
#include "lib/live/runview.h"
#include "lib/process/target.h"
#include "lib/process/track.h"
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
	bool paused, live, python_allocators, no_control;
	/* --reporter: its argv, the name first, the capture to be appended. */
	const struct mp_reporter *reporter;
	char **rargv;
	int rargc;
};

/* The signals memprof run takes: the program's end, the terminal's, and those it passes on. */
static const int taken[] = { SIGCHLD, SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGALRM,
			     SIGWINCH };

/* What the loop says, as memprof says it. */
static void say(void *ctx, const char *line)
{
	(void)ctx;
	fprintf(stderr, "memprof: %s\n", line);
}

/* The program's environment: our tracker first in line (before the user's own preloaded allocator). */
static int set_env(const struct run_opts *o, const char *sock, struct strbuf *err)
{
	char *tracker = mp_track_tracker(err), *pre;
	const char *old = getenv("LD_PRELOAD");
	struct mp_config cfg;
	if (!tracker)
		return -1;
	pre = old && *old ? xasprintf("%s:%s", tracker, old) : xstrdup(tracker);
	setenv("LD_PRELOAD", pre, 1);
	mp_track_settings(&o->t, sock, o->paused, &cfg);
	/* No socket, so no thread of the tracker's in the program: glibc's single-threaded paths stay. */
	if (o->no_control)
		cfg.control = 0;
	mp_track_setenv(&cfg);
	/* The interpreter's small-object allocator off: each object is a malloc of its own. */
	if (o->python_allocators)
		setenv("PYTHONMALLOC", "malloc", 1);
	free(pre);
	free(tracker);
	return 0;
}

/* In the child, before the program runs: what memprof changed for itself, undone. */
static int prepare_child(void *ctx)
{
	const struct mp_live_run *view = ctx;
	int err = 0;
	signal(SIGPIPE, mp_saved_sigpipe_handler());
	if (view)
		err = mp_live_run_child(view);
	mp_close_missing_stdio();
	return err;
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
		/* After --follow-fork: the report of the whole process tree. */
		char **argv = xcalloc((size_t)o->rargc + 4, sizeof(*argv));
		int argc = o->rargc + 1;
		memcpy(argv, o->rargv, (size_t)argc * sizeof(*argv));
		if (o->t.follow_fork)
			argv[argc++] = (char *)"--children";
		argv[argc++] = (char *)capture;
		rs = o->reporter->run(argc, argv, o->t.quiet ? NULL : stderr);
		free(argv);
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

/* The session up to the program's start: -1 (said) when it cannot run, *code its exit status. */
static int start(struct run_opts *o, struct mp_track *t, struct mp_live_run *view,
		 const struct mp_target *tg, const char *prog, int *code)
{
	struct strbuf err = STRBUF_INIT;
	const char *tmp = getenv("TMPDIR");
	pid_t pid;
	*code = MP_EXIT_FAILURE;
	/* A private directory with the socket the tracked processes connect to. */
	if (!tmp || !*tmp || strlen(tmp) > 60)
		tmp = "/tmp";
	if (mp_track_signals(t, taken, sizeof(taken) / sizeof(taken[0]) - !o->live, &err) < 0 ||
	    mp_track_listen(t, tmp, "memprof", getuid(), getgid(), &err) < 0 ||
	    set_env(o, mp_track_socket(t), &err) < 0 ||
	    (pid = mp_track_spawn(t, tg, prog, prepare_child, view, &err)) < 0 ||
	    /* The capture must be creatable before the program runs (--live writes one with -o only). */
	    ((!o->live || o->t.output) && mp_track_capture(t, prog, pid, &err) < 0) ||
	    (o->live && mp_live_run_prepare(view, pid, o->t.force, &err) < 0) ||
	    mp_track_collect(t, pid, o->live ? mp_live_run_observer(view) : NULL, &err) < 0)
		goto fail;
	if (!o->t.quiet && o->paused)
		fprintf(stderr, "memprof: '%s' runs as pid %d with tracking paused; 'memprof ctl %d "
				"start' starts a capture into '%s'\n", prog, (int)pid, (int)pid,
			mp_track_output(t));
	else if (!o->t.quiet && mp_track_output(t))
		fprintf(stderr, "memprof: tracking '%s' into '%s'\n", prog, mp_track_output(t));
	if (mp_track_go(t, &err, code) < 0)
		goto fail;
	strbuf_release(&err);
	return 0;
fail:
	error("%s", err.buf);
	strbuf_release(&err);
	return -1;
}

static int run(struct run_opts *o, int argc, char **argv)
{
	struct mp_target tg;
	struct strbuf err = STRBUF_INIT, lines = STRBUF_INIT;
	struct mp_track_hooks hooks = { .say = say };
	struct mp_track_result r;
	struct mp_live_run view;
	struct mp_track *t;
	char *output;
	int code, status;

	if (mp_target_resolve(&tg, argc, argv, &err, &code) < 0) {
		error("%s", err.buf);
		return code;
	}
	if (o->live) {
		if (mp_live_run_init(&view, argv[0], o->t.quiet ? NULL : stderr, &err) < 0)
			die("%s", err.buf);
		hooks = mp_live_run_hooks(&view);
	}
	t = mp_track_new(&o->t, &err);
	if (!t)
		die("%s", err.buf);
	mp_track_set_hooks(t, &hooks);
	if (start(o, t, o->live ? &view : NULL, &tg, argv[0], &code) < 0) {
		if (o->live)
			mp_live_run_finish(&view);
		mp_track_free(t);
		mp_target_release(&tg);
		return code;
	}
	if (o->live && mp_live_run_open(&view, &err) < 0)
		warning("no live view: %s", err.buf);
	/* Until the program ended and every tracked process closed its stream (and the view). */
	mp_track_run(t);
	output = mp_track_output(t) ? xstrdup(mp_track_output(t)) : NULL;
	mp_track_finish(t, &r);
	status = r.status;
	if (o->live)
		mp_live_run_finish(&view);
	if (!r.tracked && o->paused) {
		/* Nobody asked for a capture: the program ran as it would have without us. */
		if (!o->t.quiet)
			fprintf(stderr, "memprof: '%s' ended with tracking still paused; no capture "
					"written\n", argv[0]);
	} else if (!r.tracked) {
		error("'%s' ran without being tracked: no tracker reached memprof (LD_PRELOAD was "
		      "ignored or replaced, or the tracker could not start)", argv[0]);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
			status = W_EXITCODE(MP_EXIT_FAILURE, 0);
	} else {
		mp_track_messages(t, &r, argv[0], o->t.quiet ? MP_TRACK_QUIET : 0, "memprof: ", &lines);
		fputs(lines.buf, stderr);
		for (size_t i = 0; i < r.ninfos && !o->t.quiet && !o->reporter; i++)
			if (r.infos[i].main && !r.infos[i].failed)
				fprintf(stderr, "memprof: next: memprof flamegraph %s%s\n",
					o->t.follow_fork && r.ninfos > 1 ? "--children " : "",
					r.infos[i].path);
		/* A capture that could not be written (a full disk) fails a run that succeeded. */
		if (!r.written && output && !o->reporter && WIFEXITED(status) && WEXITSTATUS(status) == 0)
			status = W_EXITCODE(MP_EXIT_FAILURE, 0);
		if (o->reporter)
			status = run_reporter(o, r.written, output, status);
	}
	mp_track_free(t);
	free(output);
	mp_target_release(&tg);
	strbuf_release(&err);
	strbuf_release(&lines);
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
		MP_OPT_BOOL(0, "no-control", &o.no_control,
			    "no control socket: 'memprof ctl' cannot reach the program, and the "
			    "tracker runs no thread in it"),
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
	if (o.no_control && o.paused)
		mp_usage_error(&spec, "options '--no-control' and '--paused' do not go together "
				      "('memprof ctl PID start' is how a paused program starts tracking)");
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
