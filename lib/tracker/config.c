/* The tracker's configuration from the environment, and the environment of child programs. */
#include <config.h>

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "lib/tracker/config.h"
#include "lib/transport/ring.h"

struct mp_config mp_cfg;

/* An integer setting in [lo, hi], else its default (checked before narrowing). */
static unsigned env_in(const char *name, unsigned def, uint64_t lo, uint64_t hi)
{
	uint64_t v = mp_env_u64(name, def);
	return v < lo || v > hi ? def : (unsigned)v;
}

/* A path setting into dst; -1 when it does not fit. */
static int env_path(char *dst, size_t size, const char *value)
{
	if (strlen(value) >= size)
		return -1;
	strcpy(dst, value);
	return 0;
}

int mp_config_read(void)
{
	const char *sock = mp_getenv("MEMPROF_SOCKET"), *out = mp_getenv("MEMPROF_OUTPUT");
	const char *unwind = mp_getenv("MEMPROF_UNWIND"), *clock = mp_getenv("MEMPROF_CLOCK");
	mp_cfg.interval_ms = env_in("MEMPROF_INTERVAL_MS", 10, 1, 3600 * 1000);
	mp_cfg.max_depth = env_in("MEMPROF_MAX_DEPTH", 128, 1, MP_MAX_DEPTH_LIMIT);
	mp_cfg.follow_fork = mp_env_u64("MEMPROF_FOLLOW_FORK", 0) != 0;
	mp_cfg.paused = mp_env_u64("MEMPROF_PAUSED", 0) != 0;
	mp_cfg.control = mp_env_u64("MEMPROF_CONTROL", 1) != 0;
	mp_cfg.force = mp_env_u64("MEMPROF_FORCE", 0) != 0;
	mp_cfg.libunwind_only = unwind && !strcmp(unwind, "libunwind");
	mp_cfg.clock = !clock ? MP_CFG_CLOCK_AUTO
		       : !strcmp(clock, "counter") ? MP_CFG_CLOCK_COUNTER
		       : !strcmp(clock, "tsc") ? MP_CFG_CLOCK_TSC : MP_CFG_CLOCK_AUTO;
	/* A power of two from 4 KiB up: the smallest rings are for tests of full rings. */
	mp_cfg.ring_kb = env_in("MEMPROF_RING_KB", MP_RING_SIZE_DEFAULT >> 10, 4, 1u << 16);
	while (mp_cfg.ring_kb & (mp_cfg.ring_kb - 1))
		mp_cfg.ring_kb &= mp_cfg.ring_kb - 1;
	/* A failure leaves the tracker off, whatever mp_cfg.direct says. */
	if (sock && *sock) {
		mp_cfg.direct = 0;
		return env_path(mp_cfg.socket_path, sizeof(mp_cfg.socket_path), sock);
	}
	if (out && *out) {
		mp_cfg.direct = 1;
		return env_path(mp_cfg.output, sizeof(mp_cfg.output), out);
	}
	return -1;
}

/* ---- the environment of child programs ---- */

/*
 * The environment is edited in place in `environ`, never with setenv/unsetenv:
 * a program may define its own (bash does, for its variable table), and ours
 * would then call the program's before it is initialised.
 */
extern char **environ;

static void env_remove_at(char **e)
{
	do
		e[0] = e[1];
	while (*++e);
}

/* The variables the tracker reads; other MEMPROF_* variables are the user's. */
static const char *const own_vars[] = {
	"MEMPROF_SOCKET=", "MEMPROF_OUTPUT=", "MEMPROF_FORCE=", "MEMPROF_FOLLOW_FORK=",
	"MEMPROF_INTERVAL_MS=", "MEMPROF_MAX_DEPTH=", "MEMPROF_UNWIND=",
	"MEMPROF_CLOCK=", "MEMPROF_RING_KB=", "MEMPROF_PAUSED=", "MEMPROF_CONTROL=",
};

static int own_var(const char *entry)
{
	for (size_t i = 0; i < sizeof(own_vars) / sizeof(own_vars[0]); i++)
		if (!strncmp(entry, own_vars[i], strlen(own_vars[i])))
			return 1;
	return 0;
}

/* Remove our own library from LD_PRELOAD and our variables, unless children are followed. */
void mp_config_clean_environment(void)
{
	static char value[8192] = "LD_PRELOAD=";
	Dl_info info;
	char **e;
	if (mp_cfg.follow_fork || !environ || !dladdr((void *)&mp_config_clean_environment, &info) ||
	    !info.dli_fname)
		return;
	for (e = environ; *e;) {
		if (own_var(*e)) {
			env_remove_at(e);
			continue;
		}
		if (!strncmp(*e, "LD_PRELOAD=", 11)) {
			const char *s = *e + 11;
			size_t n = 11, ourlen = strlen(info.dli_fname);
			while (*s) {
				size_t len = strcspn(s, ": ");
				const char *base = s + len;
				int ours;
				while (base > s && base[-1] != '/')
					base--;
				ours = (len == ourlen && !strncmp(s, info.dli_fname, len)) ||
				       ((size_t)(s + len - base) == 13 && !strncmp(base, "libmemprof.so", 13));
				if (!ours && len && n + len + 2 < sizeof(value)) {
					if (n > 11)
						value[n++] = ':';
					memcpy(value + n, s, len);
					n += len;
				}
				s += len;
				while (*s == ':' || *s == ' ')
					s++;
			}
			value[n] = '\0';
			if (n == 11) {
				env_remove_at(e);
				continue;
			}
			*e = value;
		}
		e++;
	}
}

