/*
 * Where the collector's captures go: the main process's to FILE, later ones
 * of it (memprof ctl start) to FILE.2, FILE.3..., other processes' to
 * FILE.PID. In a container FILE.3 may be both a third capture and process
 * 3's: a name a capture of this run has is never given again. Also: a path
 * made absolute, for whoever reads it from another working directory, and
 * the private directory and socket tracked processes connect to.
 */
#include <config.h>
#include "lib/process/collect-private.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/util/xalloc.h"

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
		return xstrdup(c->opts.output);
	/* A later capture of the main process (memprof ctl PID start): FILE.2, FILE.3... */
	if (s->pid == c->opts.main_pid && (s->dec.header.flags & MP_HF_RESTARTED)) {
		do {
			free(path);
			s->info.capture = ++c->main_captures;
			path = xasprintf("%s.%u", c->opts.output, s->info.capture);
		} while (path_taken(c, path));
		return path;
	}
	/*
	 * By the pid its capture holds (its FORK record in the parent's), which
	 * is its own pid namespace's: a child of a process in a container.
	 */
	pid = (int)s->dec.header.pid;
	path = xasprintf("%s.%d", c->opts.output, pid);
	/* A process that replaced itself (exec) more than once gets .<pid>.<n>. */
	for (int n = 2; ((!c->opts.force && access(path, F_OK) == 0) || path_taken(c, path)) && n < 1000;
	     n++) {
		free(path);
		path = xasprintf("%s.%d.%d", c->opts.output, pid, n);
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
