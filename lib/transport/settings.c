/* The tracker's settings: one list of keys, their bounds, their parser and encoder. */
#include <config.h>
#include "lib/transport/settings.h"

#include <stddef.h>
#include <string.h>

#include "lib/transport/ring.h"
#include "lib/util/bytes.h"

enum kind { K_PATH, K_UINT, K_SWITCH, K_RING, K_CLOCK, K_UNWIND, K_BYTES };

static const struct key {
	const char *name;
	enum kind kind;
	size_t off;
	uint32_t lo, hi, def;
} keys[MP_SETTINGS] = {
	[MP_SET_SOCKET] = { "MEMPROF_SOCKET", K_PATH, offsetof(struct mp_config, socket_path), 0, 0, 0 },
	[MP_SET_OUTPUT] = { "MEMPROF_OUTPUT", K_PATH, offsetof(struct mp_config, output), 0, 0, 0 },
	[MP_SET_FORCE] = { "MEMPROF_FORCE", K_SWITCH, offsetof(struct mp_config, force), 0, 1, 0 },
	[MP_SET_FOLLOW_FORK] = { "MEMPROF_FOLLOW_FORK", K_SWITCH, offsetof(struct mp_config, follow_fork), 0, 1, 0 },
	[MP_SET_INTERVAL_MS] = { "MEMPROF_INTERVAL_MS", K_UINT, offsetof(struct mp_config, interval_ms), 1, 3600 * 1000, 10 },
	[MP_SET_MAX_DEPTH] = { "MEMPROF_MAX_DEPTH", K_UINT, offsetof(struct mp_config, max_depth), 1, MP_MAX_DEPTH_LIMIT, 128 },
	[MP_SET_UNWIND] = { "MEMPROF_UNWIND", K_UNWIND, offsetof(struct mp_config, libunwind_only), 0, 1, 0 },
	[MP_SET_CLOCK] = { "MEMPROF_CLOCK", K_CLOCK, offsetof(struct mp_config, clock), 0, 2, MP_CFG_CLOCK_AUTO },
	/* A power of two from 4 KiB up: the smallest rings are for tests of full rings. */
	[MP_SET_RING_KB] = { "MEMPROF_RING_KB", K_RING, offsetof(struct mp_config, ring_kb), 4, 1u << 16,
			     MP_RING_SIZE_DEFAULT >> 10 },
	[MP_SET_PAUSED] = { "MEMPROF_PAUSED", K_SWITCH, offsetof(struct mp_config, paused), 0, 1, 0 },
	[MP_SET_CONTROL] = { "MEMPROF_CONTROL", K_SWITCH, offsetof(struct mp_config, control), 0, 1, 1 },
	[MP_SET_PYTHON_FRAMES] = { "MEMPROF_PYTHON_FRAMES", K_SWITCH, offsetof(struct mp_config, python_frames), 0, 1, 1 },
	/* Bytes, with k or M (0: every event recorded). */
	[MP_SET_SAMPLING_INTERVAL] = { "MEMPROF_SAMPLING_INTERVAL", K_BYTES,
				       offsetof(struct mp_config, sampling_interval), 0,
				       MP_SAMPLING_INTERVAL_MAX, 0 },
	[MP_SET_SAMPLING_SEED] = { "MEMPROF_SAMPLING_SEED", K_UINT, offsetof(struct mp_config, sampling_seed),
				   0, UINT32_MAX, 0 },
};

/* The names of the values of the settings that take words, at their numbers. */
static const char *const clocks[] = { NULL, "counter", "tsc" };
static const char *const unwinds[] = { NULL, "libunwind" };

/* A field of c, as the key's kind has it: an int or an unsigned (the same size), or a path. */
static unsigned *field(struct mp_config *c, const struct key *k)
{
	return (unsigned *)(void *)((char *)c + k->off);
}

static size_t path_size(const struct key *k)
{
	return k->off == offsetof(struct mp_config, socket_path) ? sizeof(((struct mp_config *)0)->socket_path)
								: sizeof(((struct mp_config *)0)->output);
}

void mp_settings_defaults(struct mp_config *c)
{
	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < MP_SETTINGS; i++)
		if (keys[i].kind != K_PATH)
			*field(c, &keys[i]) = keys[i].def;
}

const char *mp_settings_name(enum mp_setting k)
{
	return keys[k].name;
}

int mp_settings_bytes(const char *v, size_t len, uint64_t *out)
{
	return mp_parse_bytes(v, len, 0, out);
}

/* The index of the word v (len bytes) among words[0..n), or 0 (the default) when none. */
static unsigned word(const char *const *words, size_t n, const char *v, size_t len)
{
	for (size_t i = 1; i < n; i++)
		if (strlen(words[i]) == len && !memcmp(words[i], v, len))
			return (unsigned)i;
	return 0;
}

int mp_settings_key(const char *entry, size_t len)
{
	const char *eq = memchr(entry, '=', len);
	size_t nlen = eq ? (size_t)(eq - entry) : 0;
	for (size_t i = 0; eq && i < MP_SETTINGS; i++)
		if (strlen(keys[i].name) == nlen && !memcmp(keys[i].name, entry, nlen))
			return (int)i;
	return -1;
}

int mp_settings_set(struct mp_config *c, const char *entry, size_t len)
{
	int i = mp_settings_key(entry, len);
	const struct key *k;
	const char *v;
	size_t vlen;
	uint64_t num;
	unsigned *f;
	if (i < 0)
		return -1;
	k = &keys[i];
	f = field(c, k);
	v = entry + strlen(k->name) + 1;
	vlen = len - strlen(k->name) - 1;
	switch (k->kind) {
	case K_PATH:
		if (vlen >= path_size(k)) {
			((char *)f)[0] = '\0';
			return -2;
		}
		memcpy(f, v, vlen);
		((char *)f)[vlen] = '\0';
		break;
	case K_UINT:
	case K_RING:
		*f = mp_parse_decimal(v, vlen, &num) == 0 && num >= k->lo && num <= k->hi ? (unsigned)num : k->def;
		/* A ring's size rounds down to a power of two. */
		while (k->kind == K_RING && (*f & (*f - 1)))
			*f &= *f - 1;
		break;
	case K_SWITCH:
		*f = mp_parse_decimal(v, vlen, &num) == 0 ? num != 0 : k->def;
		break;
	case K_BYTES:
		*f = mp_settings_bytes(v, vlen, &num) == 0 && num >= k->lo && num <= k->hi ? (unsigned)num
											: k->def;
		break;
	case K_CLOCK:
		*f = word(clocks, sizeof(clocks) / sizeof(clocks[0]), v, vlen);
		break;
	case K_UNWIND:
		*f = word(unwinds, sizeof(unwinds) / sizeof(unwinds[0]), v, vlen);
		break;
	}
	return i;
}

int mp_settings_check(const char *entry, size_t len, uint32_t *lo, uint32_t *hi)
{
	int i = mp_settings_key(entry, len);
	const struct key *k;
	const char *v;
	size_t vlen;
	uint64_t num;
	if (i < 0)
		return -1;
	k = &keys[i];
	v = entry + strlen(k->name) + 1;
	vlen = len - strlen(k->name) - 1;
	*lo = k->lo;
	*hi = k->hi;
	switch (k->kind) {
	case K_PATH:
		return vlen < path_size(k) ? 0 : -2;
	case K_UINT:
	case K_SWITCH:
	case K_RING:
		return mp_parse_decimal(v, vlen, &num) == 0 && num >= k->lo && num <= k->hi ? 0 : -2;
	case K_BYTES:
		return mp_settings_bytes(v, vlen, &num) == 0 && num >= k->lo && num <= k->hi ? 0 : -2;
	case K_CLOCK:
		return word(clocks, sizeof(clocks) / sizeof(clocks[0]), v, vlen) || !vlen ? 0 : -2;
	case K_UNWIND:
		return word(unwinds, sizeof(unwinds) / sizeof(unwinds[0]), v, vlen) || !vlen ? 0 : -2;
	}
	return -2;
}

void mp_settings_encode(const struct mp_config *c,
			void (*put)(void *ctx, const char *name, const char *value), void *ctx)
{
	for (size_t i = 0; i < MP_SETTINGS; i++) {
		const struct key *k = &keys[i];
		const unsigned *f = field((struct mp_config *)c, k);
		const char *value = NULL;
		char num[24];
		switch (k->kind) {
		case K_PATH:
			value = *(const char *)f ? (const char *)f : NULL;
			break;
		case K_CLOCK:
			value = *f < sizeof(clocks) / sizeof(clocks[0]) ? clocks[*f] : NULL;
			break;
		case K_UNWIND:
			value = *f < sizeof(unwinds) / sizeof(unwinds[0]) ? unwinds[*f] : NULL;
			break;
		default:
			if (*f != k->def) {
				/* Decimal digits, from the last. */
				char *p = num + sizeof(num) - 1;
				unsigned v = *f;
				*p = '\0';
				do
					*--p = (char)('0' + v % 10);
				while (v /= 10);
				value = p;
			}
			break;
		}
		put(ctx, k->name, value);
	}
}
