/* memprof serve: a process's captures over HTTP (lib/serve), through its tracker's control socket. */
#include <config.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/options.h"
#include "lib/process/ctl.h"
#include "lib/serve/serve.h"
#include "lib/util/strbuf.h"
#include "lib/util/usage.h"

static const struct mp_cmd_spec spec = {
	.name = "serve",
	.synopsis = "[--listen ADDR:PORT] [--prefix PATH] [--token-file FILE] [--timeout SECONDS] PID",
	.summary = "Serve the captures of a process whose tracker is loaded over HTTP: start, stop, "
		   "snapshot, status, the capture and its reports, without ptrace.",
	.min_args = 1,
	.max_args = 1,
};

/* The token: the file's first line, which only its owner may read. */
static char *read_token(const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	struct stat st;
	if (stat(path, &st) < 0 || strbuf_read_file(&sb, path, 128) < 0)
		die("cannot read the token file '%s': %s", path, strerror(errno));
	if (st.st_mode & 077)
		die("the token file '%s' may be read by other users (chmod 600 it)", path);
	sb.buf[strcspn(sb.buf, "\r\n")] = '\0';
	strbuf_setlen(&sb, strlen(sb.buf));
	if (sb.len < 16)
		die("the token in '%s' is %s (16 characters at least)", path, sb.len ? "too short" : "empty");
	return strbuf_detach(&sb, NULL);
}

/* The reporter's own check of its arguments (cmd/cmd.h), for lib/serve. */
static int check_reporter(int argc, char **argv, struct strbuf *err)
{
	const struct mp_reporter *r = !strcmp(argv[0], "table") ? &mp_reporter_table : &mp_reporter_flamegraph;
	const char *needs_events;
	return r->check(argc, argv, NULL, &needs_events, err) < 0 ? -1 : 0;
}

int cmd_serve(int argc, char **argv)
{
	const char *listen = NULL, *prefix = NULL, *token_file = NULL;
	unsigned timeout = 30;
	const struct mp_opt opts[] = {
		MP_OPT_STRING(0, "listen", "ADDR:PORT", &listen,
			      "listen there (default 127.0.0.1 and a free port; another address than "
			      "loopback needs --token-file)"),
		MP_OPT_STRING(0, "prefix", "PATH", &prefix, "serve the endpoints under PATH (/jobs/7/profiler)"),
		MP_OPT_STRING(0, "token-file", "FILE", &token_file,
			      "every request must carry the token in FILE (Authorization: Bearer TOKEN)"),
		MP_OPT_UINT(0, "timeout", "SECONDS", &timeout, 2, 86400,
			    "wait at most SECONDS for each answer of the tracker (default 30)"),
		MP_OPT_END,
	};
	int first = mp_parse_options(&spec, opts, argc, argv);
	pid_t pid = mp_operand_pid(&spec, argv[first]);
	struct strbuf err = STRBUF_INIT, reply = STRBUF_INIT;
	struct mp_serve_opts so = { .pid = pid, .listen = listen, .prefix = prefix,
				    .timeout_ms = (int)timeout * 1000, .log = stderr,
				    .check = check_reporter };
	char self[4096];
	struct mp_serve *s;
	sigset_t stop_sigs;
	ssize_t n;
	bool usage;
	int r;

	if (token_file)
		so.token = read_token(token_file);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0)
		die("cannot find the memprof program ('/proc/self/exe'): %s", strerror(errno));
	self[n] = '\0';
	so.memprof = self;
	sigemptyset(&stop_sigs);
	sigaddset(&stop_sigs, SIGINT);
	sigaddset(&stop_sigs, SIGTERM);
	sigaddset(&stop_sigs, SIGHUP);
	/* Blocked before the server's threads start: they inherit the mask, and sigtimedwait takes them. */
	pthread_sigmask(SIG_BLOCK, &stop_sigs, NULL);
	s = mp_serve_start(&so, &err, &usage);
	if (!s && usage)
		mp_usage_error(&spec, "%s", err.buf);
	if (!s)
		die("%s", err.buf);
	/* The tracker must answer us (no tracker, another user's process: said now, not per request). */
	r = mp_ctl_request(pid, "status", (int)timeout * 1000, &reply, &err);
	if (r) {
		mp_serve_stop(s);
		if (r < 0)
			die("%s", err.buf);
		die("process %d: %s", (int)pid, err.buf);
	}
	printf("%s\n", mp_serve_url(s));
	fflush(stdout);
	fprintf(stderr, "memprof serve: serving process %d (%s) at %s\n", (int)pid, reply.buf, mp_serve_url(s));
	/* Until a signal, or the process's end. */
	for (;;) {
		struct timespec second = { 1, 0 };
		int sig = sigtimedwait(&stop_sigs, NULL, &second);
		if (sig > 0) {
			fprintf(stderr, "memprof serve: stopped by %s\n", strsignal(sig));
			break;
		}
		if (kill(pid, 0) < 0 && errno == ESRCH) {
			fprintf(stderr, "memprof serve: process %d has ended\n", (int)pid);
			break;
		}
	}
	mp_serve_stop(s);
	strbuf_release(&err);
	strbuf_release(&reply);
	return MP_EXIT_OK;
}
