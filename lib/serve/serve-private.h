/* Between serve.c, listen.c and render.c. */
#ifndef MEMPROF_LIB_SERVE_SERVE_PRIVATE_H
#define MEMPROF_LIB_SERVE_SERVE_PRIVATE_H

#include <stdbool.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "lib/serve/serve.h"
#include "lib/util/strbuf.h"

/* ---- listen.c ---- */

/*
 * Parse spec (ADDR:PORT, [ADDR6]:PORT, :PORT, PORT; NULL: 127.0.0.1:0) into
 * *ss, *len; *loopback whether it is a loopback address. 0, or -1 with err.
 */
int mp_serve_parse_listen(const char *spec, struct sockaddr_storage *ss, socklen_t *len,
			  bool *loopback, struct strbuf *err);
/* A listening TCP socket at ss (its port, if 0, chosen); -1 with err. */
int mp_serve_listen(struct sockaddr_storage *ss, socklen_t len, struct strbuf *err);
/* "127.0.0.1:8080" or "[::1]:8080". */
void mp_serve_addr_str(const struct sockaddr *sa, struct strbuf *out);
/*
 * The user of the process on the other end of a loopback connection, whose
 * socket is fd (ours) with peer the other end's address: from the kernel's
 * table of this network namespace's TCP sockets. 0 with *uid, or -1 when it
 * cannot be told (not loopback, not found).
 */
int mp_serve_peer_uid(int fd, const struct sockaddr *peer, uid_t *uid);
/* a and b are equal, in a time that depends on their lengths only. */
bool mp_serve_same_secret(const char *a, const char *b);

/* ---- render.c ---- */

/* What a reporter's query becomes: an HTTP status and a body (a message on error). */
struct mp_serve_reply {
	int status;
	const char *type;        /* the body's Content-Type */
	struct strbuf body;      /* the body, unless fd is one */
	int fd;                  /* a file to send instead (size bytes), or -1 */
	unsigned long long size;
	char *filename;          /* Content-Disposition's, or NULL */
};

/* Make r a reply of status with {"error": msg}. */
void mp_serve_fail(struct mp_serve_reply *r, int status, const char *msg);

/* A query parameter (key=value) of the request. */
struct mp_serve_param {
	const char *key, *value;
};

/*
 * The report what ("report", "flamegraph", "table", "stats") of the capture
 * at path (as the process sees it: through /proc/PID/root when it is not
 * here), with the query's parameters. Fills *r.
 */
void mp_serve_render(const struct mp_serve_opts *o, const char *what, const char *path,
		     const struct mp_serve_param *params, size_t nparams, struct mp_serve_reply *r);

#endif
