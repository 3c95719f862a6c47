/* Control sockets of attach sessions, and what attach needs to know about its target. */
#include <config.h>
#include "lib/process/attachctl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "lib/util/xalloc.h"

/* Abstract socket names need no file and vanish with the session. */
static socklen_t control_addr(pid_t pid, struct sockaddr_un *sa)
{
	int n;
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	n = snprintf(sa->sun_path + 1, sizeof(sa->sun_path) - 1, "memprof-attach-%d", (int)pid);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

static int fail(struct strbuf *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct strbuf *err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	strbuf_vsetf(err, fmt, ap);
	va_end(ap);
	return -1;
}

int mp_attachctl_listen(pid_t pid, struct strbuf *err)
{
	struct sockaddr_un sa;
	socklen_t len = control_addr(pid, &sa);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fail(err, "cannot create a socket: %s", strerror(errno));
	if (bind(fd, (struct sockaddr *)&sa, len) < 0 || listen(fd, 8) < 0) {
		int e = errno;
		struct ucred cred;
		socklen_t cl = sizeof(cred);
		int probe;
		close(fd);
		if (e != EADDRINUSE)
			return fail(err, "cannot listen for detach requests: %s", strerror(e));
		/* Who holds it? Connect and ask the kernel for the peer. */
		probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (probe >= 0 && connect(probe, (struct sockaddr *)&sa, len) == 0 &&
		    getsockopt(probe, SOL_SOCKET, SO_PEERCRED, &cred, &cl) == 0) {
			close(probe);
			return fail(err, "process %d is already tracked by 'memprof attach' (pid %d); "
					 "run 'memprof detach %d' first", (int)pid, (int)cred.pid, (int)pid);
		}
		if (probe >= 0)
			close(probe);
		return fail(err, "process %d is already tracked by another 'memprof attach'", (int)pid);
	}
	return fd;
}

int mp_attachctl_accept(int lfd)
{
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	struct pollfd p;
	char buf[16];
	ssize_t n;
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return -1;
	/* Only the user who owns the session (or root) may end it. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0 ||
	    (cred.uid != 0 && cred.uid != getuid())) {
		close(fd);
		return -1;
	}
	p = (struct pollfd){ .fd = fd, .events = POLLIN };
	if (poll(&p, 1, 2000) <= 0) {
		close(fd);
		return -1;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0 || strncmp(buf, "detach\n", 7)) {
		close(fd);
		return -1;
	}
	return fd;
}

void mp_attachctl_reply(int cfd, const char *capture)
{
	char *msg = xasprintf("ok %s\n", capture ? capture : "");
	if (send(cfd, msg, strlen(msg), MSG_NOSIGNAL) < 0) {
		/* The requester gave up waiting: nothing to tell. */
	}
	free(msg);
	close(cfd);
}

/* How long a detach waits for a memprof attach that may be starting (not running yet). */
#define ATTACH_GRACE_MS 1000

/*
 * Whether a memprof attach of process pid runs (this memprof, or one of the
 * same name), not listening yet: its command line ends "attach ... PID".
 */
static bool attach_on_its_way(pid_t pid)
{
	char want[24], path[300], buf[4096];
	struct stat self, exe;
	struct dirent *de;
	bool found = false;
	DIR *d = opendir("/proc");
	if (!d || stat("/proc/self/exe", &self) < 0) {
		if (d)
			closedir(d);
		return false;
	}
	snprintf(want, sizeof(want), "%d", (int)pid);
	while (!found && (de = readdir(d))) {
		char target[4096], *arg, *last = NULL, *end;
		ssize_t n;
		int fd, nargs = 0;
		bool attach = false;
		if (de->d_name[0] < '1' || de->d_name[0] > '9' || atoi(de->d_name) == getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%s/exe", de->d_name);
		n = readlink(path, target, sizeof(target) - 1);
		if (n < 0)
			continue;
		target[n] = '\0';
		if ((stat(path, &exe) < 0 || exe.st_dev != self.st_dev || exe.st_ino != self.st_ino) &&
		    (!strrchr(target, '/') || strcmp(strrchr(target, '/') + 1, "memprof")))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cmdline", de->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
		if (fd >= 0)
			close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		for (arg = buf, end = buf + n; arg < end; arg += strlen(arg) + 1, nargs++) {
			attach |= nargs == 1 && !strcmp(arg, "attach");
			last = arg;
		}
		found = attach && last && !strcmp(last, want);
	}
	closedir(d);
	return found;
}

int mp_attachctl_detach(pid_t pid, unsigned timeout_ms, bool wait_start, struct strbuf *capture,
			struct strbuf *err)
{
	struct sockaddr_un sa;
	socklen_t len = control_addr(pid, &sa);
	struct strbuf reply = STRBUF_INIT;
	struct timespec start, now;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), r = -1;
	if (fd < 0)
		return fail(err, "cannot create a socket: %s", strerror(errno));
	clock_gettime(CLOCK_MONOTONIC, &start);
	while (connect(fd, (struct sockaddr *)&sa, len) < 0) {
		struct timespec ms10 = { 0, 10 * 1000 * 1000 };
		long waited;
		/*
		 * A memprof attach started a moment ago (memprof attach PID &
		 * memprof detach PID) listens as soon as it runs: its detach waits
		 * for it rather than finding nobody, and for a second for one
		 * that may not have started yet.
		 */
		clock_gettime(CLOCK_MONOTONIC, &now);
		waited = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
		if (wait_start && waited < (long)timeout_ms && (kill(pid, 0) == 0 || errno == EPERM) &&
		    (waited < ATTACH_GRACE_MS || attach_on_its_way(pid))) {
			nanosleep(&ms10, NULL);
			continue;
		}
		close(fd);
		if (kill(pid, 0) < 0 && errno == ESRCH)
			return fail(err, "no process %d", (int)pid);
		fail(err, "process %d is not tracked by 'memprof attach'", (int)pid);
		return wait_start ? -1 : 1;
	}
	if (send(fd, "detach\n", 7, MSG_NOSIGNAL) != 7) {
		close(fd);
		return fail(err, "cannot ask the session of process %d to detach: %s", (int)pid,
			    strerror(errno));
	}
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		char buf[4096];
		ssize_t n;
		long elapsed;
		clock_gettime(CLOCK_MONOTONIC, &now);
		elapsed = (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
		if (elapsed >= (long)timeout_ms) {
			fail(err, "the session of process %d did not finish within %u ms", (int)pid,
			     timeout_ms);
			break;
		}
		if (poll(&p, 1, (int)(timeout_ms - (unsigned)elapsed)) <= 0)
			continue;
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!strncmp(reply.buf, "ok ", 3) && strchr(reply.buf, '\n')) {
				strbuf_add(capture, reply.buf + 3, strcspn(reply.buf + 3, "\n"));
				r = 0;
			} else {
				fail(err, "the session of process %d ended without finishing its capture",
				     (int)pid);
			}
			break;
		}
		strbuf_add(&reply, buf, (size_t)n);
	}
	strbuf_release(&reply);
	close(fd);
	return r;
}

int mp_target_info(pid_t pid, struct mp_target_info *ti, struct strbuf *err)
{
	char path[64], exe[4096];
	struct stat st, ours, theirs;
	ssize_t n;
	memset(ti, 0, sizeof(*ti));
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (stat(path, &st) < 0)
		return fail(err, "no process %d", (int)pid);
	ti->uid = st.st_uid;
	ti->gid = st.st_gid;
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n < 0)
		return fail(err, "cannot read the executable of process %d: %s", (int)pid,
			    strerror(errno));
	exe[n] = '\0';
	ti->exe = xstrdup(exe);
	snprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
	ti->same_root = stat("/", &ours) == 0 && stat(path, &theirs) == 0 &&
			ours.st_dev == theirs.st_dev && ours.st_ino == theirs.st_ino;
	return 0;
}

void mp_target_info_release(struct mp_target_info *ti)
{
	free(ti->exe);
	memset(ti, 0, sizeof(*ti));
}
