/*
 * The tracker's settings, one list of keys for both ways they travel: the
 * environment of a program memprof runs or a user preloads the tracker into
 * (MEMPROF_INTERVAL_MS=10 ..., documented in memprof(1)), and the argument
 * memprof attach hands memprof_attach() in the process it gets into (the
 * same NAME=VALUE entries, one a line). memprof encodes them
 * (mp_settings_encode), the tracker parses them (mp_settings_set), each
 * with the bounds below. Allocation-free and stdio-free: the tracker
 * compiles it in too.
 */
#ifndef MEMPROF_LIB_TRANSPORT_SETTINGS_H
#define MEMPROF_LIB_TRANSPORT_SETTINGS_H

#include <stddef.h>
#include <stdint.h>

#define MP_MAX_DEPTH_LIMIT 1024

/* What the tracker is told, and in direct mode what it writes itself. */
struct mp_config {
	int follow_fork, force, direct, libunwind_only;
	int clock;               /* MEMPROF_CLOCK: how records are ordered (enum below) */
	unsigned interval_ms, max_depth;
	unsigned ring_kb;        /* each thread's ring (MEMPROF_RING_KB) */
	int paused;              /* MEMPROF_PAUSED=1: no capture until memprof ctl PID start */
	int control;             /* the control socket (MEMPROF_CONTROL=0: none) */
	int python_frames;       /* MEMPROF_PYTHON_FRAMES=0: the interpreter's own frames */
	/*
	 * MEMPROF_SAMPLING_INTERVAL: 0 records every event; N records a sample
	 * of the allocations, one per N bytes on average (memprof-run(1)).
	 * MEMPROF_SAMPLING_SEED: the samples' generator (0: a seed of its own).
	 */
	unsigned sampling_interval, sampling_seed;
	char socket_path[108];   /* the collector's socket (a sockaddr_un's sun_path) */
	char output[4096];       /* direct mode: the capture the tracker writes */
};
enum { MP_CFG_CLOCK_AUTO = 0, MP_CFG_CLOCK_COUNTER, MP_CFG_CLOCK_TSC };

/* The keys, in the order they are encoded. */
enum mp_setting {
	MP_SET_SOCKET, MP_SET_OUTPUT, MP_SET_FORCE, MP_SET_FOLLOW_FORK, MP_SET_INTERVAL_MS,
	MP_SET_MAX_DEPTH, MP_SET_UNWIND, MP_SET_CLOCK, MP_SET_RING_KB, MP_SET_PAUSED,
	MP_SET_CONTROL, MP_SET_PYTHON_FRAMES, MP_SET_SAMPLING_INTERVAL, MP_SET_SAMPLING_SEED,
	MP_SETTINGS
};
/* The largest sampling interval: 1 GiB. */
#define MP_SAMPLING_INTERVAL_MAX (1u << 30)

/* Every setting at its default (no socket, no output). */
void mp_settings_defaults(struct mp_config *c);
/* The name of setting k ("MEMPROF_INTERVAL_MS"). */
const char *mp_settings_name(enum mp_setting k);
/* The setting an entry "NAME=VALUE" (len bytes) sets, or -1 when NAME is none. */
int mp_settings_key(const char *entry, size_t len);
/*
 * Apply one entry, "NAME=VALUE" in its first len bytes. Returns the
 * setting (>= 0) when NAME is one; -1 when it is not (the entry is
 * ignored: a newer memprof may know more); -2 when NAME is a path setting
 * and VALUE does not fit (the path is left empty). A value out of its
 * bounds, or not a number where one is expected, gives the default.
 */
int mp_settings_set(struct mp_config *c, const char *entry, size_t len);
/*
 * A number of bytes, len bytes of text: digits, then nothing, k or K
 * (KiB) or M (MiB). 0 with it in *out, or -1 when it is none (or does not
 * fit in 64 bits).
 */
int mp_settings_bytes(const char *v, size_t len, uint64_t *out);
/*
 * Whether an entry "NAME=VALUE" (len bytes) is one mp_settings_set() takes
 * as it is, for those that must refuse what the environment would turn
 * into a default (memprof_start(), memprof ctl's and memprof serve's
 * start): 0; -1 when NAME is no setting; -2 when VALUE is not one of
 * NAME's (a number or a switch out of [*lo, *hi], which are set for every
 * setting; a path too long; a word it does not know).
 */
int mp_settings_check(const char *entry, size_t len, uint32_t *lo, uint32_t *hi);
/*
 * Each setting of c as text, in key order: put(ctx, name, value), value
 * NULL when the setting is at its default (or an empty path), which the
 * tracker then takes by itself. Numbers in decimal, switches 0 or 1.
 */
void mp_settings_encode(const struct mp_config *c,
			void (*put)(void *ctx, const char *name, const char *value), void *ctx);

#endif
