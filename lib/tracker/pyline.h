/*
 * CPython's data formats the tracker reads to describe a frame, as pure
 * functions on bytes already copied out of the interpreter (no pointer into
 * it is followed here): the locations table of a code object (co_linetable,
 * Python 3.11 and later, CPython's Objects/locations.md) and the text of a
 * compact str object. Header-only so that tests/unit/test-python.c checks
 * them against tables Python itself made.
 */
#ifndef MEMPROF_LIB_TRACKER_PYLINE_H
#define MEMPROF_LIB_TRACKER_PYLINE_H

#include <stddef.h>
#include <stdint.h>

/* The locations table's own varint: 6-bit groups, bit 6 says another follows. */
static inline int mp_pyline_varint(const uint8_t **p, const uint8_t *end, uint32_t *v)
{
	unsigned shift = 0;
	*v = 0;
	while (*p < end && shift < 32) {
		uint8_t b = *(*p)++;
		*v |= (uint32_t)(b & 63) << shift;
		if (!(b & 64))
			return 0;
		shift += 6;
	}
	return -1;
}

static inline int mp_pyline_svarint(const uint8_t **p, const uint8_t *end, int32_t *v)
{
	uint32_t u;
	if (mp_pyline_varint(p, end, &u))
		return -1;
	*v = (u & 1) ? -(int32_t)(u >> 1) : (int32_t)(u >> 1);
	return 0;
}

/*
 * The source line and column (from 1; 0 when unknown) of the code unit at
 * offset `unit` of a code object whose first line is firstlineno and whose
 * co_linetable is table[0..len). An instruction without a location (in a
 * function's prologue, say) is given the function's first line. Returns 0,
 * or -1 when the table does not cover the offset or is malformed (the line
 * is then the first line, the column 0).
 */
static inline int mp_pyline_find(const uint8_t *table, size_t len, int32_t firstlineno,
				 uint32_t unit, uint32_t *line, uint32_t *column)
{
	const uint8_t *p = table, *end = table + len;
	int32_t cur = firstlineno;
	uint32_t addr = 0;
	*line = firstlineno > 0 ? (uint32_t)firstlineno : 0;
	*column = 0;
	while (p < end) {
		uint8_t b = *p++;
		unsigned code = (b >> 3) & 15, n = (b & 7) + 1;
		int32_t delta = 0;
		uint32_t col = 0, skip;
		int located = 1;
		if (!(b & 0x80))
			return -1;
		if (code == 15) {
			located = 0;
		} else if (code == 14) {
			if (mp_pyline_svarint(&p, end, &delta) || mp_pyline_varint(&p, end, &skip) ||
			    mp_pyline_varint(&p, end, &col) || mp_pyline_varint(&p, end, &skip))
				return -1;
		} else if (code == 13) {
			if (mp_pyline_svarint(&p, end, &delta))
				return -1;
		} else if (code >= 10) {
			if (end - p < 2)
				return -1;
			delta = (int32_t)code - 10;
			col = (uint32_t)p[0] + 1;
			p += 2;
		} else {
			if (p >= end)
				return -1;
			col = code * 8 + ((p[0] >> 4) & 7) + 1;
			p++;
		}
		cur += delta;
		if (unit < addr + n) {
			/* No location (a function's prologue, say): the function's first line. */
			if (located && cur > 0)
				*line = (uint32_t)cur;
			*column = located ? col : 0;
			return 0;
		}
		addr += n;
	}
	return -1;
}

/*
 * The UTF-8 text of n characters of a str object's data, stored `kind` bytes
 * per character (1: Latin-1, 2: UCS-2, 4: UCS-4), into out (cap bytes);
 * returns its length. Text that does not fit is cut at a character; an
 * invalid code point becomes U+FFFD.
 */
static inline size_t mp_pyline_utf8(const uint8_t *data, size_t n, unsigned kind, char *out,
				    size_t cap)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t c;
		if (kind == 1) {
			c = data[i];
		} else if (kind == 2) {
			uint16_t u;
			__builtin_memcpy(&u, data + 2 * i, 2);
			c = u;
		} else {
			__builtin_memcpy(&c, data + 4 * i, 4);
		}
		if ((c >= 0xd800 && c < 0xe000) || c > 0x10ffff)
			c = 0xfffd;
		if (c < 0x80) {
			if (o + 1 > cap)
				break;
			out[o++] = (char)c;
		} else if (c < 0x800) {
			if (o + 2 > cap)
				break;
			out[o++] = (char)(0xc0 | (c >> 6));
			out[o++] = (char)(0x80 | (c & 0x3f));
		} else if (c < 0x10000) {
			if (o + 3 > cap)
				break;
			out[o++] = (char)(0xe0 | (c >> 12));
			out[o++] = (char)(0x80 | ((c >> 6) & 0x3f));
			out[o++] = (char)(0x80 | (c & 0x3f));
		} else {
			if (o + 4 > cap)
				break;
			out[o++] = (char)(0xf0 | (c >> 18));
			out[o++] = (char)(0x80 | ((c >> 12) & 0x3f));
			out[o++] = (char)(0x80 | ((c >> 6) & 0x3f));
			out[o++] = (char)(0x80 | (c & 0x3f));
		}
	}
	return o;
}

#endif
