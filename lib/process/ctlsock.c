/* Where a tracker's control socket is, and whether one there was left by a process that ended. */
#include <config.h>
#include "lib/process/ctlsock.h"
#include "lib/process/procids.h"

#include <poll.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

void mp_ctl_socket_path(char *buf, size_t len, unsigned long uid, long nspid)
{
	snprintf(buf, len, "/tmp/memprof-%lu/ctl.%ld", uid, nspid);
}

int mp_ctl_dir_unusable(unsigned long uid, struct strbuf *why)
{
	char dir[64];
	struct stat st;
	snprintf(dir, sizeof(dir), "/tmp/memprof-%lu", uid);
	/* (As the tracker checks it: lib/tracker/control.c.) */
	if (lstat(dir, &st) < 0)
		return 0;
	if (!S_ISDIR(st.st_mode))
		strbuf_addf(why, "'%s' is not a directory", dir);
	else if (st.st_uid != uid)
		strbuf_addf(why, "'%s' belongs to user %lu", dir, (unsigned long)st.st_uid);
	else if (st.st_mode & 077)
		strbuf_addf(why, "'%s' has mode %04o", dir, (unsigned)(st.st_mode & 07777));
	else
		return 0;
	return 1;
}

/* Whether a file of status st was made over 2 s before a process that started start_ticks after boot. */
static int made_before(const struct stat *st, unsigned long long start_ticks)
{
	char buf[1024];
	unsigned long long btime = 0;
	long hz = sysconf(_SC_CLK_TCK);
	FILE *f;
	if (hz <= 0 || !(f = fopen("/proc/stat", "re")))
		return 0;
	while (fgets(buf, sizeof(buf), f) && sscanf(buf, "btime %llu", &btime) != 1)
		;
	fclose(f);
	/*
	 * btime is in whole seconds: the start is known to a second, so only a
	 * socket made over 2 s before it counts as older (a tracker makes its
	 * socket after its process starts).
	 */
	return btime && (double)st->st_mtim.tv_sec + st->st_mtim.tv_nsec / 1e9 + 2.0 <
			(double)btime + (double)start_ticks / (double)hz;
}

int mp_ctl_socket_older(const char *path, pid_t pid)
{
	struct stat st;
	unsigned long long start;
	return stat(path, &st) == 0 && mp_proc_stat(pid, 0, NULL, &start) == 0 && made_before(&st, start);
}

void mp_ctl_forget(pid_t pid, unsigned long uid, int pidfd)
{
	struct pollfd gone = { .fd = pidfd, .events = POLLIN };
	char path[96], state;
	unsigned long long start;
	struct stat st;
	mp_ctl_socket_path(path, sizeof(path), uid, (long)pid);
	if (lstat(path, &st) < 0 || !S_ISSOCK(st.st_mode) || st.st_uid != uid)
		return; /* (removed by its tracker: the usual end) */
	/* Its socket's end may come a moment before the process is gone. */
	if (poll(&gone, 1, 20) != 1)
		return;
	/*
	 * Gone, or not reaped yet (no other process can have its pid): the
	 * socket was its. Else the pid is another's now, whose socket is kept
	 * unless it is older than that process.
	 */
	if (mp_proc_stat(pid, 0, &state, &start) == 0 && state != 'Z' && state != 'X' &&
	    !made_before(&st, start))
		return;
	unlink(path);
}
