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
/* xreallocarray() from old to nmemb elements, those past old zeroed (OpenBSD's recallocarray). */
void *xrecallocarray(void *p, size_t old, size_t nmemb, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
void *xmemdup(const void *p, size_t n);
/* printf into a newly allocated string. */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *xvasprintf(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/* The capacity an array of alloc elements grows to, to hold nr: doubled, at least 16. */
static inline size_t mp_alloc_nr(size_t alloc, size_t nr)
{
	size_t n = alloc < 16 ? 16 : alloc * 2;
	return n < nr ? nr : n;
}

/*
 * Grow an array so that it holds at least n elements: ALLOC_GROW(arr, n, alloc)
 * with alloc the current capacity in elements (git's idiom).
 */
#define ALLOC_GROW(x, nr, alloc)                                                   \
	do {                                                                       \
		if ((nr) > (alloc)) {                                              \
			size_t mp_new_alloc_ = mp_alloc_nr((alloc), (nr));         \
			(x) = xreallocarray((x), mp_new_alloc_, sizeof(*(x)));     \
			(alloc) = mp_new_alloc_;                                   \
		}                                                                  \
	} while (0)

/*
 * ALLOC_GROW, the elements it adds zeroed (all past the old capacity): for
 * arrays whose elements are filled field by field, where a field left out
 * must read as zero, not as whatever the memory held (MALLOC_PERTURB_ shows
 * the difference).
 */
#define ALLOC_GROW_ZERO(x, nr, alloc)                                              \
	do {                                                                       \
		if ((nr) > (alloc)) {                                              \
			size_t mp_new_alloc_ = mp_alloc_nr((alloc), (nr));         \
			(x) = xrecallocarray((x), (alloc), mp_new_alloc_,          \
					     sizeof(*(x)));                        \
			(alloc) = mp_new_alloc_;                                   \
		}                                                                  \
	} while (0)

#endif
