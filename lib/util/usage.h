/* Error reporting in git's style: die() for commands, error() returns -1 for library code. */
#ifndef MEMPROF_LIB_UTIL_USAGE_H
#define MEMPROF_LIB_UTIL_USAGE_H

#include <stdarg.h>

#define MP_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define MP_NORETURN __attribute__((noreturn))

/* Exit statuses used everywhere: success, runtime failure, usage error. */
enum { MP_EXIT_OK = 0, MP_EXIT_FAILURE = 1, MP_EXIT_USAGE = 2 };

/*
 * Messages are printed as "memprof: <msg>" (error), "memprof: warning: <msg>"
 * on stderr. Write them lowercase, without a final period, subject in quotes:
 * error("cannot open '%s': %s", path, strerror(errno)).
 */
MP_NORETURN MP_PRINTF(1, 2) void die(const char *fmt, ...);
MP_NORETURN MP_PRINTF(1, 2) void die_errno(const char *fmt, ...);
/* A usage error: prints the message and exits with status 2. */
MP_NORETURN MP_PRINTF(1, 2) void die_usage(const char *fmt, ...);
MP_PRINTF(1, 2) int error(const char *fmt, ...);
MP_PRINTF(1, 2) int error_errno(const char *fmt, ...);
MP_PRINTF(1, 2) void warning(const char *fmt, ...);
MP_NORETURN void mp_bug(const char *file, int line, const char *fmt, ...) MP_PRINTF(3, 4);
#define BUG(...) mp_bug(__FILE__, __LINE__, __VA_ARGS__)

/*
 * Files or empty directories the command made that die() removes, the last
 * named first: a capture whose program never ran, the socket of a
 * collector never used. mp_keep_on_die() keeps them all from then on (the
 * capture holds something). Only the process that named them removes them.
 */
void mp_remove_on_die(const char *path);
void mp_keep_on_die(void);

/* The program name used as the message prefix ("memprof" by default). */
void mp_set_progname(const char *name);
const char *mp_progname(void);

/* Silence warning() (for -q); errors are always printed. */
void mp_set_quiet(int quiet);

#endif
