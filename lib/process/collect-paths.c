/*
 * Where the collector's captures go: the main process's to FILE (named and
 * created here before anything runs: memprof-<program>.<pid>.bin by
 * default), later ones of it (memprof ctl start) to FILE.2, FILE.3...,
 * other processes' to FILE.PID. In a container FILE.3 may be both a third
 * capture and process 3's: a name a capture of this run has is never given
 * again. Also: a path made absolute, for whoever reads it from another
 * working directory, and the private directory and socket tracked
 * processes connect to.
 */
#include <config.h>
#include "lib/process/collect-private.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/util/xalloc.h"

char *mp_capture_default_name(const char *prog, pid_t pid)
{
	const char *base = strrchr(prog, '/');
	return xasprintf("memprof-%s.%d.bin", base ? base + 1 : prog, (int)pid);
}

/* Open path for writing without blocking (a FIFO with no reader: ENXIO): the fd, or -1. */
static int open_output(const char *path, int flags)
{
	struct stat st;
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NONBLOCK | flags, 0644);
	/* Only what may keep memprof waiting stays non-blocking: the writer waits for it. */
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

int mp_capture_file_create(struct mp_capture_file *f, const char *path, bool force,
			   struct strbuf *err)
{
	struct stat st;
	*f = (struct mp_capture_file)MP_CAPTURE_FILE_INIT;
	f->path = xstrdup(path);
	/* A FIFO or a device is written to as it is, never made or emptied. */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
		if (!force) {
			strbuf_addf(err, "'%s' exists (use -f to overwrite it)", path);
			return -1;
		}
		f->fd = open_output(path, 0);
		if (f->fd < 0 && errno == ENXIO && S_ISFIFO(st.st_mode))
			return 1;
	} else {
		f->fd = open_output(path, O_CREAT | (force ? O_TRUNC : O_EXCL));
		f->made = f->fd >= 0;
	}
	if (f->fd >= 0)
		return 0;
	if (errno == EEXIST)
		strbuf_addf(err, "'%s' exists (use -f to overwrite it)", path);
	else
		strbuf_addf(err, "cannot create '%s': %s", path, strerror(errno));
	return -1;
}

int mp_capture_file_wait(struct mp_capture_file *f, int cancel_fd, struct strbuf *err)
{
	for (;;) {
		struct pollfd p = { .fd = cancel_fd, .events = POLLIN };
		/* A FIFO says nothing of a reader come: each tenth of a second, try. */
		if (poll(&p, cancel_fd >= 0, 100) > 0) {
			strbuf_addf(err, "no process opened '%s' for reading; gave up waiting", f->path);
			return -1;
		}
		f->fd = open_output(f->path, 0);
		if (f->fd >= 0)
			return 0;
		if (errno != ENXIO && errno != EINTR) {
			strbuf_addf(err, "cannot open '%s': %s", f->path, strerror(errno));
			return -1;
		}
	}
}

void mp_capture_file_release(struct mp_capture_file *f, bool remove)
{
	struct stat st;
	if (remove && f->made && f->path &&
	    (f->fd >= 0 ? fstat(f->fd, &st) : stat(f->path, &st)) == 0 && st.st_size == 0)
		unlink(f->path);
	if (f->fd >= 0)
		close(f->fd);
	free(f->path);
	*f = (struct mp_capture_file)MP_CAPTURE_FILE_INIT;
}

/* Whether a capture of this run has path (streams are kept to the end of the run). */
static bool path_taken(const struct mp_collector *c, const char *path)
{
	for (size_t i = 0; i < c->nstreams; i++)
		if (c->streams[i]->info.path && !strcmp(c->streams[i]->info.path, path))
			return true;
	return false;
}

char *mp_collect_path(struct mp_collector *c, struct stream *s)
{
	char *path = NULL;
	int pid;
	if (s->main)
		return xstrdup(c->output);
	/* A later capture of the main process (memprof ctl PID start): FILE.2, FILE.3... */
	if (s->pid == c->opts.main_pid && (s->dec.header.flags & MP_HF_RESTARTED)) {
		do {
			free(path);
			s->info.capture = ++c->main_captures;
			path = xasprintf("%s.%u", c->output, s->info.capture);
		} while (path_taken(c, path));
		return path;
	}
	/*
	 * By the pid its capture holds (its FORK record in the parent's), which
	 * is its own pid namespace's: a child of a process in a container.
	 */
	pid = (int)s->dec.header.pid;
	path = xasprintf("%s.%d", c->output, pid);
	/* A process that replaced itself (exec) more than once gets .<pid>.<n>. */
	for (int n = 2; ((!c->opts.force && access(path, F_OK) == 0) || path_taken(c, path)) && n < 1000;
	     n++) {
		free(path);
		path = xasprintf("%s.%d.%d", c->output, pid, n);
	}
	return path;
}

char *mp_collect_whole_path(const char *path)
{
	char *cwd, *r;
	if (path[0] == '/' || !(cwd = getcwd(NULL, 0)))
		return xstrdup(path);
	r = xasprintf("%s/%s", cwd, path);
	free(cwd);
	return r;
}

int mp_collector_socket(const char *base, const char *name, uid_t uid, gid_t gid, char *dir,
			size_t dirlen, char *path, size_t pathlen, struct strbuf *err)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;
	snprintf(dir, dirlen, "%s/%s-XXXXXX", base, name);
	if (!mkdtemp(dir)) {
		strbuf_addf(err, "cannot create a private directory in '%s': %s", base,
			    strerror(errno));
		return -1;
	}
	if (strlen(dir) + sizeof("/stream") > sizeof(sa.sun_path) ||
	    strlen(dir) + sizeof("/stream") > pathlen) {
		strbuf_addf(err, "the socket path in '%s' is too long", dir);
		rmdir(dir);
		return -1;
	}
	snprintf(path, pathlen, "%s/stream", dir);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		strbuf_addf(err, "cannot create a socket: %s", strerror(errno));
		rmdir(dir);
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 64) < 0) {
		strbuf_addf(err, "cannot listen on '%s': %s", path, strerror(errno));
		goto fail;
	}
	if (uid != getuid() && (chown(dir, uid, gid) < 0 || chown(path, uid, gid) < 0)) {
		strbuf_addf(err, "cannot give '%s' to the user of the process: %s", dir,
			    strerror(errno));
		goto fail;
	}
	return fd;
fail:
	/* Nothing left behind. */
	close(fd);
	unlink(path);
	rmdir(dir);
	return -1;
}
