/* Allocation wrappers that die on out-of-memory, so callers never check for NULL. */
#ifndef MEMPROF_LIB_UTIL_XALLOC_H
#define MEMPROF_LIB_UTIL_XALLOC_H

#include <stdarg.h>
#include <stddef.h>

void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
/*
 * As xcalloc(), for a big table looked up at random: its pages are asked to
 * be huge ones (madvise(MADV_HUGEPAGE)), which spares a TLB miss per lookup.
 */
void *xcalloc_table(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
/* realloc to nmemb * size bytes, dying on multiplication overflow. */
void *xreallocarray(void *p, size_t nmemb, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
void *xmemdup(const void *p, size_t n);
/* printf into a newly allocated string. */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *xvasprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/*
 * Grow an array so that it holds at least n elements: ALLOC_GROW(arr, n, alloc)
 * with alloc the current capacity in elements (git's idiom).
 */
#define ALLOC_GROW(x, nr, alloc)                                                   \
	do {                                                                       \
		if ((nr) > (alloc)) {                                              \
			size_t mp_new_alloc_ = (alloc) < 16 ? 16 : (alloc) * 2;    \
			if (mp_new_alloc_ < (nr))                                  \
				mp_new_alloc_ = (nr);                              \
			(x) = xreallocarray((x), mp_new_alloc_, sizeof(*(x))); \
			(alloc) = mp_new_alloc_;                                   \
		}                                                                  \
	} while (0)

#endif
