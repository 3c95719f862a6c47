/* Allocation wrappers that die on out-of-memory. */
#include <config.h>
#include "lib/util/xalloc.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "lib/util/usage.h"

static void oom(size_t n)
{
	die("out of memory allocating %zu bytes", n);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

void *xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);
	if (!p)
		oom(nmemb * size);
	return p;
}

/* Past this size, a table looked up at random is asked huge pages. */
#define HUGE_TABLE (2u << 20)

void *xcalloc_table(size_t nmemb, size_t size)
{
	void *p = xcalloc(nmemb, size);
#ifdef MADV_HUGEPAGE
	size_t n = nmemb * size;
	if (n >= HUGE_TABLE) {
		/* The whole pages inside; a kernel without transparent huge pages says no, which is fine. */
		uintptr_t a = ((uintptr_t)p + 4095) & ~(uintptr_t)4095, e = ((uintptr_t)p + n) & ~(uintptr_t)4095;
		if (e > a)
			(void)madvise((void *)a, e - a, MADV_HUGEPAGE);
	}
#endif
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom(n);
	return q;
}

void *xreallocarray(void *p, size_t nmemb, size_t size)
{
	size_t n;
	if (__builtin_mul_overflow(nmemb, size, &n))
		die("out of memory: %zu elements of %zu bytes overflow", nmemb, size);
	return xrealloc(p, n);
}

void *xrecallocarray(void *p, size_t old, size_t nmemb, size_t size)
{
	char *q = xreallocarray(p, nmemb, size);
	if (nmemb > old)
		memset(q + old * size, 0, (nmemb - old) * size);
	return q;
}

char *xstrdup(const char *s)
{
	return xmemdup(s, strlen(s) + 1);
}

char *xstrndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *p = xmalloc(len + 1);
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

void *xmemdup(const void *p, size_t n)
{
	void *q = xmalloc(n);
	if (n)
		memcpy(q, p, n);
	return q;
}

char *xvasprintf(const char *fmt, va_list ap)
{
	char *s;
	if (vasprintf(&s, fmt, ap) < 0)
		oom(strlen(fmt));
	return s;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	va_start(ap, fmt);
	s = xvasprintf(fmt, ap);
	va_end(ap);
	return s;
}
