/* memprof attach: start tracking inside a running process, until detach, Ctrl-C or --duration. */
#include <config.h>
#include <stdio.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/options.h"
#include "lib/process/attachctl.h"
#include "lib/process/collect.h"
#include "lib/process/inject.h"
#include "lib/transport/merge.h"
#include "lib/util/paths.h"
#include "lib/util/usage.h"
#include "lib/util/xalloc.h"

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

static long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

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

/* Messages about the captures; returns whether the process's own was written whole. */
static bool report(const struct attach_opts *o, struct mp_collector *c)
{
	const struct mp_capture_info *infos;
	bool written;
	size_t n = mp_track_finish(&o->t, c, &infos, &written);
	char *hint;
	if (o->t.quiet)
		return written;
	hint = mp_collector_symbols_hint(c);
	if (hint)
		fprintf(stderr, "memprof: note: %s\n", hint);
	free(hint);
	for (size_t i = 0; i < n; i++) {
		const struct mp_capture_info *ci = &infos[i];
		if (ci->failed)
			continue;
		fprintf(stderr, "memprof: wrote '%s'%s: %llu allocations and %llu frees since attach, "
				"%llu bytes on disk\n", ci->path,
			ci->main ? "" : " (a child process)", (unsigned long long)ci->allocs,
			(unsigned long long)ci->frees, (unsigned long long)ci->file_bytes);
	}
	return written;
}

static int attach(const struct attach_opts *o, pid_t pid)
{
	struct strbuf err = STRBUF_INIT, config = STRBUF_INIT;
	struct mp_target_info ti;
	struct mp_inject_opts io = { 0 };
	struct mp_collector *c;
	char dir[PATH_MAX], sock[PATH_MAX], *output, *tracker;
	int ctl, lfd, out_fd, sfd, reply_fd = -1;
	long result, started = now_ms(), deadline = 0, detach_deadline = 0;
	bool detaching = false, written;
	sigset_t block;

	if (mp_inject_check(pid, &err) < 0)
		die("%s", err.buf);
	if (mp_target_info(pid, &ti, &err) < 0)
		die("%s", err.buf);
	if (!ti.same_root)
		die("process %d runs in another root directory (a container): run memprof attach "
		    "inside it, where the tracker library is visible", (int)pid);
	ctl = mp_attachctl_listen(pid, &err);
	if (ctl < 0)
		die("%s", err.buf);
	if (o->t.output) {
		output = xstrdup(o->t.output);
	} else {
		const char *base = strrchr(ti.exe, '/');
		output = xasprintf("memprof-%s.%d.bin", base ? base + 1 : ti.exe, (int)pid);
	}
	out_fd = open(output, O_WRONLY | O_CREAT | O_CLOEXEC | (o->t.force ? O_TRUNC : O_EXCL), 0644);
	if (out_fd < 0) {
		if (errno == EEXIST)
			die("'%s' exists (use -f to overwrite it)", output);
		die_errno("cannot create '%s'", output);
	}
	mp_remove_on_die(output); /* until the tracker runs in the process */
	/* In /tmp, which the target sees too (TMPDIR is ours, not its). */
	lfd = mp_collector_socket("/tmp", "memprof-attach", ti.uid, ti.gid, dir, sizeof(dir), sock,
				  sizeof(sock), &err);
	if (lfd < 0)
		die("%s", err.buf);
	mp_remove_on_die(dir);
	mp_remove_on_die(sock);
	/* Ready before the tracker is: it connects as soon as it runs. */
	c = mp_track_collector(&o->t, output, out_fd, pid, lfd, NULL);

	/* Ctrl-C and the usual stop signals detach; they never reach the target. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigaddset(&block, SIGQUIT);
	sigprocmask(SIG_BLOCK, &block, NULL);
	sfd = signalfd(-1, &block, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0)
		die_errno("cannot set up signal handling");

	tracker = mp_tracker_path();
	if (access(tracker, R_OK) < 0)
		die("cannot find the tracker library '%s' (set MEMPROF_LIBDIR to its directory)", tracker);
	strbuf_addf(&config, "socket=%s\ninterval=%u\ndepth=%u\nfollow=%d\n", sock, o->t.interval_ms,
		    o->t.max_depth, o->t.follow_fork);
	if (getenv("MEMPROF_UNWIND"))
		strbuf_addf(&config, "unwind=%s\n", getenv("MEMPROF_UNWIND"));
	/* As for memprof run: the time-stamp clock only where we can make the barrier it needs. */
	if (!mp_merge_can_fence())
		strbuf_addstr(&config, "clock=counter\n");
	else if (getenv("MEMPROF_CLOCK"))
		strbuf_addf(&config, "clock=%s\n", getenv("MEMPROF_CLOCK"));
	if (getenv("MEMPROF_RING_KB"))
		strbuf_addf(&config, "ring_kb=%s\n", getenv("MEMPROF_RING_KB"));
	if (!o->t.python_frames)
		strbuf_addstr(&config, "python=0\n");
	io.pid = pid;
	io.library = tracker;
	io.entry = "memprof_attach";
	io.arg = config.buf;
	io.method = o->method;
	if (mp_inject(&io, &result, &err) < 0 || result != 0) {
		close(out_fd);
		unlink(output);
		unlink(sock);
		rmdir(dir);
		if (err.len)
			die("%s", err.buf);
		die("cannot track process %d: %s", (int)pid, start_error(result));
	}

	mp_keep_on_die();
	if (!o->t.quiet)
		fprintf(stderr, "memprof: tracking process %d ('%s') into '%s' after %ld ms; stop with "
				"Ctrl-C or 'memprof detach %d'\n", (int)pid, ti.exe, output,
			now_ms() - started, (int)pid);
	if (o->duration > 0)
		deadline = now_ms() + (long)(o->duration * 1000);

	for (;;) {
		struct pollfd fds[1024];
		size_t n = 0, ns;
		long now = now_ms();
		int timeout = -1;
		fds[n++] = (struct pollfd){ .fd = sfd, .events = POLLIN };
		fds[n++] = (struct pollfd){ .fd = ctl, .events = POLLIN };
		ns = mp_collector_pollfds(c, fds + n, sizeof(fds) / sizeof(fds[0]) - n);
		/* Done when the tracker closed its stream: detached, or the process ended. */
		if (mp_collector_streams(c) && !mp_collector_open_streams(c))
			break;
		if (!detaching && deadline && now >= deadline) {
			detaching = true;
			mp_collector_detach(c);
			detach_deadline = now + 10000;
		}
		if (detaching && now >= detach_deadline) {
			warning("process %d did not confirm the detach within 10 s; finishing the capture",
				(int)pid);
			break;
		}
		if (deadline && !detaching)
			timeout = (int)(deadline - now);
		else if (detaching)
			timeout = (int)(detach_deadline - now);
		else if (!mp_collector_streams(c))
			timeout = 5000; /* the tracker connects before the injection returns */
		if (poll(fds, n + ns, timeout) == 0 && !mp_collector_streams(c) && !detaching) {
			error("process %d's tracker never connected", (int)pid);
			break;
		}
		if (fds[0].revents) {
			struct signalfd_siginfo si;
			while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
				if (!detaching) {
					detaching = true;
					mp_collector_detach(c);
					detach_deadline = now_ms() + 10000;
				} else {
					detach_deadline = 0; /* a second Ctrl-C: finish now */
				}
			}
		}
		if (fds[1].revents & POLLIN) {
			int cfd = mp_attachctl_accept(ctl);
			if (cfd >= 0) {
				if (reply_fd >= 0)
					close(reply_fd);
				reply_fd = cfd;
				if (!detaching) {
					detaching = true;
					mp_collector_detach(c);
					detach_deadline = now_ms() + 10000;
				}
			}
		}
		mp_collector_service(c, fds + 2, ns);
	}
	written = report(o, c);
	if (reply_fd >= 0)
		mp_attachctl_reply(reply_fd, output);
	close(ctl);
	unlink(sock);
	rmdir(dir);
	mp_collector_free(c);
	mp_target_info_release(&ti);
	free(tracker);
	free(output);
	strbuf_release(&config);
	strbuf_release(&err);
	return written ? MP_EXIT_OK : MP_EXIT_FAILURE;
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
