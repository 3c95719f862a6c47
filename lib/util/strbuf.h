/* A growable byte buffer, always NUL-terminated (git's strbuf, trimmed). */
#ifndef MEMPROF_LIB_UTIL_STRBUF_H
#define MEMPROF_LIB_UTIL_STRBUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

struct strbuf {
	char *buf;    /* always valid and NUL-terminated once initialised */
	size_t len;   /* bytes used, not counting the NUL */
	size_t alloc; /* bytes allocated; 0 means buf points at a static "" */
};

#define STRBUF_INIT { mp_strbuf_empty, 0, 0 }
extern char mp_strbuf_empty[];

void strbuf_init(struct strbuf *sb, size_t hint);
/* Free the buffer and reset to empty. */
void strbuf_release(struct strbuf *sb);
/* Return the buffer to the caller (who frees it) and reset sb. */
char *strbuf_detach(struct strbuf *sb, size_t *len);
/* Make room for at least extra more bytes. */
void strbuf_grow(struct strbuf *sb, size_t extra);
void strbuf_setlen(struct strbuf *sb, size_t len);
static inline void strbuf_reset(struct strbuf *sb) { strbuf_setlen(sb, 0); }

void strbuf_add(struct strbuf *sb, const void *data, size_t len);
void strbuf_addstr(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, int c);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/*
 * Replace the contents with a formatted message (error strings); the
 * arguments may point into sb itself.
 */
void strbuf_vsetf(struct strbuf *sb, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* Append s with C-style escapes for quotes, backslashes and non-printable bytes. */
void strbuf_add_cquoted(struct strbuf *sb, const char *s, size_t len);

/* Read a whole file; returns -1 with errno set on failure. */
int strbuf_read_file(struct strbuf *sb, const char *path, size_t hint);
/* Read from fd to EOF; returns -1 with errno set on failure. */
int strbuf_read_fd(struct strbuf *sb, int fd, size_t hint);

#endif
