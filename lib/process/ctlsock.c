/* Where a tracker's control socket is, and whether one there was left by a process that ended. */
#include <config.h>
#include "lib/process/ctlsock.h"
#include "lib/process/procids.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void mp_ctl_socket_path(char *buf, size_t len, unsigned long uid, long nspid)
{
	snprintf(buf, len, "/tmp/memprof-%lu/ctl.%ld", uid, nspid);
}

int mp_ctl_socket_older(const char *path, pid_t pid)
{
	char name[64], buf[1024], *p;
	unsigned long long start = 0, btime = 0;
	long hz = sysconf(_SC_CLK_TCK);
	struct stat st;
	FILE *f;
	int field;
	if (stat(path, &st) < 0 || hz <= 0)
		return 0;
	snprintf(name, sizeof(name), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(name, "re")))
		return 0;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	/* Field 22, counted after the command's closing parenthesis (the command may hold spaces). */
	if (!p || !(p = strrchr(buf, ')')))
		return 0;
	for (field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p, " %llu", &start) != 1 || !(f = fopen("/proc/stat", "re")))
		return 0;
	while (fgets(buf, sizeof(buf), f) && sscanf(buf, "btime %llu", &btime) != 1)
		;
	fclose(f);
	/*
	 * btime is in whole seconds: the start is known to a second, so only a
	 * socket made over 2 s before it counts as older (a tracker makes its
	 * socket after its process starts).
	 */
	return btime && (double)st.st_mtim.tv_sec + st.st_mtim.tv_nsec / 1e9 + 2.0 <
			(double)btime + (double)start / (double)hz;
}

void mp_ctl_forget(pid_t pid, unsigned long uid)
{
	char path[96], state;
	struct stat st;
	mp_ctl_socket_path(path, sizeof(path), uid, (long)pid);
	if (lstat(path, &st) < 0 || !S_ISSOCK(st.st_mode) || st.st_uid != uid)
		return;
	/* Gone, or not reaped yet (no other process can have its pid): the socket was its. */
	state = mp_proc_state(pid);
	if (state && state != 'Z' && state != 'X' && !mp_ctl_socket_older(path, pid))
		return;
	unlink(path);
}
