/*
 * Numbers as settings and options write them (header-only and
 * allocation-free: the tracker's settings parse with it too).
 */
#ifndef MEMPROF_LIB_UTIL_BYTES_H
#define MEMPROF_LIB_UTIL_BYTES_H

#include <stddef.h>
#include <stdint.h>

/* A decimal number of len bytes: 0, or -1 when it is not one (or does not fit in 64 bits). */
static inline int mp_parse_decimal(const char *v, size_t len, uint64_t *out)
{
	uint64_t r = 0;
	if (!len)
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (v[i] < '0' || v[i] > '9' || r > (UINT64_MAX - 9) / 10)
			return -1;
		r = r * 10 + (uint64_t)(v[i] - '0');
	}
	*out = r;
	return 0;
}

/*
 * A number of bytes, len bytes of text: digits, then nothing, k or K (KiB),
 * M (MiB), or G (GiB) when giga is nonzero. 0 with it in *out, or -1 when
 * it is none (or does not fit in 64 bits).
 */
static inline int mp_parse_bytes(const char *v, size_t len, int giga, uint64_t *out)
{
	uint64_t mul = 1, n;
	if (len && (v[len - 1] == 'k' || v[len - 1] == 'K'))
		mul = 1ull << 10;
	else if (len && v[len - 1] == 'M')
		mul = 1ull << 20;
	else if (len && giga && v[len - 1] == 'G')
		mul = 1ull << 30;
	if (mp_parse_decimal(v, len - (mul != 1), &n) < 0 || n > UINT64_MAX / mul)
		return -1;
	*out = n * mul;
	return 0;
}

#endif
