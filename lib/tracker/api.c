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
#include <string.h>

#include "include/memprof.h"
#include "lib/tracker/config.h"
#include "lib/tracker/control.h"
#include "lib/tracker/session.h"

/* ---- options ---- */

static int read_options(const struct memprof_options *in, struct memprof_options *o)
{
	memset(o, 0, sizeof(*o));
	if (!in)
		return 0;
	if (in->size < sizeof(*o))
		return -EINVAL;
	/* A newer header's fields we do not know: fine while the caller leaves them zero. */
	for (size_t i = sizeof(*o); i < in->size; i++)
		if (((const unsigned char *)in)[i])
			return -E2BIG;
	memcpy(o, in, sizeof(*o));
	if (o->memory_interval_ms > 3600u * 1000 || o->max_depth > MP_MAX_DEPTH_LIMIT)
		return -EINVAL;
	return 0;
}

/* What memprof_start says, over the configuration (whose destination and internals stay). */
static void apply_options(struct mp_config *c, const void *arg)
{
	const struct memprof_options *o = arg;
	c->interval_ms = o->memory_interval_ms ? o->memory_interval_ms : 10;
	c->max_depth = o->max_depth ? o->max_depth : 128;
	c->follow_fork = o->follow_fork != 0;
	c->python_frames = !o->no_python_frames;
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
