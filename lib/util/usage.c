/* Error reporting helpers: one place decides how messages look. */
#include <config.h>
#include "lib/util/usage.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef MP_SANITIZED
/*
 * A sanitized build (./configure --enable-sanitizers) looks for no leaks: the
 * commands exit without freeing what exit() frees. Said here, not only in
 * ASAN_OPTIONS, because ASAN reads its environment from /proc/self/environ,
 * which a sandbox may not have (tests/e2e/run-sandbox.sh). ASAN_OPTIONS
 * still wins (tests/fuzz/run.sh asks for leaks).
 */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "detect_leaks=0";
}
#endif

static const char *progname = "memprof";
static int quiet;
static char *doomed[4];
static int ndoomed;
static pid_t doomed_by;

void mp_remove_on_die(const char *path)
{
	if (ndoomed == (int)(sizeof(doomed) / sizeof(doomed[0])))
		return;
	doomed[ndoomed] = strdup(path);
	if (doomed[ndoomed])
		ndoomed++;
	doomed_by = getpid();
}

void mp_keep_on_die(void)
{
	while (ndoomed)
		free(doomed[--ndoomed]);
}

static void remove_doomed(void)
{
	if (doomed_by != getpid())
		return;
	while (ndoomed) {
		remove(doomed[--ndoomed]);
		free(doomed[ndoomed]);
	}
}

void mp_set_progname(const char *name) { progname = name; }
const char *mp_progname(void) { return progname; }
void mp_set_quiet(int q) { quiet = q; }

static void vreport(const char *prefix, const char *fmt, va_list ap, int err) MP_PRINTF(2, 0);
static void vreport(const char *prefix, const char *fmt, va_list ap, int err)
{
	/* One fprintf per line keeps messages whole when several processes share stderr. */
	char msg[4096];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	fflush(stdout);
	if (err)
		fprintf(stderr, "%s: %s%s: %s\n", progname, prefix, msg, strerror(err));
	else
		fprintf(stderr, "%s: %s%s\n", progname, prefix, msg);
}

void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("", fmt, ap, 0);
	va_end(ap);
	remove_doomed();
	exit(MP_EXIT_FAILURE);
}

void die_errno(const char *fmt, ...)
{
	int err = errno;
	va_list ap;
	va_start(ap, fmt);
	vreport("", fmt, ap, err);
	va_end(ap);
	remove_doomed();
	exit(MP_EXIT_FAILURE);
}

void die_usage(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("", fmt, ap, 0);
	va_end(ap);
	remove_doomed();
	exit(MP_EXIT_USAGE);
}

int error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vreport("", fmt, ap, 0);
	va_end(ap);
	return -1;
}

int error_errno(const char *fmt, ...)
{
	int err = errno;
	va_list ap;
	va_start(ap, fmt);
	vreport("", fmt, ap, err);
	va_end(ap);
	return -1;
}

void warning(const char *fmt, ...)
{
	va_list ap;
	if (quiet)
		return;
	va_start(ap, fmt);
	vreport("warning: ", fmt, ap, 0);
	va_end(ap);
}

void mp_bug(const char *file, int line, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: BUG: %s:%d: %s\n", progname, file, line, msg);
	abort();
}
