/* The tracker's configuration from the environment, and the environment of child programs. */
#include <config.h>

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "lib/tracker/config.h"

struct mp_config mp_cfg;

extern char **environ;

int mp_config_read(void)
{
	uint32_t seen = 0;
	int bad = 0;
	mp_settings_defaults(&mp_cfg);
	/* Not getenv(): the program may define its own (bash does). The first of a name counts. */
	for (char **e = environ; e && *e; e++) {
		int k = mp_settings_key(*e, strlen(*e));
		if (k < 0 || (seen & (1u << k)))
			continue;
		seen |= 1u << k;
		if (mp_settings_set(&mp_cfg, *e, strlen(*e)) == -2)
			bad |= 1 << k;
	}
	/* A failure leaves the tracker off, whatever mp_cfg.direct says. */
	if (mp_cfg.socket_path[0] || (bad & (1 << MP_SET_SOCKET))) {
		mp_cfg.direct = 0;
		return bad & (1 << MP_SET_SOCKET) ? -1 : 0;
	}
	if (mp_cfg.output[0] || (bad & (1 << MP_SET_OUTPUT))) {
		mp_cfg.direct = 1;
		return bad & (1 << MP_SET_OUTPUT) ? -1 : 0;
	}
	return -1;
}

/* ---- the environment of child programs ---- */

/*
 * The environment is edited in place in `environ`, never with setenv/unsetenv:
 * a program may define its own (bash does, for its variable table), and ours
 * would then call the program's before it is initialised.
 */

static void env_remove_at(char **e)
{
	do
		e[0] = e[1];
	while (*++e);
}

/* The variables the tracker reads (its settings); other MEMPROF_* variables are the user's. */
static int own_var(const char *entry)
{
	return mp_settings_key(entry, strlen(entry)) >= 0;
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

