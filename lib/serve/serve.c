/*
 * memprof serve: a process's captures over HTTP, on libmicrohttpd (a thread
 * per connection: a report may take a while, a status must not wait for
 * it). Every request goes to the tracker through its control socket, as
 * memprof ctl's do. Who may ask: without a token, the server listens on a
 * loopback address only and answers its own user and root (the kernel's
 * table of TCP sockets says whose the other end is); with one, every
 * request must carry it (Authorization: Bearer), compared in a time that
 * does not depend on where it differs. One line per request on the log.
 */
#include <config.h>
#include "lib/serve/serve.h"
#include "lib/serve/serve-private.h"

#include <errno.h>
#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/process/ctl.h"
#include "lib/report/json.h"
#include "lib/transport/settings.h"
#include "lib/util/xalloc.h"

#if MHD_VERSION < 0x00097500
#error "memprof serve needs libmicrohttpd 0.9.75 or later"
#endif

struct mp_serve {
	struct mp_serve_opts o;
	char *prefix;            /* "" or "/a/b" */
	char *url;
	struct MHD_Daemon *d;
	int fd;
};

/* A request, from its headers to the log line written when it is done. */
struct request {
	struct timespec t0;
	char *method, *url;
	char peer[64];
	int status;
};

/* ---- replies ---- */

static void reply_init(struct mp_serve_reply *r)
{
	memset(r, 0, sizeof(*r));
	strbuf_init(&r->body, 0);
	r->fd = -1;
}

/* ---- the tracker ---- */

/*
 * Ask the tracker: 0 with its answer, else the reply is made (502 when it
 * cannot be reached, 409 when what is asked does not fit what it does, 400
 * for what it does not take, 500 otherwise).
 */
static int ask(struct mp_serve *s, const char *request, struct strbuf *answer, struct mp_serve_reply *r)
{
	struct strbuf err = STRBUF_INIT;
	/* (start, stop and snapshot wait for a collector's word on the file, in our time.) */
	int rc = strcmp(request, "status") ? mp_ctl_ask(s->o.pid, request, s->o.timeout_ms, answer, &err)
					   : mp_ctl_request(s->o.pid, request, s->o.timeout_ms, answer, &err);
	if (rc < 0) {
		mp_serve_fail(r, 502, err.buf);
	} else if (rc > 0) {
		const char *e = err.buf;
		int conflict = strstr(e, "already recording") || strstr(e, "not recording") ||
			       strstr(e, "live view") || strstr(e, "memprof attach") ||
			       strstr(e, "still being finished");
		mp_serve_fail(r, conflict ? 409 : strstr(e, "invalid") ? 400 : 500, e);
	}
	strbuf_release(&err);
	return rc ? -1 : 0;
}

static void reply_ok(struct mp_serve_reply *r, const char *status, const char *message)
{
	struct mp_json j;
	r->status = 200;
	r->type = "application/json";
	strbuf_reset(&r->body);
	mp_json_init(&j, &r->body, 0);
	mp_json_begin_object(&j);
	mp_json_field_string(&j, "status", status);
	mp_json_field_string(&j, "message", message);
	mp_json_end_object(&j);
	strbuf_addch(&r->body, '\n');
}

/* The parameters POST start takes, and the tracker's settings they are (-1: aggregate). */
static const struct {
	const char *param;
	int setting;
} start_params[] = {
	{ "memory_interval_ms", MP_SET_INTERVAL_MS },
	{ "max_depth", MP_SET_MAX_DEPTH },
	{ "follow_fork", MP_SET_FOLLOW_FORK },
	{ "python_frames", MP_SET_PYTHON_FRAMES },
	{ "sampling_interval", MP_SET_SAMPLING_INTERVAL },
	{ "aggregate", -1 },
};

/* POST start: the parameters as the tracker's settings, checked with their bounds. */
static void start(struct mp_serve *s, const struct mp_serve_param *p, size_t np,
		  struct mp_serve_reply *r)
{
	struct strbuf req = STRBUF_INIT, answer = STRBUF_INIT, msg = STRBUF_INIT, e = STRBUF_INIT;
	strbuf_addstr(&req, "start");
	for (size_t i = 0; i < np; i++) {
		const char *v = p[i].value && *p[i].value ? p[i].value : "1";
		size_t k, nk = sizeof(start_params) / sizeof(start_params[0]);
		uint32_t lo = 0, hi = 1;
		for (k = 0; k < nk && strcmp(p[i].key, start_params[k].param); k++)
			;
		if (k == nk) {
			strbuf_addf(&msg, "unknown parameter '%s' for start (memory_interval_ms, max_depth, "
				    "follow_fork, python_frames, sampling_interval, aggregate)", p[i].key);
			mp_serve_fail(r, 400, msg.buf);
			goto out;
		}
		v = !strcmp(v, "true") ? "1" : !strcmp(v, "false") ? "0" : v;
		strbuf_reset(&e);
		if (start_params[k].setting >= 0)
			strbuf_addf(&e, "%s=%s", mp_settings_name((enum mp_setting)start_params[k].setting), v);
		if ((start_params[k].setting >= 0 && mp_settings_check(e.buf, e.len, &lo, &hi)) ||
		    (start_params[k].setting < 0 && strcmp(v, "0") && strcmp(v, "1")) || strchr(v, ' ')) {
			strbuf_addf(&msg, "invalid value '%s' for %s (%u to %u)", v, p[i].key, lo, hi);
			mp_serve_fail(r, 400, msg.buf);
			goto out;
		}
		if (start_params[k].setting >= 0)
			strbuf_addf(&req, " %s", e.buf);
		else if (!strcmp(v, "1"))
			strbuf_addstr(&req, " aggregate");
	}
	if (!ask(s, req.buf, &answer, r))
		reply_ok(r, "recording", answer.buf);
out:
	strbuf_release(&req);
	strbuf_release(&answer);
	strbuf_release(&msg);
	strbuf_release(&e);
}

/* POST stop and snapshot, GET status: the tracker's answer as JSON. */
static void simple(struct mp_serve *s, const char *what, struct mp_serve_reply *r)
{
	struct strbuf req = STRBUF_INIT, answer = STRBUF_INIT;
	strbuf_addstr(&req, what);
	if (!ask(s, req.buf, &answer, r)) {
		const char *status = !strcmp(what, "stop") ? "stopped"
				     : !strcmp(what, "snapshot") ? "snapshot"
				     : !strncmp(answer.buf, "paused", 6) ? "paused" : "recording";
		reply_ok(r, status, answer.buf);
	}
	strbuf_release(&req);
	strbuf_release(&answer);
}

/* GET report, flamegraph, table, stats: of the last capture, once it is complete. */
static void report(struct mp_serve *s, const char *what, const struct mp_serve_param *p, size_t np,
		   struct mp_serve_reply *r)
{
	struct strbuf answer = STRBUF_INIT, msg = STRBUF_INIT;
	const char *last;
	if (ask(s, "status", &answer, r))
		goto out;
	if (strncmp(answer.buf, "paused", 6)) {
		strbuf_addf(&msg, "a capture is recording (%s): POST %s/stop first, then ask for its %s",
			    answer.buf, s->prefix, what);
		mp_serve_fail(r, 409, msg.buf);
		goto out;
	}
	last = strstr(answer.buf, ", the last into '");
	if (!last) {
		strbuf_addf(&msg, "no capture yet: POST %s/start, then POST %s/stop", s->prefix, s->prefix);
		mp_serve_fail(r, 404, msg.buf);
		goto out;
	}
	last += strlen(", the last into '");
	strbuf_addstr(&msg, last);
	if (msg.len && msg.buf[msg.len - 1] == '\'')
		strbuf_setlen(&msg, msg.len - 1);
	mp_serve_render(&s->o, what, msg.buf, p, np, r);
out:
	strbuf_release(&answer);
	strbuf_release(&msg);
}

/* ---- requests ---- */

struct params {
	struct mp_serve_param *p;
	size_t n, alloc;
};

static enum MHD_Result add_param(void *cls, enum MHD_ValueKind kind, const char *key, const char *value)
{
	struct params *ps = cls;
	(void)kind;
	ALLOC_GROW(ps->p, ps->n + 1, ps->alloc);
	ps->p[ps->n++] = (struct mp_serve_param){ key, value };
	return MHD_YES;
}

/* Whether the request may be answered; else the reply (401, 403) is made. */
static int allowed(struct mp_serve *s, struct MHD_Connection *c, struct mp_serve_reply *r)
{
	const union MHD_ConnectionInfo *fd, *addr;
	struct strbuf msg = STRBUF_INIT;
	uid_t uid;
	if (s->o.token) {
		const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
		if (h && !strncasecmp(h, "Bearer ", 7) && mp_serve_same_secret(h + 7, s->o.token))
			return 1;
		mp_serve_fail(r, 401, h ? "the token is not the right one" : "a token is needed (Authorization: Bearer TOKEN)");
		return 0;
	}
	fd = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	addr = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (fd && addr && mp_serve_peer_uid(fd->connect_fd, addr->client_addr, &uid) == 0 &&
	    (uid == geteuid() || uid == 0))
		return 1;
	if (fd && addr && mp_serve_peer_uid(fd->connect_fd, addr->client_addr, &uid) == 0)
		strbuf_addf(&msg, "refused: the request comes from user %lu; memprof serve answers user %lu "
			    "and root (or every holder of its --token-file)", (unsigned long)uid,
			    (unsigned long)geteuid());
	else
		strbuf_addstr(&msg, "refused: cannot tell which user the request comes from");
	mp_serve_fail(r, 403, msg.buf);
	strbuf_release(&msg);
	return 0;
}

static const struct {
	const char *path, *method;
} routes[] = {
	{ "/start", "POST" }, { "/stop", "POST" }, { "/snapshot", "POST" }, { "/status", "GET" },
	{ "/report", "GET" }, { "/flamegraph", "GET" }, { "/table", "GET" }, { "/stats", "GET" },
};

static void dispatch(struct mp_serve *s, struct MHD_Connection *c, const char *url,
		     const char *method, struct mp_serve_reply *r, const char **allow)
{
	struct params ps = { NULL, 0, 0 };
	size_t plen = strlen(s->prefix), k, nr = sizeof(routes) / sizeof(routes[0]);
	const char *what;
	if (!allowed(s, c, r))
		return;
	if (strncmp(url, s->prefix, plen) || url[plen] != '/') {
		mp_serve_fail(r, 404, "no such endpoint");
		return;
	}
	url += plen;
	for (k = 0; k < nr && strcmp(url, routes[k].path); k++)
		;
	if (k == nr) {
		mp_serve_fail(r, 404, "no such endpoint (start, stop, snapshot, status, report, flamegraph, "
				    "table, stats)");
		return;
	}
	if (strcmp(method, routes[k].method) && !(!strcmp(method, "HEAD") && !strcmp(routes[k].method, "GET"))) {
		*allow = routes[k].method;
		mp_serve_fail(r, 405, !strcmp(routes[k].method, "POST") ? "use POST" : "use GET");
		return;
	}
	what = routes[k].path + 1;
	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, add_param, &ps);
	if (!strcmp(what, "start"))
		start(s, ps.p, ps.n, r);
	else if (ps.n && (!strcmp(what, "stop") || !strcmp(what, "snapshot") || !strcmp(what, "status")))
		mp_serve_fail(r, 400, "this endpoint takes no parameters");
	else if (!strcmp(what, "stop") || !strcmp(what, "snapshot") || !strcmp(what, "status"))
		simple(s, what, r);
	else
		report(s, what, ps.p, ps.n, r);
	free(ps.p);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
			      const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
	struct mp_serve *s = cls;
	struct request *q = *con_cls;
	struct mp_serve_reply r;
	struct MHD_Response *resp;
	const char *allow = NULL;
	enum MHD_Result ret;
	(void)version;
	(void)upload;
	if (!q) {
		const union MHD_ConnectionInfo *addr = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		struct strbuf peer = STRBUF_INIT;
		q = xcalloc(1, sizeof(*q));
		clock_gettime(CLOCK_MONOTONIC, &q->t0);
		q->method = xstrdup(method);
		q->url = xstrdup(url);
		if (addr)
			mp_serve_addr_str(addr->client_addr, &peer);
		snprintf(q->peer, sizeof(q->peer), "%s", peer.len ? peer.buf : "?");
		strbuf_release(&peer);
		*con_cls = q;
		return MHD_YES;
	}
	if (*upload_size) {
		*upload_size = 0; /* (bodies are not read: everything is in the query) */
		return MHD_YES;
	}
	reply_init(&r);
	dispatch(s, c, url, method, &r, &allow);
	q->status = r.status;
	if (r.fd >= 0) {
		resp = MHD_create_response_from_fd64(r.size, r.fd);
	} else {
		size_t len;
		char *body = strbuf_detach(&r.body, &len);
		resp = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	}
	if (!resp) {
		free(r.filename);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r.type ? r.type : "text/plain");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	if (r.filename) {
		struct strbuf cd = STRBUF_INIT;
		strbuf_addstr(&cd, "inline; filename=\"");
		for (const char *f = r.filename; *f; f++)
			if (*f != '"' && *f != '\\' && (unsigned char)*f >= 0x20)
				strbuf_addch(&cd, *f);
		strbuf_addch(&cd, '"');
		MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_DISPOSITION, cd.buf);
		strbuf_release(&cd);
	}
	if (r.status == 401)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"memprof\"");
	if (allow)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, allow);
	ret = MHD_queue_response(c, (unsigned)r.status, resp);
	MHD_destroy_response(resp);
	free(r.filename);
	strbuf_release(&r.body);
	return ret;
}

/* The request's log line, once answered. */
static void done(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
	struct mp_serve *s = cls;
	struct request *q = *con_cls;
	struct timespec t1;
	(void)c;
	if (!q)
		return;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (s->o.log) {
		long ms = (t1.tv_sec - q->t0.tv_sec) * 1000 + (t1.tv_nsec - q->t0.tv_nsec) / 1000000;
		fprintf(s->o.log, "memprof serve: %s \"%s %s\" %d %ld ms%s\n", q->peer, q->method, q->url,
			q->status, ms, toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? "" : " (not sent whole)");
		fflush(s->o.log);
	}
	free(q->method);
	free(q->url);
	free(q);
	*con_cls = NULL;
}

/* ---- the server ---- */

static int check_prefix(const char *p, struct strbuf *err)
{
	if (!p || !*p)
		return 0;
	if (p[0] != '/' || p[strlen(p) - 1] == '/' || strstr(p, "//") || strstr(p, "/../") ||
	    strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/-._~") != strlen(p)) {
		strbuf_addf(err, "invalid prefix '%s' (a path such as /jobs/7/profiler: letters, digits, "
			    "'-', '.', '_', '~', starting with '/' and not ending with it)", p);
		return -1;
	}
	return 0;
}

struct mp_serve *mp_serve_start(const struct mp_serve_opts *o, struct strbuf *err, bool *usage)
{
	struct sockaddr_storage ss;
	socklen_t len;
	bool loopback;
	struct mp_serve *s;
	struct strbuf where = STRBUF_INIT;
	int fd;
	*usage = true;
	if (check_prefix(o->prefix, err) || mp_serve_parse_listen(o->listen, &ss, &len, &loopback, err))
		return NULL;
	if (!loopback && !o->token) {
		mp_serve_addr_str((struct sockaddr *)&ss, &where);
		strbuf_addf(err, "'%s' is not a loopback address: listening there needs --token-file "
			    "(every request must then carry the token)", where.buf);
		strbuf_release(&where);
		return NULL;
	}
	*usage = false;
	fd = mp_serve_listen(&ss, len, err);
	if (fd < 0)
		return NULL;
	s = xcalloc(1, sizeof(*s));
	s->o = *o;
	s->fd = fd;
	s->prefix = xstrdup(o->prefix ? o->prefix : "");
	mp_serve_addr_str((struct sockaddr *)&ss, &where);
	s->url = xasprintf("http://%s%s/", where.buf, s->prefix);
	strbuf_release(&where);
	s->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL |
					(ss.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
				0, NULL, NULL, handle, s, MHD_OPTION_LISTEN_SOCKET, fd,
				MHD_OPTION_CONNECTION_TIMEOUT, 30u, MHD_OPTION_CONNECTION_LIMIT, 16u,
				MHD_OPTION_NOTIFY_COMPLETED, done, s, MHD_OPTION_END);
	if (!s->d) {
		strbuf_addf(err, "cannot start the HTTP server on '%s'", s->url);
		close(fd);
		free(s->prefix);
		free(s->url);
		free(s);
		return NULL;
	}
	return s;
}

const char *mp_serve_url(const struct mp_serve *s)
{
	return s->url;
}

void mp_serve_stop(struct mp_serve *s)
{
	if (!s)
		return;
	MHD_stop_daemon(s->d);
	close(s->fd);
	free(s->prefix);
	free(s->url);
	free(s);
}
