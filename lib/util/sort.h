/*
 * Sorting arrays that may be empty. C's qsort() wants a valid pointer even
 * for no elements, and an empty array here is often NULL (never allocated):
 * qsort(NULL, 0, ...) is undefined behaviour, harmless with glibc but a
 * sanitizer report. lib/ and cmd/ sort with these (tools/layout.py checks).
 */
#ifndef MEMPROF_LIB_UTIL_SORT_H
#define MEMPROF_LIB_UTIL_SORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

static inline void mp_qsort(void *base, size_t n, size_t size,
			    int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

static inline void mp_qsort_r(void *base, size_t n, size_t size,
			      int (*cmp)(const void *, const void *, void *), void *ctx)
{
	if (n > 1)
		qsort_r(base, n, size, cmp, ctx);
}

/* For mp_qsort() of uint64_t: the largest first. */
static inline int mp_cmp_u64_desc(const void *x, const void *y)
{
	uint64_t p = *(const uint64_t *)x, q = *(const uint64_t *)y;
	return p > q ? -1 : p < q;
}

#endif
