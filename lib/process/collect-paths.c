/*
 * Where the collector's captures go: the main process's to FILE, later ones
 * of it (memprof ctl start) to FILE.2, FILE.3..., other processes' to
 * FILE.PID. In a container FILE.3 may be both a third capture and process
 * 3's: a name a capture of this run has is never given again. Also: a path
 * made absolute, for whoever reads it from another working directory.
 */
#include <config.h>
#include "lib/process/collect-private.h"

#include <stdlib.h>
#include <string.h>
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
	path = xasprintf("%s.%d", c->opts.output, (int)s->pid);
	/* A process that replaced itself (exec) more than once gets .<pid>.<n>. */
	for (int n = 2; ((!c->opts.force && access(path, F_OK) == 0) || path_taken(c, path)) && n < 1000;
	     n++) {
		free(path);
		path = xasprintf("%s.%d.%d", c->opts.output, (int)s->pid, n);
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
