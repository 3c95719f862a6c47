/*
 * Unit tests for lib/transport/settings: the tracker's settings, one list of
 * keys whether they come in the environment or to memprof_attach(): each
 * bound, the defaults out of bounds, names that are not settings, paths
 * that do not fit, and what memprof encodes reads back the same.
 */
#include <config.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/transport/ring.h"
#include "lib/transport/settings.h"
#include "lib/util/bytes.h"

static int set(struct mp_config *c, const char *entry)
{
	return mp_settings_set(c, entry, strlen(entry));
}

/* Numbers of bytes (lib/util/bytes.h): the settings' (k, K, M) and the cache's (G too). */
static void test_bytes(void **state)
{
	uint64_t v = 7;
	(void)state;
	assert_int_equal(mp_settings_bytes("123", 3, &v), 0);
	assert_int_equal(v, 123);
	assert_int_equal(mp_settings_bytes("4k", 2, &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(mp_settings_bytes("4K", 2, &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(mp_settings_bytes("3M", 2, &v), 0);
	assert_int_equal(v, 3u << 20);
	v = 7;
	assert_int_equal(mp_settings_bytes("1G", 2, &v), -1);
	assert_int_equal(mp_settings_bytes("", 0, &v), -1);
	assert_int_equal(mp_settings_bytes("k", 1, &v), -1);
	assert_int_equal(mp_settings_bytes("1m", 2, &v), -1);
	assert_int_equal(mp_settings_bytes("-1", 2, &v), -1);
	assert_int_equal(mp_settings_bytes("18446744073709551616", 20, &v), -1);
	assert_int_equal(mp_settings_bytes("18014398509481984k", 18, &v), -1);
	assert_int_equal(v, 7);
	assert_int_equal(mp_parse_bytes("1G", 2, 1, &v), 0);
	assert_int_equal(v, 1ull << 30);
	assert_int_equal(mp_parse_bytes("17179869184G", 12, 1, &v), -1);
	assert_int_equal(mp_parse_decimal("18446744073709551609", 20, &v), 0);
	assert_int_equal(v, UINT64_MAX - 6);
}

static void test_defaults(void **state)
{
	struct mp_config c;
	(void)state;
	mp_settings_defaults(&c);
	assert_int_equal(c.interval_ms, 10);
	assert_int_equal(c.max_depth, 128);
	assert_int_equal(c.ring_kb, MP_RING_SIZE_DEFAULT >> 10);
	assert_int_equal(c.control, 1);
	assert_int_equal(c.python_frames, 1);
	assert_int_equal(c.follow_fork, 0);
	assert_int_equal(c.paused, 0);
	assert_int_equal(c.clock, MP_CFG_CLOCK_AUTO);
	assert_string_equal(c.socket_path, "");
	assert_string_equal(c.output, "");
}

/* Each number at its bounds is kept; one past them, or no number, gives the default. */
static void test_bounds(void **state)
{
	static const struct {
		const char *entry;
		unsigned want;
		size_t off;
	} cases[] = {
		{ "MEMPROF_INTERVAL_MS=1", 1, offsetof(struct mp_config, interval_ms) },
		{ "MEMPROF_INTERVAL_MS=3600000", 3600000, offsetof(struct mp_config, interval_ms) },
		{ "MEMPROF_INTERVAL_MS=0", 10, offsetof(struct mp_config, interval_ms) },
		{ "MEMPROF_INTERVAL_MS=3600001", 10, offsetof(struct mp_config, interval_ms) },
		{ "MEMPROF_INTERVAL_MS=99999999999999999999999", 10, offsetof(struct mp_config, interval_ms) },
		{ "MEMPROF_INTERVAL_MS=-5", 10, offsetof(struct mp_config, interval_ms) },
		{ "MEMPROF_INTERVAL_MS=5ms", 10, offsetof(struct mp_config, interval_ms) },
		{ "MEMPROF_INTERVAL_MS=", 10, offsetof(struct mp_config, interval_ms) },
		{ "MEMPROF_MAX_DEPTH=1024", 1024, offsetof(struct mp_config, max_depth) },
		{ "MEMPROF_MAX_DEPTH=1025", 128, offsetof(struct mp_config, max_depth) },
		{ "MEMPROF_MAX_DEPTH=1", 1, offsetof(struct mp_config, max_depth) },
		{ "MEMPROF_RING_KB=4", 4, offsetof(struct mp_config, ring_kb) },
		{ "MEMPROF_RING_KB=65536", 65536, offsetof(struct mp_config, ring_kb) },
		{ "MEMPROF_RING_KB=5000", 4096, offsetof(struct mp_config, ring_kb) },
		{ "MEMPROF_RING_KB=3", MP_RING_SIZE_DEFAULT >> 10, offsetof(struct mp_config, ring_kb) },
		{ "MEMPROF_RING_KB=65537", MP_RING_SIZE_DEFAULT >> 10, offsetof(struct mp_config, ring_kb) },
		{ "MEMPROF_FOLLOW_FORK=1", 1, offsetof(struct mp_config, follow_fork) },
		{ "MEMPROF_FOLLOW_FORK=7", 1, offsetof(struct mp_config, follow_fork) },
		{ "MEMPROF_FOLLOW_FORK=yes", 0, offsetof(struct mp_config, follow_fork) },
		{ "MEMPROF_CONTROL=0", 0, offsetof(struct mp_config, control) },
		{ "MEMPROF_CONTROL=no", 1, offsetof(struct mp_config, control) },
		{ "MEMPROF_PYTHON_FRAMES=0", 0, offsetof(struct mp_config, python_frames) },
		{ "MEMPROF_PAUSED=1", 1, offsetof(struct mp_config, paused) },
		{ "MEMPROF_FORCE=1", 1, offsetof(struct mp_config, force) },
		{ "MEMPROF_CLOCK=counter", MP_CFG_CLOCK_COUNTER, offsetof(struct mp_config, clock) },
		{ "MEMPROF_CLOCK=tsc", MP_CFG_CLOCK_TSC, offsetof(struct mp_config, clock) },
		{ "MEMPROF_CLOCK=sundial", MP_CFG_CLOCK_AUTO, offsetof(struct mp_config, clock) },
		{ "MEMPROF_UNWIND=libunwind", 1, offsetof(struct mp_config, libunwind_only) },
		{ "MEMPROF_UNWIND=fast", 0, offsetof(struct mp_config, libunwind_only) },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct mp_config c;
		unsigned got;
		mp_settings_defaults(&c);
		assert_true(set(&c, cases[i].entry) >= 0);
		memcpy(&got, (char *)&c + cases[i].off, sizeof(got));
		if (got != cases[i].want)
			fail_msg("%s: %u, expected %u", cases[i].entry, got, cases[i].want);
	}
}

/* Names that are not settings leave everything as it was; only the part before '=' is the name. */
static void test_unknown_keys(void **state)
{
	static const char *const entries[] = {
		"MEMPROF_INTERVAL=5", "MEMPROF_INTERVAL_MSX=5", "interval=5", "MEMPROF_LIBDIR=/x",
		"MEMPROF_MAX_DEPTH", "", "=5", "memprof_max_depth=5",
	};
	struct mp_config c, d;
	(void)state;
	mp_settings_defaults(&c);
	mp_settings_defaults(&d);
	for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++) {
		assert_int_equal(set(&c, entries[i]), -1);
		assert_int_equal(mp_settings_key(entries[i], strlen(entries[i])), -1);
	}
	assert_memory_equal(&c, &d, sizeof(c));
	/* A line of memprof_attach()'s argument: its length, not its end, bounds it. */
	assert_int_equal(mp_settings_set(&c, "MEMPROF_MAX_DEPTH=77\nMEMPROF_PAUSED=1", 20),
			 MP_SET_MAX_DEPTH);
	assert_int_equal(c.max_depth, 77);
	assert_int_equal(c.paused, 0);
}

/* A path that does not fit is refused, and left empty. */
static void test_paths(void **state)
{
	struct mp_config c;
	char entry[200];
	(void)state;
	mp_settings_defaults(&c);
	assert_int_equal(set(&c, "MEMPROF_SOCKET=/tmp/x/stream"), MP_SET_SOCKET);
	assert_string_equal(c.socket_path, "/tmp/x/stream");
	snprintf(entry, sizeof(entry), "MEMPROF_SOCKET=/%0107d", 0);
	assert_int_equal(set(&c, entry), -2);
	assert_string_equal(c.socket_path, "");
	snprintf(entry, sizeof(entry), "MEMPROF_SOCKET=/%0106d", 0);
	assert_int_equal(set(&c, entry), MP_SET_SOCKET);
	assert_int_equal(strlen(c.socket_path), 107);
	assert_int_equal(set(&c, "MEMPROF_OUTPUT=o.%p.bin"), MP_SET_OUTPUT);
	assert_string_equal(c.output, "o.%p.bin");
}

struct encoded {
	char lines[1024];
	size_t n, unset;
};

static void put(void *ctx, const char *name, const char *value)
{
	struct encoded *e = ctx;
	if (!value) {
		e->unset++;
		return;
	}
	e->n += (size_t)snprintf(e->lines + e->n, sizeof(e->lines) - e->n, "%s=%s\n", name, value);
}

/* What memprof encodes is what the tracker reads; defaults are left out. */
/*
 * What mp_settings_check() accepts is what mp_settings_set() keeps: a value
 * out of bounds or of the wrong kind is refused with the bounds, where the
 * environment would take the default.
 */
static void test_check(void **state)
{
	static const struct {
		const char *entry;
		int want;
		uint32_t lo, hi;
	} cases[] = {
		{ "MEMPROF_INTERVAL_MS=1", 0, 1, 3600000 },
		{ "MEMPROF_INTERVAL_MS=3600000", 0, 1, 3600000 },
		{ "MEMPROF_INTERVAL_MS=0", -2, 1, 3600000 },
		{ "MEMPROF_INTERVAL_MS=3600001", -2, 1, 3600000 },
		{ "MEMPROF_INTERVAL_MS=5ms", -2, 1, 3600000 },
		{ "MEMPROF_INTERVAL_MS=", -2, 1, 3600000 },
		{ "MEMPROF_MAX_DEPTH=1024", 0, 1, 1024 },
		{ "MEMPROF_MAX_DEPTH=1025", -2, 1, 1024 },
		{ "MEMPROF_FOLLOW_FORK=1", 0, 0, 1 },
		{ "MEMPROF_FOLLOW_FORK=2", -2, 0, 1 },
		{ "MEMPROF_PYTHON_FRAMES=0", 0, 0, 1 },
		{ "MEMPROF_CLOCK=tsc", 0, 0, 2 },
		{ "MEMPROF_CLOCK=sundial", -2, 0, 2 },
		{ "MEMPROF_NOTHING=1", -1, 7, 7 },
		{ "MEMPROF_INTERVAL_MS", -1, 7, 7 },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint32_t lo = 7, hi = 7;
		struct mp_config c;
		int r = mp_settings_check(cases[i].entry, strlen(cases[i].entry), &lo, &hi);
		if (r != cases[i].want || lo != cases[i].lo || hi != cases[i].hi)
			fail_msg("%s: %d [%u, %u]", cases[i].entry, r, lo, hi);
		/* Accepted: set as it is, not to the default (the defaults differ from these). */
		mp_settings_defaults(&c);
		if (r == 0 && strstr(cases[i].entry, "INTERVAL_MS=1"))
			assert_int_equal((set(&c, cases[i].entry), c.interval_ms), 1);
	}
}

static void test_round_trip(void **state)
{
	struct mp_config c, back;
	struct encoded e = { .n = 0 };
	char *line;
	(void)state;
	mp_settings_defaults(&c);
	mp_settings_encode(&c, put, &e);
	assert_int_equal(e.n, 0);
	assert_int_equal(e.unset, MP_SETTINGS);

	strcpy(c.socket_path, "/tmp/memprof-attach-1/stream");
	c.interval_ms = 250;
	c.max_depth = 1024;
	c.follow_fork = 1;
	c.python_frames = 0;
	c.clock = MP_CFG_CLOCK_COUNTER;
	c.libunwind_only = 1;
	c.ring_kb = 64;
	e.n = e.unset = 0;
	mp_settings_encode(&c, put, &e);
	assert_string_equal(e.lines, "MEMPROF_SOCKET=/tmp/memprof-attach-1/stream\n"
				     "MEMPROF_FOLLOW_FORK=1\n"
				     "MEMPROF_INTERVAL_MS=250\n"
				     "MEMPROF_MAX_DEPTH=1024\n"
				     "MEMPROF_UNWIND=libunwind\n"
				     "MEMPROF_CLOCK=counter\n"
				     "MEMPROF_RING_KB=64\n"
				     "MEMPROF_PYTHON_FRAMES=0\n");
	mp_settings_defaults(&back);
	for (line = strtok(e.lines, "\n"); line; line = strtok(NULL, "\n"))
		assert_true(set(&back, line) >= 0);
	assert_memory_equal(&c, &back, sizeof(c));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bytes),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_unknown_keys),
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
