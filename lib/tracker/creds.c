/*
 * Credentials. glibc makes every thread of a process repeat a set*id or
 * setgroups call (its SIGSETXID broadcast: POSIX wants credentials per
 * process, Linux keeps them per thread) and aborts the process when the
 * threads do not all succeed. Capabilities are per thread too, so a program
 * that keeps them in its own thread only (prctl(PR_SET_KEEPCAPS) and
 * capset(), as setpriv(1) and capsh(1) do before dropping to another user)
 * would see the calls fail in the tracker's threads (the timer, the control
 * socket's), which have no such capabilities, and be killed. The tracker's
 * threads therefore leave while the program changes its credentials (each is
 * joined: gone from the thread list glibc signals) and come back after, with
 * the new credentials.
 */
#define _GNU_SOURCE
#include <config.h>

#include <errno.h>
#include <grp.h>
#include <unistd.h>

#include "lib/tracker/control.h"
#include "lib/tracker/creds.h"
#include "lib/tracker/timer.h"

static int park_lock;

void mp_creds_forked(void)
{
	park_lock = 0;
}

/* Returns the thread's cancel state, for unpark: parking joins our threads. */
static int park(void)
{
	int cs;
	mp_in_hook++; /* ending and starting our threads is not the program's doing */
	cs = mp_cancel_off();
	mp_lock(&park_lock);
	mp_control_park(); /* first: a start it is answering may start a timer */
	mp_timer_park();
	return cs;
}

static void unpark(int cs)
{
	mp_timer_unpark();
	mp_control_unpark();
	mp_unlock(&park_lock);
	mp_cancel_restore(cs);
	mp_in_hook--;
}

/* The real function, looked up once (after ours: the C library's). */
#define WRAP(ret, name, params, args)                                                          \
	MP_EXPORT ret name params                                                              \
	{                                                                                      \
		static ret(*real) params;                                                      \
		ret ret_;                                                                      \
		int errno_, cs_;                                                               \
		if (!real) {                                                                   \
			mp_in_hook++;                                                          \
			real = (ret(*) params)mp_next_symbol(#name);                            \
			mp_in_hook--;                                                          \
			if (!real) {                                                           \
				errno = ENOSYS;                                                \
				return -1;                                                     \
			}                                                                      \
		}                                                                              \
		cs_ = park();                                                                  \
		ret_ = real args;                                                              \
		errno_ = errno;                                                                \
		unpark(cs_);                                                                   \
		errno = errno_;                                                                \
		return ret_;                                                                   \
	}                                                                                      \
	extern __typeof__(name) mp_hook_##name __attribute__((alias(#name), visibility("hidden")));

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpragmas"
#pragma GCC diagnostic ignored "-Wunknown-warning-option" /* clang has no -Wmissing-attributes */
#pragma GCC diagnostic ignored "-Wmissing-attributes"
WRAP(int, setuid, (uid_t uid), (uid))
WRAP(int, setgid, (gid_t gid), (gid))
WRAP(int, seteuid, (uid_t uid), (uid))
WRAP(int, setegid, (gid_t gid), (gid))
WRAP(int, setreuid, (uid_t r, uid_t e), (r, e))
WRAP(int, setregid, (gid_t r, gid_t e), (r, e))
WRAP(int, setresuid, (uid_t r, uid_t e, uid_t s), (r, e, s))
WRAP(int, setresgid, (gid_t r, gid_t e, gid_t s), (r, e, s))
WRAP(int, setgroups, (size_t n, const gid_t *list), (n, list))
#pragma GCC diagnostic pop
