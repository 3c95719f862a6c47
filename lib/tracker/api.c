/*
 * The in-process API (include/memprof.h, man 3 memprof): a program starts,
 * stops and snapshots captures itself, with the tracker linked in,
 * preloaded, or loaded with dlopen() (ctypes in Python). The work is
 * inproc.c's; here, the options as the caller gave them, errno, and the
 * control socket, which memprof ctl and memprof serve reach the process
 * through from the first start on.
 */
#include <config.h>

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "include/memprof.h"
#include "lib/tracker/config.h"
#include "lib/tracker/control.h"
#include "lib/tracker/session.h"

/* ---- options ---- */

/* Options given as the tracker's settings (lib/transport/settings.h), 0 being the default. */
static const struct {
	enum mp_setting key;
	size_t off;     /* of the option (an unsigned or an int) in struct memprof_options */
	int invert;     /* the option is the setting's opposite (no_python_frames) */
} settings[] = {
	{ MP_SET_INTERVAL_MS, offsetof(struct memprof_options, memory_interval_ms), 0 },
	{ MP_SET_MAX_DEPTH, offsetof(struct memprof_options, max_depth), 0 },
	{ MP_SET_FOLLOW_FORK, offsetof(struct memprof_options, follow_fork), 0 },
	{ MP_SET_PYTHON_FRAMES, offsetof(struct memprof_options, no_python_frames), 1 },
	{ MP_SET_SAMPLING_INTERVAL, offsetof(struct memprof_options, sampling_interval), 0 },
};
/* The size of the first struct memprof_options: every field before sampling_interval. */
#define OPTIONS_V1_SIZE offsetof(struct memprof_options, sampling_interval)

/*
 * The settings entry ("MEMPROF_MAX_DEPTH=64") for option i of o into buf,
 * or 0 when the option is at its default (the setting's own then).
 */
static size_t entry(const struct memprof_options *o, size_t i, char *buf, size_t cap)
{
	unsigned v = *(const unsigned *)(const void *)((const char *)o + settings[i].off);
	if (settings[i].invert)
		v = !v;
	else if (!v)
		return 0;
	return (size_t)snprintf(buf, cap, "%s=%u", mp_settings_name(settings[i].key), v);
}

static int read_options(const struct memprof_options *in, struct memprof_options *o)
{
	memset(o, 0, sizeof(*o));
	if (!in)
		return 0;
	if (in->size < OPTIONS_V1_SIZE)
		return -EINVAL;
	/* A newer header's fields we do not know: fine while the caller leaves them zero. */
	for (size_t i = sizeof(*o); i < in->size; i++)
		if (((const unsigned char *)in)[i])
			return -E2BIG;
	/* An older header's: the fields it knew (the others stay 0, their defaults). */
	memcpy(o, in, in->size < sizeof(*o) ? in->size : sizeof(*o));
	/* The bounds are the settings' (those of the environment and of memprof attach). */
	for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++) {
		char buf[64];
		uint32_t lo, hi;
		size_t n = entry(o, i, buf, sizeof(buf));
		if (n && mp_settings_check(buf, n, &lo, &hi))
			return -EINVAL;
	}
	return 0;
}

/*
 * What memprof_start says, over the configuration (whose destination and
 * internals stay): each option, or its default.
 */
static void apply_options(struct mp_config *c, const void *arg)
{
	const struct memprof_options *o = arg;
	struct mp_config d;
	mp_settings_defaults(&d);
	c->interval_ms = d.interval_ms;
	c->max_depth = d.max_depth;
	c->follow_fork = d.follow_fork;
	c->python_frames = d.python_frames;
	c->sampling_interval = d.sampling_interval;
	for (size_t i = 0; i < sizeof(settings) / sizeof(settings[0]); i++) {
		char buf[64];
		size_t n = entry(o, i, buf, sizeof(buf));
		if (n)
			mp_settings_set(c, buf, n);
	}
}

/* 0, or -1 with errno from -r. */
static int result(int r)
{
	if (r) {
		errno = -r;
		return -1;
	}
	return 0;
}

MP_EXPORT int memprof_start(const char *path, const struct memprof_options *opts)
{
	struct memprof_options o;
	int r = read_options(opts, &o);
	unsigned flags = (o.overwrite ? MP_INPROC_OVERWRITE : 0) | (o.aggregate ? MP_INPROC_AGGREGATE : 0) |
			 (o.trace_python_allocators ? MP_INPROC_PYALLOC : 0);
	if (!r)
		r = mp_inproc_start(path, flags, apply_options, &o);
	if (r)
		return result(r);
	/* memprof ctl and memprof serve reach the process from now on (unrecorded). */
	r = errno;
	mp_in_hook++;
	mp_control_start();
	mp_in_hook--;
	errno = r;
	return 0;
}

MP_EXPORT int memprof_stop(void)
{
	return result(mp_inproc_stop());
}

MP_EXPORT int memprof_snapshot(const char *path)
{
	return result(mp_inproc_snapshot(path));
}

MP_EXPORT int memprof_status(struct memprof_status *st)
{
	if (!st || st->size < sizeof(*st)) {
		errno = EINVAL;
		return -1;
	}
	return result(mp_inproc_status(st));
}

MP_EXPORT int memprof_is_recording(void)
{
	return mp_inproc_recording();
}
