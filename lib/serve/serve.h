/*
 * memprof serve (serve.c): the captures of a process whose tracker is loaded
 * (preloaded paused, or started by the in-process API) over HTTP, through its
 * control socket: POST start, stop and snapshot; GET status, report (the
 * capture), flamegraph and table (HTML) and stats (text or JSON).
 */
#ifndef MEMPROF_LIB_SERVE_SERVE_H
#define MEMPROF_LIB_SERVE_SERVE_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "lib/util/strbuf.h"

struct mp_serve_opts {
	pid_t pid;               /* the process */
	const char *listen;      /* ADDR:PORT, [ADDR6]:PORT, :PORT or PORT; NULL: 127.0.0.1:0 */
	const char *prefix;      /* the endpoints' path prefix ("/jobs/7/profiler"); NULL: none */
	const char *token;       /* the Bearer token every request must carry; NULL: none */
	const char *memprof;     /* the memprof program that makes the reports */
	int timeout_ms;          /* for each request to the tracker */
	FILE *log;               /* one line per request */
	/*
	 * Check a reporter's arguments (argv[0] its name, "flamegraph" or
	 * "table") as the command would: 0, or -1 with a one-line reason in err.
	 */
	int (*check)(int argc, char **argv, struct strbuf *err);
};

struct mp_serve;

/*
 * Listen and serve, from threads of the server's own. Refused, NULL with a
 * one-line reason in err and *usage true when the options are at fault: an
 * address that is not loopback without a token, a prefix that is not a
 * path, an address that is none; false when the address cannot be had.
 */
struct mp_serve *mp_serve_start(const struct mp_serve_opts *o, struct strbuf *err, bool *usage);
/* Where it serves: "http://127.0.0.1:8080/prefix/". */
const char *mp_serve_url(const struct mp_serve *s);
/* Stop: the requests in progress are finished first. */
void mp_serve_stop(struct mp_serve *s);

#endif
