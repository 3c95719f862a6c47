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

/* What memprof attach asks for (memprof_attach's argument). */
struct mp_attach_cfg {
	char socket_path[108];
	unsigned interval_ms, max_depth, ring_kb;
	int follow_fork, libunwind_only, clock, no_python_frames;
};

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

/* Start a stream to the collector of `memprof attach`; 0 or -errno (-EALREADY: tracked). */
static int attach_start(const struct mp_attach_cfg *ac)
{
	if (mp_state == MP_STATE_ON)
		return -EALREADY;
	if (mp_state == MP_STATE_INIT)
		mp_init_stage1();
	if (!mp_real.malloc || mp_setup())
		return -ENOMEM;
	if (strlen(ac->socket_path) >= sizeof(mp_cfg.socket_path))
		return -ENAMETOOLONG;
	memset(mp_cfg.socket_path, 0, sizeof(mp_cfg.socket_path));
	strcpy(mp_cfg.socket_path, ac->socket_path);
	mp_cfg.direct = 0;
	mp_cfg.interval_ms = ac->interval_ms ? ac->interval_ms : 10;
	mp_cfg.max_depth = ac->max_depth && ac->max_depth <= MP_MAX_DEPTH_LIMIT ? ac->max_depth : 128;
	mp_cfg.follow_fork = ac->follow_fork;
	mp_cfg.python_frames = !ac->no_python_frames;
	mp_py_setup();
	mp_cfg.libunwind_only = ac->libunwind_only;
	mp_cfg.clock = ac->clock;
	mp_cfg.ring_kb = ac->ring_kb >= 4 && ac->ring_kb <= (1u << 16) &&
				 !(ac->ring_kb & (ac->ring_kb - 1)) ? ac->ring_kb : MP_RING_SIZE_DEFAULT >> 10;
	mp_register_handlers();
	return mp_session_start(MP_MODE_ATTACH, 0, &attach_ops, mp_session_baseline);
}

/* "key=value" lines; unknown keys are ignored so newer collectors can add some. */
static int parse_config(const char *arg, struct mp_attach_cfg *c)
{
	memset(c, 0, sizeof(*c));
	while (arg && *arg) {
		const char *eol = strchr(arg, '\n'), *eq = strchr(arg, '=');
		size_t len = eol ? (size_t)(eol - arg) : strlen(arg);
		if (eq && eq < arg + len) {
			size_t klen = (size_t)(eq - arg), vlen = len - klen - 1;
			const char *v = eq + 1;
			uint64_t num = 0;
			for (size_t i = 0; i < vlen && v[i] >= '0' && v[i] <= '9'; i++)
				num = num * 10 + (uint64_t)(v[i] - '0');
			if (klen == 6 && !strncmp(arg, "socket", 6)) {
				if (vlen >= sizeof(c->socket_path))
					return -ENAMETOOLONG;
				memcpy(c->socket_path, v, vlen);
				c->socket_path[vlen] = '\0';
			} else if (klen == 8 && !strncmp(arg, "interval", 8)) {
				c->interval_ms = (unsigned)num;
			} else if (klen == 5 && !strncmp(arg, "depth", 5)) {
				c->max_depth = (unsigned)num;
			} else if (klen == 6 && !strncmp(arg, "follow", 6)) {
				c->follow_fork = num != 0;
			} else if (klen == 6 && !strncmp(arg, "unwind", 6)) {
				c->libunwind_only = vlen == 9 && !strncmp(v, "libunwind", 9);
			} else if (klen == 5 && !strncmp(arg, "clock", 5)) {
				c->clock = vlen == 7 && !strncmp(v, "counter", 7) ? MP_CFG_CLOCK_COUNTER
					   : vlen == 3 && !strncmp(v, "tsc", 3)   ? MP_CFG_CLOCK_TSC
										 : MP_CFG_CLOCK_AUTO;
			} else if (klen == 7 && !strncmp(arg, "ring_kb", 7)) {
				c->ring_kb = (unsigned)num;
			} else if (klen == 6 && !strncmp(arg, "python", 6)) {
				c->no_python_frames = vlen == 1 && v[0] == '0';
			}
		}
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
	struct mp_attach_cfg c;
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
