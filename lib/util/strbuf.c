/* A growable byte buffer. */
#include <config.h>
#include "lib/util/strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/util/usage.h"
#include "lib/util/xalloc.h"

char mp_strbuf_empty[1];

void strbuf_init(struct strbuf *sb, size_t hint)
{
	sb->buf = mp_strbuf_empty;
	sb->len = sb->alloc = 0;
	if (hint)
		strbuf_grow(sb, hint);
}

void strbuf_release(struct strbuf *sb)
{
	if (sb->alloc)
		free(sb->buf);
	strbuf_init(sb, 0);
}

char *strbuf_detach(struct strbuf *sb, size_t *len)
{
	char *p;
	if (!sb->alloc)
		strbuf_grow(sb, 0);
	p = sb->buf;
	if (len)
		*len = sb->len;
	strbuf_init(sb, 0);
	return p;
}

void strbuf_grow(struct strbuf *sb, size_t extra)
{
	size_t need;
	if (__builtin_add_overflow(sb->len, extra, &need) || need + 1 < need)
		die("out of memory: string of %zu + %zu bytes", sb->len, extra);
	need += 1;
	if (need <= sb->alloc)
		return;
	if (!sb->alloc)
		sb->buf = NULL;
	{
		size_t alloc = sb->alloc;
		ALLOC_GROW(sb->buf, need, alloc);
		sb->alloc = alloc;
	}
	if (!sb->len)
		sb->buf[0] = '\0';
}

void strbuf_setlen(struct strbuf *sb, size_t len)
{
	if (len > sb->len && len >= sb->alloc)
		BUG("strbuf_setlen beyond the allocation");
	if (!sb->alloc)
		return;
	sb->len = len;
	sb->buf[len] = '\0';
}

void strbuf_add(struct strbuf *sb, const void *data, size_t len)
{
	strbuf_grow(sb, len);
	memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = '\0';
}

void strbuf_addstr(struct strbuf *sb, const char *s)
{
	strbuf_add(sb, s, strlen(s));
}

void strbuf_addch(struct strbuf *sb, int c)
{
	strbuf_grow(sb, 1);
	sb->buf[sb->len++] = (char)c;
	sb->buf[sb->len] = '\0';
}

void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list again;
	int n;
	strbuf_grow(sb, 64);
	va_copy(again, ap);
	n = vsnprintf(sb->buf + sb->len, sb->alloc - sb->len, fmt, ap);
	if (n < 0)
		BUG("vsnprintf failed");
	if ((size_t)n >= sb->alloc - sb->len) {
		strbuf_grow(sb, (size_t)n);
		n = vsnprintf(sb->buf + sb->len, sb->alloc - sb->len, fmt, again);
	}
	va_end(again);
	sb->len += (size_t)n;
}

void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
}

void strbuf_vsetf(struct strbuf *sb, const char *fmt, va_list ap)
{
	struct strbuf msg = STRBUF_INIT;
	strbuf_vaddf(&msg, fmt, ap);
	strbuf_release(sb);
	*sb = msg;
}

void strbuf_add_cquoted(struct strbuf *sb, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		switch (c) {
		case '"': strbuf_add(sb, "\\\"", 2); break;
		case '\\': strbuf_add(sb, "\\\\", 2); break;
		case '\n': strbuf_add(sb, "\\n", 2); break;
		case '\t': strbuf_add(sb, "\\t", 2); break;
		case '\r': strbuf_add(sb, "\\r", 2); break;
		default:
			if (c < 0x20 || c == 0x7f) {
				char esc[4] = { '\\', 'x', hex[c >> 4], hex[c & 15] };
				strbuf_add(sb, esc, 4);
			} else {
				strbuf_addch(sb, c);
			}
		}
	}
}

int strbuf_read_fd(struct strbuf *sb, int fd, size_t hint)
{
	strbuf_grow(sb, hint ? hint : 8192);
	for (;;) {
		ssize_t n = read(fd, sb->buf + sb->len, sb->alloc - sb->len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0)
			break;
		sb->len += (size_t)n;
		sb->buf[sb->len] = '\0';
		if (sb->alloc - sb->len - 1 < 4096)
			strbuf_grow(sb, sb->alloc);
	}
	return 0;
}

int strbuf_read_file(struct strbuf *sb, const char *path, size_t hint)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int ret, saved;
	if (fd < 0)
		return -1;
	ret = strbuf_read_fd(sb, fd, hint);
	saved = errno;
	close(fd);
	errno = saved;
	return ret;
}
