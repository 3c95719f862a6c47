/*
 * Frames of an interpreted program (Python) in a capture's stacks. The
 * tracker puts a *synthetic instruction pointer* in the trace tree for each
 * interpreter frame, in a range no code address can have, and describes each
 * such ip once with a PYFRAME record (tag 0x8f, tracker to collector); the
 * collector, or the tracker itself when it writes the capture (direct mode),
 * turns the description into ordinary STRING and SYMBOL records, so readers
 * see symbolized frames like any other. Allocation-free: the tracker uses it
 * inside its hooks.
 */
#ifndef MEMPROF_LIB_FORMAT_PYFRAME_H
#define MEMPROF_LIB_FORMAT_PYFRAME_H

#include <stddef.h>
#include <stdint.h>

#include "lib/format/encode.h"

/*
 * Synthetic ips: 0xfe in the top byte, which user-space code never has (and
 * which is not the vsyscall page at 0xffffffffff600000); below it a code
 * object's number (32 bits) and the frame's offset in the code object's
 * instructions (24 bits).
 */
#define MP_PYIP_BASE 0xfe00000000000000ull
#define MP_PYIP_OFFSET_BITS 24
#define MP_PYIP_OFFSET_MAX ((1u << MP_PYIP_OFFSET_BITS) - 1)
static inline int mp_pyip_is(uint64_t ip)
{
	return (ip >> 56) == 0xfe;
}
static inline uint64_t mp_pyip(uint32_t code, uint32_t offset)
{
	return MP_PYIP_BASE | ((uint64_t)code << MP_PYIP_OFFSET_BITS) |
	       (offset > MP_PYIP_OFFSET_MAX ? MP_PYIP_OFFSET_MAX : offset);
}
static inline uint32_t mp_pyip_code(uint64_t ip)
{
	return (uint32_t)(ip >> MP_PYIP_OFFSET_BITS);
}
static inline uint32_t mp_pyip_offset(uint64_t ip)
{
	return (uint32_t)(ip & MP_PYIP_OFFSET_MAX);
}

/* Longest function name and file name a PYFRAME record carries (longer ones are cut). */
#define MP_PYFRAME_TEXT_MAX 1024
/* Room a whole PYFRAME record needs. */
#define MP_PYFRAME_MAX (MP_ENC_MAX_PREFIX + 5 * MP_VARINT_MAX + 2 * MP_PYFRAME_TEXT_MAX)

/* A PYFRAME record: the source location of the synthetic ip. */
struct mp_pyframe {
	uint64_t ip;
	const char *function, *file; /* UTF-8, not NUL-terminated */
	size_t function_len, file_len;
	uint32_t line, column;       /* 0 when unknown; the column counts from 1 */
};

/* Write f as a PYFRAME record at p (MP_PYFRAME_MAX bytes of room); returns the end. */
static inline uint8_t *mp_enc_pyframe(uint8_t *p, const struct mp_pyframe *f)
{
	uint8_t *rec = p;
	p = mp_enc_sized_begin(p, MP_TAG_PYFRAME);
	p = mp_put_uvarint(p, f->ip);
	p = mp_enc_bytes(p, f->function,
			 f->function_len < MP_PYFRAME_TEXT_MAX ? f->function_len : MP_PYFRAME_TEXT_MAX);
	p = mp_enc_bytes(p, f->file, f->file_len < MP_PYFRAME_TEXT_MAX ? f->file_len : MP_PYFRAME_TEXT_MAX);
	p = mp_put_uvarint(p, f->line);
	p = mp_put_uvarint(p, f->column);
	return mp_enc_sized_end(rec, p);
}

/* A varint from [*p, end); -1 when it runs past end or is too long. */
static inline int mp_pyframe_uvarint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	unsigned shift = 0;
	*v = 0;
	while (*p < end && shift < 64) {
		uint8_t b = *(*p)++;
		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return 0;
		shift += 7;
	}
	return -1;
}

/*
 * Parse the payload of a PYFRAME record (after tag and length) into f,
 * whose strings point into data. 0, or -1 when it is malformed. Fields
 * after the column (a later minor version's) are ignored.
 */
static inline int mp_dec_pyframe(const uint8_t *data, size_t len, struct mp_pyframe *f)
{
	const uint8_t *p = data, *end = data + len;
	uint64_t v, n;
	if (mp_pyframe_uvarint(&p, end, &f->ip) || mp_pyframe_uvarint(&p, end, &n) ||
	    n > (uint64_t)(end - p))
		return -1;
	f->function = (const char *)p;
	f->function_len = (size_t)n;
	p += n;
	if (mp_pyframe_uvarint(&p, end, &n) || n > (uint64_t)(end - p))
		return -1;
	f->file = (const char *)p;
	f->file_len = (size_t)n;
	p += n;
	if (mp_pyframe_uvarint(&p, end, &v) || v > UINT32_MAX)
		return -1;
	f->line = (uint32_t)v;
	if (mp_pyframe_uvarint(&p, end, &v) || v > UINT32_MAX)
		return -1;
	f->column = (uint32_t)v;
	return mp_pyip_is(f->ip) ? 0 : -1;
}

#endif
