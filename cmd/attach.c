/* memprof attach: start tracking inside a running process, until detach, Ctrl-C or --duration. */
#include <config.h>
#include <stdio.h>

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/cmd.h"
#include "cmd/options.h"
#include "lib/process/attachctl.h"
#include "lib/process/inject.h"
#include "lib/process/track.h"
#include "lib/util/usage.h"

static const struct mp_cmd_spec spec = {
	.name = "attach",
	.synopsis = "[options] PID",
	.summary = "Start tracking every allocation inside the running process PID, until "
		   "'memprof detach PID', Ctrl-C, --duration or its exit.",
	.min_args = 1,
	.max_args = 1,
};

struct attach_opts {
	struct mp_track_opts t;
	double duration;
	enum mp_inject_method method;
};

static const char *start_error(long r)
{
	switch (-r) {
	case EALREADY:
		return "it is already tracked (by 'memprof run', a preloaded tracker, or an attach)";
	case ECONNREFUSED:
		return "its tracker could not connect back to memprof";
	case EBUSY:
		return "its previous tracking is still stopping; try again";
	case ENOMEM:
		return "its tracker could not allocate its buffers";
	case ENAMETOOLONG:
		return "the socket path is too long";
	}
	return strerror((int)-r);
}

/* Ctrl-C and the usual stop signals detach; they never reach the target. */
static const int taken[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

static void say(void *ctx, const char *line)
{
	(void)ctx;
	fprintf(stderr, "memprof: %s\n", line);
}

/* The tracker in process pid, streaming to the session: -1 (err) when it could not be. */
static int inject(const struct attach_opts *o, struct mp_track *t, pid_t pid, struct strbuf *err)
{
	struct mp_inject_opts io = { 0 };
	struct strbuf arg = STRBUF_INIT;
	struct mp_config cfg;
	long result = 0;
	int r;
	io.library = mp_track_tracker(err);
	if (!io.library)
		return -1;
	mp_track_settings(&o->t, mp_track_socket(t), false, &cfg);
	mp_track_attach_arg(&cfg, &arg);
	io.pid = pid;
	io.entry = "memprof_attach";
	io.arg = arg.buf;
	io.method = o->method;
	r = mp_inject(&io, &result, err);
	if (r == 0 && result != 0) {
		strbuf_addf(err, "cannot track process %d: %s", (int)pid, start_error(result));
		r = -1;
	}
	free((char *)io.library);
	strbuf_release(&arg);
	return r < 0 ? -1 : 0;
}

static int attach(const struct attach_opts *o, pid_t pid)
{
	struct strbuf err = STRBUF_INIT, lines = STRBUF_INIT;
	struct mp_track_hooks hooks = { .say = say };
	struct mp_target_info ti = { 0 };
	struct mp_track_result r;
	struct mp_track *t = mp_track_new(&o->t, &err);
	struct timespec t0, t1;
	int status = MP_EXIT_FAILURE;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!t)
		die("%s", err.buf);
	mp_track_set_hooks(t, &hooks);
	/* First: a detach sent now waits for this session rather than finding nobody. */
	if (mp_track_control(t, pid, &err) < 0 || mp_inject_check(pid, &err) < 0 ||
	    mp_target_info(pid, &ti, &err) < 0)
		goto fail;
	if (!ti.same_root) {
		strbuf_addf(&err, "process %d runs in another root directory (a container): run memprof "
			    "attach inside it, where the tracker library is visible", (int)pid);
		goto fail;
	}
	/* The socket in /tmp, which the target sees too (TMPDIR is ours, not its). */
	if (mp_track_signals(t, taken, sizeof(taken) / sizeof(taken[0]), &err) < 0 ||
	    mp_track_capture(t, ti.exe, pid, &err) < 0 ||
	    mp_track_listen(t, "/tmp", "memprof-attach", ti.uid, ti.gid, &err) < 0 ||
	    /* Ready before the tracker is: it connects as soon as it runs. */
	    mp_track_collect(t, pid, NULL, &err) < 0 || inject(o, t, pid, &err) < 0)
		goto fail;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (!o->t.quiet)
		fprintf(stderr, "memprof: tracking process %d ('%s') into '%s' after %ld ms; stop with "
				"Ctrl-C or 'memprof detach %d'\n", (int)pid, ti.exe, mp_track_output(t),
			(t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000, (int)pid);
	if (o->duration > 0)
		mp_track_set_duration(t, (unsigned)(o->duration * 1000));
	/* The tracker connects before the injection returns. */
	mp_track_expect_stream(t, 5000);
	mp_track_run(t);
	mp_track_finish(t, &r);
	if (r.never_connected)
		error("process %d's tracker never connected", (int)pid);
	if (r.unconfirmed)
		warning("process %d did not confirm the detach within 10 s; finished the capture",
			(int)pid);
	mp_track_messages(t, &r, ti.exe, MP_TRACK_SINCE_ATTACH | (o->t.quiet ? MP_TRACK_QUIET : 0),
			  "memprof: ", &lines);
	fputs(lines.buf, stderr);
	status = r.written ? MP_EXIT_OK : MP_EXIT_FAILURE;
	goto out;
fail:
	error("%s", err.buf);
out:
	mp_track_free(t);
	mp_target_info_release(&ti);
	strbuf_release(&err);
	strbuf_release(&lines);
	return status;
}

/* --duration SECONDS, into the double at opt->value. */
static int duration_option(const struct mp_opt *opt, const char *arg, struct strbuf *err)
{
	double *duration = opt->value;
	char *end;
	errno = 0;
	*duration = strtod(arg, &end);
	if (errno || *end || end == arg || !(*duration > 0) || *duration > 1e7) {
		strbuf_addf(err, "invalid value '%s' for --duration: expected a positive number of "
				 "seconds", arg);
		return -1;
	}
	return 0;
}

/* --method ptrace|gdb, into the enum mp_inject_method at opt->value. */
static int method_option(const struct mp_opt *opt, const char *arg, struct strbuf *err)
{
	enum mp_inject_method *method = opt->value;
	if (!strcmp(arg, "ptrace")) {
		*method = MP_INJECT_PTRACE;
	} else if (!strcmp(arg, "gdb")) {
		*method = MP_INJECT_GDB;
	} else {
		strbuf_addf(err, "invalid value '%s' for --method: expected ptrace or gdb", arg);
		return -1;
	}
	return 0;
}

int cmd_attach(int argc, char **argv)
{
	struct attach_opts o = { .t = MP_TRACK_OPTS_INIT, .method = MP_INJECT_PTRACE };
	const struct mp_opt opts[] = {
		MP_TRACK_OUTPUT_OPTS(&o.t, "memprof-<exe>.<pid>.bin"),
		MP_OPT_CALLBACK(0, "duration", "SECONDS", &o.duration, duration_option,
				"detach by itself after SECONDS"),
		MP_TRACK_OPTS(&o.t, "also track children the process forks, into FILE.<pid>"),
		MP_OPT_CALLBACK(0, "method", "ptrace|gdb", &o.method, method_option,
				"how to get into the process (default ptrace)"),
		MP_OPT_END,
	};
	int first = mp_parse_options(&spec, opts, argc, argv);
	return attach(&o, mp_operand_pid(&spec, argv[first]));
}
