/* A tracking session: the capture, the collector, the tracker's settings and the one event loop. */
#include <config.h>
#include "lib/process/track.h"

#include <stdlib.h>
#include <string.h>

#include "lib/transport/merge.h"

extern char **environ;

void mp_track_settings(const struct mp_track_opts *o, const char *socket, bool paused,
		       struct mp_config *c)
{
	mp_settings_defaults(c);
	for (char **e = environ; e && *e; e++)
		if (!strncmp(*e, "MEMPROF_", 8))
			mp_settings_set(c, *e, strlen(*e));
	c->socket_path[0] = c->output[0] = '\0';
	if (socket && strlen(socket) < sizeof(c->socket_path))
		strcpy(c->socket_path, socket);
	c->interval_ms = o->interval_ms;
	c->max_depth = o->max_depth;
	c->follow_fork = o->follow_fork;
	c->python_frames = o->python_frames;
	c->paused = paused;
	/* Records keyed by the time-stamp counter need a barrier only the collector can ask for. */
	if (!mp_merge_can_fence())
		c->clock = MP_CFG_CLOCK_COUNTER;
}

static void put_env(void *ctx, const char *name, const char *value)
{
	(void)ctx;
	if (value)
		setenv(name, value, 1);
	else
		unsetenv(name);
}

void mp_track_setenv(const struct mp_config *c)
{
	mp_settings_encode(c, put_env, NULL);
}

static void put_line(void *ctx, const char *name, const char *value)
{
	if (value)
		strbuf_addf(ctx, "%s=%s\n", name, value);
}

void mp_track_attach_arg(const struct mp_config *c, struct strbuf *arg)
{
	mp_settings_encode(c, put_line, arg);
}
