/*
 * memprof serve's reports: the capture itself, and what the memprof command
 * makes of it (flamegraph, table, stats), each run in a process of its own
 * with the reporter's arguments from the query.
 */
#include <config.h>
#include "lib/serve/serve-private.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/report/json.h"
#include "lib/util/xalloc.h"

extern char **environ;

/* The query parameters each report takes: flags, or options with a value. */
static const char *const html_keys[] = {
	"leaks", "temporary-allocations", "temporary-allocation-threshold", "temporal", "inverted",
	"split-threads", "max-memory-records", "no-mmap", NULL,
};
static const char *const stats_keys[] = { "num-largest", "no-mmap", NULL };

void mp_serve_fail(struct mp_serve_reply *r, int status, const char *msg)
{
	struct mp_json j;
	r->status = status;
	r->type = "application/json";
	strbuf_reset(&r->body);
	mp_json_init(&j, &r->body, 0);
	mp_json_begin_object(&j);
	mp_json_field_string(&j, "error", msg);
	mp_json_end_object(&j);
	strbuf_addch(&r->body, '\n');
}

/*
 * Run argv with its standard output into out and its standard error into
 * err; its exit status, or -1 (err says why).
 */
static int run(char *const argv[], struct strbuf *out, struct strbuf *err)
{
	posix_spawn_file_actions_t fa;
	int po[2], pe[2], status = -1;
	pid_t pid;
	if (pipe2(po, O_CLOEXEC) < 0)
		return -1;
	if (pipe2(pe, O_CLOEXEC) < 0) {
		close(po[0]);
		close(po[1]);
		return -1;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, po[1], 1);
	posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
	errno = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(po[1]);
	close(pe[1]);
	if (errno) {
		strbuf_addf(err, "cannot run '%s': %s", argv[0], strerror(errno));
		close(po[0]);
		close(pe[0]);
		return -1;
	}
	/* Both pipes at once: a reporter that fills one while we wait on the other would stall. */
	for (int open_fds = 2; open_fds;) {
		struct pollfd p[2] = { { po[0], POLLIN, 0 }, { pe[0], POLLIN, 0 } };
		char buf[65536];
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		for (int i = 0; i < 2; i++) {
			ssize_t n;
			if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			n = read(p[i].fd, buf, sizeof(buf));
			if (n > 0) {
				strbuf_add(i ? err : out, buf, (size_t)n);
			} else if (n == 0 || errno != EINTR) {
				close(i ? pe[0] : po[0]);
				*(i ? &pe[0] : &po[0]) = -1;
				open_fds--;
			}
		}
	}
	if (po[0] >= 0)
		close(po[0]);
	if (pe[0] >= 0)
		close(pe[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The last line of a command's standard error, without "memprof: " or "memprof CMD: ". */
static const char *last_line(struct strbuf *err)
{
	char *s;
	while (err->len && err->buf[err->len - 1] == '\n')
		strbuf_setlen(err, err->len - 1);
	s = strrchr(err->buf, '\n');
	s = s ? s + 1 : err->buf;
	if (!strncmp(s, "memprof", 7)) {
		char *colon = strstr(s, ": ");
		if (colon)
			s = colon + 2;
	}
	return s;
}

/* The query as arguments: key=1 (or empty) --key, key=0 nothing, key=V --key=V. 0 or -1 (r says). */
static int query_args(const char *what, const char *const *keys, const struct mp_serve_param *params,
		      size_t nparams, char ***argv, int *argc, struct mp_serve_reply *r)
{
	for (size_t i = 0; i < nparams; i++) {
		struct strbuf key = STRBUF_INIT, msg = STRBUF_INIT;
		const char *v = params[i].value ? params[i].value : "";
		size_t k;
		strbuf_addstr(&key, params[i].key);
		for (char *c = key.buf; *c; c++)
			if (*c == '_')
				*c = '-';
		for (k = 0; keys[k] && strcmp(keys[k], key.buf); k++)
			;
		if (!keys[k]) {
			strbuf_addf(&msg, "unknown parameter '%s' for %s (", params[i].key, what);
			for (k = 0; keys[k]; k++)
				strbuf_addf(&msg, "%s%s", k ? ", " : "", keys[k]);
			strbuf_addstr(&msg, keys[0] ? ")" : "none)");
			mp_serve_fail(r, 400, msg.buf);
			strbuf_release(&key);
			strbuf_release(&msg);
			return -1;
		}
		if (strcmp(v, "0") && strcmp(v, "false") && strcmp(v, "no")) {
			*argv = xreallocarray(*argv, (size_t)*argc + 2, sizeof(**argv));
			if (!*v || !strcmp(v, "1") || !strcmp(v, "true") || !strcmp(v, "yes"))
				(*argv)[(*argc)++] = xasprintf("--%s", key.buf);
			else
				(*argv)[(*argc)++] = xasprintf("--%s=%s", key.buf, v);
			(*argv)[*argc] = NULL;
		}
		strbuf_release(&key);
	}
	return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* An HTML report: memprof REPORTER -o DIR/report.html ARGS... CAPTURE. */
static void html(const struct mp_serve_opts *o, const char *what, const char *capture, char **args,
		 int nargs, struct mp_serve_reply *r)
{
	char dir[] = "/tmp/memprof-serve-XXXXXX";
	struct strbuf out = STRBUF_INIT, err = STRBUF_INIT, file = STRBUF_INIT;
	char **argv = xcalloc((size_t)nargs + 8, sizeof(*argv));
	int n = 0, st;
	if (!mkdtemp(dir)) {
		mp_serve_fail(r, 500, "cannot make a directory for the report in /tmp");
		free(argv);
		return;
	}
	strbuf_addf(&file, "%s/report.html", dir);
	argv[n++] = (char *)o->memprof;
	argv[n++] = (char *)what;
	argv[n++] = (char *)"-o";
	argv[n++] = file.buf;
	for (int i = 0; i < nargs; i++)
		argv[n++] = args[i];
	argv[n++] = (char *)capture;
	st = run(argv, &out, &err);
	if (st == 0 && strbuf_read_file(&r->body, file.buf, 1 << 20) == 0) {
		r->status = 200;
		r->type = "text/html; charset=utf-8";
	} else {
		mp_serve_fail(r, st == 2 ? 400 : 500, err.len ? last_line(&err) : "the report could not be made");
	}
	nftw(dir, rm_entry, 4, FTW_DEPTH | FTW_PHYS);
	strbuf_release(&out);
	strbuf_release(&err);
	strbuf_release(&file);
	free(argv);
}

static void stats(const struct mp_serve_opts *o, const char *capture, bool json, char **args,
		  int nargs, struct mp_serve_reply *r)
{
	struct strbuf err = STRBUF_INIT;
	char **argv = xcalloc((size_t)nargs + 8, sizeof(*argv));
	int n = 0, st;
	argv[n++] = (char *)o->memprof;
	argv[n++] = (char *)"stats";
	if (json) {
		argv[n++] = (char *)"--json";
		argv[n++] = (char *)"-o";
		argv[n++] = (char *)"-";
	}
	for (int i = 0; i < nargs; i++)
		argv[n++] = args[i];
	argv[n++] = (char *)capture;
	st = run(argv, &r->body, &err);
	if (st == 0) {
		r->status = 200;
		r->type = json ? "application/json" : "text/plain; charset=utf-8";
	} else {
		mp_serve_fail(r, st == 2 ? 400 : 500, err.len ? last_line(&err) : "memprof stats failed");
	}
	strbuf_release(&err);
	free(argv);
}

void mp_serve_render(const struct mp_serve_opts *o, const char *what, const char *path,
		     const struct mp_serve_param *params, size_t nparams, struct mp_serve_reply *r)
{
	struct strbuf capture = STRBUF_INIT, err = STRBUF_INIT;
	struct mp_serve_param *rest = xcalloc(nparams + 1, sizeof(*rest));
	size_t nrest = 0;
	char **args = xcalloc(2, sizeof(*args));
	int nargs = 0;
	bool json = false;
	struct stat st;
	/* The file as the process named it, or through its root (a container, PrivateTmp). */
	strbuf_addstr(&capture, path);
	if (access(capture.buf, R_OK) < 0) {
		strbuf_reset(&capture);
		strbuf_addf(&capture, "/proc/%d/root%s", (int)o->pid, path);
	}
	if (stat(capture.buf, &st) < 0 || !S_ISREG(st.st_mode)) {
		strbuf_addf(&err, "the last capture, '%s', cannot be read: %s", path, strerror(errno));
		mp_serve_fail(r, 404, err.buf);
		goto out;
	}
	for (size_t i = 0; i < nparams; i++) {
		if (!strcmp(what, "stats") && !strcmp(params[i].key, "format")) {
			const char *v = params[i].value ? params[i].value : "";
			if (strcmp(v, "json") && strcmp(v, "text")) {
				mp_serve_fail(r, 400, "invalid format (text or json)");
				goto out;
			}
			json = !strcmp(v, "json");
		} else {
			rest[nrest++] = params[i];
		}
	}
	if (!strcmp(what, "report")) {
		if (nrest) {
			mp_serve_fail(r, 400, "/report takes no parameters");
			goto out;
		}
		r->fd = open(capture.buf, O_RDONLY | O_CLOEXEC);
		if (r->fd < 0) {
			mp_serve_fail(r, 404, "the last capture cannot be opened");
			goto out;
		}
		r->status = 200;
		r->type = "application/octet-stream";
		r->size = (unsigned long long)st.st_size;
		r->filename = xstrdup(strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
		goto out;
	}
	if (query_args(what, strcmp(what, "stats") ? html_keys : stats_keys, rest, nrest, &args, &nargs, r))
		goto out;
	if (!strcmp(what, "stats")) {
		stats(o, capture.buf, json, args, nargs, r);
		goto out;
	}
	{
		/* Checked as the reporter would, before it runs: a bad value is the asker's error. */
		char **argv = xcalloc((size_t)nargs + 2, sizeof(*argv));
		argv[0] = (char *)what;
		memcpy(argv + 1, args, (size_t)nargs * sizeof(*argv));
		if (o->check && o->check(nargs + 1, argv, &err) < 0)
			mp_serve_fail(r, 400, err.buf);
		else
			html(o, what, capture.buf, args, nargs, r);
		free(argv);
	}
out:
	for (int i = 0; i < nargs; i++)
		free(args[i]);
	free(args);
	free(rest);
	strbuf_release(&capture);
	strbuf_release(&err);
}
