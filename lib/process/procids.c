/* A process's ids from /proc: its user, and its pids in its own pid namespace. */
#include <config.h>
#include "lib/process/procids.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The effective uid (when uid) and the innermost NSpid (when nspid) of the status file at path. */
static int status_ids(const char *path, unsigned long *uid, long *nspid)
{
	char line[512];
	FILE *f = fopen(path, "re");
	int have_uid = 0, have_ns = 0;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f) && !(have_uid && have_ns)) {
		unsigned long real, eff;
		if (sscanf(line, "Uid: %lu %lu", &real, &eff) == 2) {
			if (uid)
				*uid = eff;
			have_uid = 1;
		} else if (!strncmp(line, "NSpid:", 6)) {
			/* "NSpid:\t<here>\t...\t<innermost>" */
			char *last = strrchr(line, '\t');
			if (last && nspid)
				*nspid = strtol(last + 1, NULL, 10);
			have_ns = 1;
		}
	}
	fclose(f);
	return have_uid ? 0 : -1;
}

int mp_proc_ids(pid_t pid, unsigned long *uid, long *nspid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	*nspid = pid;
	return status_ids(path, uid, nspid);
}

pid_t mp_proc_thread_here(pid_t pid, long nstid)
{
	char path[96];
	struct dirent *e;
	pid_t found = 0;
	DIR *d;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return 0;
	while (!found && (e = readdir(d))) {
		long here = strtol(e->d_name, NULL, 10), ns = here;
		if (here <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%ld/status", (int)pid, here);
		if (status_ids(path, NULL, &ns) == 0 && ns == nstid)
			found = (pid_t)here;
	}
	closedir(d);
	return found;
}

int mp_proc_stat(pid_t pid, pid_t tid, char *state, unsigned long long *start_ticks)
{
	char path[96], buf[1024], *p;
	unsigned long long start;
	FILE *f;
	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	/* "pid (comm) S ...": comm may hold anything, so the fields follow the last ')'. */
	if (!p || !(p = strrchr(buf, ')')) || p[1] != ' ' || !p[2])
		return -1;
	if (state)
		*state = p[2];
	if (start_ticks) {
		/* The start is field 22, counted from the state, field 3. */
		for (int field = 2; p && field < 22; field++)
			p = strchr(p + 1, ' ');
		if (!p || sscanf(p, " %llu", &start) != 1)
			return -1;
		*start_ticks = start;
	}
	return 0;
}
