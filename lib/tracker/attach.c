/*
 * Attaching to a running process: `memprof attach` injects libmemprof.so with
 * dlopen and calls memprof_attach(config), which starts a stream to its
 * collector and patches the GOT slots of every loaded module (got.c); modules
 * loaded later are patched at the next tick. Detaching puts every slot back;
 * the library stays loaded, its hooks inert, because another thread may still
 * be about to call one of them.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/tracker/config.h"
#include "lib/tracker/control.h"
#include "lib/tracker/got.h"
#include "lib/tracker/lifecycle.h"
#include "lib/tracker/python.h"
#include "lib/tracker/session.h"
#include "lib/tracker/timer.h"
#include "lib/tracker/stream.h"
#include "lib/tracker/threads.h"

/* Stop tracking an attached process: GOT restored, hooks inert, capture finished, memprof ctl gone. */
static void attach_stop(void)
{
	mp_session_stop(mp_got_unpatch);
	mp_control_stop();
}

static void attach_modules_added(void)
{
	mp_got_patch();
}

/* The collector of `memprof attach` asks for the end with one byte on the stream's socket. */
static const struct mp_timer_ops attach_ops = { mp_stream_end_asked, attach_modules_added, attach_stop };

/* Start a stream to the collector of `memprof attach`, as ac says; 0 or -errno (-EALREADY: tracked). */
static int attach_start(const struct mp_config *ac)
{
	if (mp_state == MP_STATE_ON)
		return -EALREADY;
	if (mp_state == MP_STATE_INIT)
		mp_init_stage1();
	if (!mp_real.malloc || mp_setup())
		return -ENOMEM;
	mp_cfg = *ac;
	mp_cfg.direct = 0;
	mp_py_setup();
	mp_register_handlers();
	return mp_session_start(MP_MODE_ATTACH, 0, &attach_ops, mp_session_baseline);
}

/*
 * The settings, as in the environment (lib/transport/settings.h), one
 * "NAME=VALUE" a line; names we do not know are ignored, so a newer memprof
 * can add some. The socket must be there.
 */
static int parse_config(const char *arg, struct mp_config *c)
{
	mp_settings_defaults(c);
	while (arg && *arg) {
		const char *eol = strchr(arg, '\n');
		size_t len = eol ? (size_t)(eol - arg) : strlen(arg);
		if (mp_settings_set(c, arg, len) == -2 && mp_settings_key(arg, len) == MP_SET_SOCKET)
			return -ENAMETOOLONG;
		arg = eol ? eol + 1 : NULL;
	}
	return c->socket_path[0] ? 0 : -EINVAL;
}

/*
 * The entry point `memprof attach` calls in the target, on a thread the
 * injector stopped at a safe point. Returns 0, or a negative errno:
 * -EALREADY when the process is already tracked (memprof run, or an attach
 * that is still on), -ECONNREFUSED when the collector cannot be reached.
 */
MP_EXPORT long memprof_attach(const char *arg);
MP_EXPORT long memprof_attach(const char *arg)
{
	static struct mp_config c; /* (its paths are large for the stack of a thread we stopped) */
	int saved = errno, r;
	mp_in_hook++;
	r = parse_config(arg, &c);
	if (!r)
		r = attach_start(&c);
	if (!r) {
		mp_got_patch();
		/* memprof ctl PID snapshot|status, while it records (no word when it cannot). */
		mp_control_start();
	}
	mp_in_hook--;
	errno = saved;
	return r;
}
