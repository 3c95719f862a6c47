/* Asking a tracker through its control socket. */
#include <config.h>
#include "lib/process/ctl.h"
#include "lib/process/attachctl.h"
#include "lib/process/collect.h"
#include "lib/process/ctlsock.h"
#include "lib/process/procids.h"
#include "lib/process/procmaps.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* Connect to path: the fd, or -1 with errno. */
static int dial(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* Whether process pid has a memprof tracker mapped (one that does not listen: --no-control, detached...). */
static bool tracker_loaded(pid_t pid)
{
	struct mp_procmaps maps = MP_PROCMAPS_INIT;
	struct strbuf ignore = STRBUF_INIT;
	bool found = mp_procmaps_read(&maps, pid, &ignore) == 0 && mp_procmaps_tracker(&maps);
	mp_procmaps_release(&maps);
	strbuf_release(&ignore);
	return found;
}

int mp_ctl_send(pid_t pid, const char *request, struct strbuf *err)
{
	char here[160], there[200], buf[4096];
	struct strbuf why = STRBUF_INIT;
	const char *path = here;
	unsigned long uid = 0;
	long nspid = pid;
	int fd, e;

	if (mp_proc_ids(pid, &uid, &nspid) < 0) {
		strbuf_addf(err, "no process %d", (int)pid);
		return -1;
	}
	/*
	 * Where the tracker made it, seen from here; then through its root: a container, or a
	 * service with a /tmp of its own (systemd's PrivateTmp).
	 */
	mp_ctl_socket_path(here, sizeof(here), uid, nspid);
	snprintf(there, sizeof(there), "/proc/%d/root%s", (int)pid, here);
	fd = dial(here);
	e = errno;
	if (fd < 0 && e == ENOENT) {
		path = there;
		fd = dial(there);
		if (fd < 0 && (errno == EACCES || errno == EPERM)) {
			strbuf_addf(err, "process %d has no memprof tracker listening in /tmp, and its own "
				    "/tmp cannot be looked into ('/proc/%d/root': %s)", (int)pid, (int)pid,
				    strerror(errno));
			return -1;
		}
		if (fd < 0 && errno != ENOENT && errno != ENOTDIR)
			e = errno;
	}
	if (fd < 0) {
		if (e == ECONNREFUSED && mp_ctl_socket_older(path, pid)) {
			unlink(path); /* (no process can listen on it: its pid is another's now) */
			e = ENOENT;
		}
		/* (A tracker that finds its directory unusable says so, and listens nowhere.) */
		if ((e == ENOENT || e == EACCES || e == EPERM) && mp_ctl_dir_unusable(uid, &why))
			strbuf_addf(err, "process %d has no memprof tracker listening: %s, where a tracker "
				    "of user %lu would listen (it must be that user's directory, mode 0700)",
				    (int)pid, why.buf, uid);
		else if (e == ENOENT && tracker_loaded(pid))
			strbuf_addf(err, "process %d has no memprof tracker listening (its libmemprof.so has "
				    "no control socket: started with 'memprof run --no-control' or "
				    "MEMPROF_CONTROL=0, or detached)", (int)pid);
		else if (e == ENOENT)
			strbuf_addf(err, "process %d has no memprof tracker listening (preload it with "
				    "MEMPROF_OUTPUT, or start the program with 'memprof run --paused')",
				    (int)pid);
		else if (e == ECONNREFUSED)
			strbuf_addf(err, "the tracker of process %d does not answer ('%s' is left from "
				    "a process that ended?)", (int)pid, path);
		else if (e == EACCES || e == EPERM)
			strbuf_addf(err, "cannot reach the tracker of process %d: it runs as user %lu, and "
				    "only that user or root may control it", (int)pid, uid);
		else
			strbuf_addf(err, "cannot reach the tracker of process %d at '%s': %s", (int)pid,
				    here, strerror(e));
		strbuf_release(&why);
		return -1;
	}
	snprintf(buf, sizeof(buf), "%s\n", request);
	if (send(fd, buf, strlen(buf), MSG_NOSIGNAL) < 0) {
		strbuf_addf(err, "cannot send to the tracker of process %d: %s", (int)pid,
			    strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

int mp_ctl_answer(pid_t pid, int fd, int timeout_ms, struct strbuf *reply, struct strbuf *err)
{
	char buf[4096];
	size_t got = 0;
	struct pollfd p;
	struct timespec start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	p.fd = fd;
	p.events = POLLIN;
	for (;;) {
		long left;
		ssize_t r;
		clock_gettime(CLOCK_MONOTONIC, &now);
		left = timeout_ms - ((now.tv_sec - start.tv_sec) * 1000 +
				     (now.tv_nsec - start.tv_nsec) / 1000000);
		if (left <= 0 || poll(&p, 1, (int)left) == 0) {
			strbuf_addf(err, "the tracker of process %d did not answer within %d s",
				    (int)pid, timeout_ms / 1000);
			close(fd);
			return -1;
		}
		r = read(fd, buf + got, sizeof(buf) - 1 - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
		if (memchr(buf, '\n', got) || got == sizeof(buf) - 1)
			break;
	}
	close(fd);
	buf[got] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	if (!strncmp(buf, "ok", 2) && (buf[2] == ' ' || !buf[2])) {
		strbuf_addstr(reply, buf[2] ? buf + 3 : "");
		return 0;
	}
	if (!strncmp(buf, "error ", 6)) {
		strbuf_addstr(err, buf + 6);
		return 1;
	}
	strbuf_addf(err, "the tracker of process %d answered nothing it should ('%s')", (int)pid, buf);
	return -1;
}

int mp_ctl_request(pid_t pid, const char *request, int timeout_ms, struct strbuf *reply,
		   struct strbuf *err)
{
	int fd = mp_ctl_send(pid, request, err);
	if (fd < 0)
		return -1;
	return mp_ctl_answer(pid, fd, timeout_ms, reply, err);
}

int mp_ctl_ask(pid_t pid, const char *request, int timeout_ms, struct strbuf *reply,
	       struct strbuf *err)
{
	struct strbuf waiting = STRBUF_INIT;
	unsigned wait = timeout_ms > 2000 ? (unsigned)timeout_ms - 1000 : (unsigned)timeout_ms / 2;
	int r;
	if (!strcmp(request, "stop")) {
		/* A capture memprof attach makes ends as its detach ends it. */
		struct strbuf path = STRBUF_INIT;
		r = mp_attachctl_detach(pid, (unsigned)timeout_ms, false, &path, err);
		if (r == 0)
			strbuf_addf(reply, "stopped: '%s' is complete", path.buf);
		strbuf_release(&path);
		if (r <= 0)
			return r;
		strbuf_reset(err);
	}
	if (!strcmp(request, "status"))
		return mp_ctl_request(pid, request, timeout_ms, reply, err);
	/*
	 * A collector creates the capture's or the snapshot's file after the
	 * tracker asked it, and finishes the capture after it stopped: the
	 * tracker waits for its word, in our time.
	 */
	/* (A start may carry settings: "start aggregate MEMPROF_INTERVAL_MS=50 ...".) */
	strbuf_addf(&waiting, "%s %u", request, wait);
	r = mp_ctl_request(pid, waiting.buf, timeout_ms, reply, err);
	strbuf_release(&waiting);
	/* A tracker from before the wait (a service started before an upgrade): asked plainly. */
	if (r > 0 && strstr(err->buf, "unknown request")) {
		strbuf_reset(err);
		r = mp_ctl_request(pid, request, timeout_ms, reply, err);
	}
	return r;
}

int mp_ctl_stream_socket(pid_t pid, char *dir, size_t dirlen, char *path, size_t pathlen,
			 struct strbuf *err)
{
	char root_tmp[48], base[64];
	unsigned long uid = 0, gid = 0;
	long nspid;
	struct stat ours, theirs;
	const char *prefix = "";
	char line[512];
	FILE *f;
	int fd;

	if (mp_proc_ids(pid, &uid, &nspid) < 0) {
		strbuf_addf(err, "no process %d", (int)pid);
		return -1;
	}
	/* The tracker answers its own user and root only (as mp_ctl_send() finds). */
	if (geteuid() != 0 && uid != (unsigned long)geteuid()) {
		strbuf_addf(err, "cannot reach the tracker of process %d: it runs as user %lu, and "
			    "only that user or root may control it", (int)pid, uid);
		return -1;
	}
	snprintf(line, sizeof(line), "/proc/%d/status", (int)pid);
	f = fopen(line, "re");
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long real, eff;
		if (sscanf(line, "Gid: %lu %lu", &real, &eff) == 2)
			gid = eff;
	}
	if (f)
		fclose(f);
	/*
	 * The tracker connects to the path in its own mount namespace: a
	 * container, or a service with a /tmp of its own, gets the socket in
	 * its /tmp, made through /proc/PID/root.
	 */
	snprintf(root_tmp, sizeof(root_tmp), "/proc/%d/root", (int)pid);
	snprintf(base, sizeof(base), "%s/tmp", root_tmp);
	if (stat("/tmp", &ours) == 0 && stat(base, &theirs) == 0 &&
	    (ours.st_dev != theirs.st_dev || ours.st_ino != theirs.st_ino))
		prefix = root_tmp;
	else
		snprintf(base, sizeof(base), "/tmp");
	fd = mp_collector_socket(base, "memprof-live", (uid_t)uid, (gid_t)gid, dir, dirlen, path,
				 pathlen, err);
	if (fd < 0)
		return -1;
	if (*prefix)
		memmove(path, path + strlen(prefix), strlen(path + strlen(prefix)) + 1);
	return fd;
}
