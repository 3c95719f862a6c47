/*
 * debuginfod for lib/symbols: a bound on how long a lookup waits, giving up
 * on servers that do not answer, and debug files fetched by build-id for
 * files that are not here.
 *
 * libdw asks debuginfod itself, last in dwfl_standard_find_debuginfo(),
 * when DEBUGINFOD_URLS is set; so does this file's own client (loaded with
 * dlopen(), as libdw does, so that memprof loads libcurl only when the
 * user asks for debuginfod). The client library reads its settings from
 * the environment at each lookup, and offers no other way to bound a wait
 * that no byte ends: DEBUGINFOD_TIMEOUT (seconds to connect and get the
 * first 100 KB; 90 by default, and a failed attempt is tried twice more).
 * Cancelling from a progress callback is no substitute: elfutils 0.188
 * then caches the file as missing for 10 minutes, and later versions call
 * it only once a download has begun.
 */
#include <config.h>
#include "lib/symbols/symbols-private.h"

#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <errno.h>
#include <time.h>

#include "lib/util/strbuf.h"

/* The wait memprof sets when the user did not: seconds to connect and get the first 100 KB. */
#define DEFAULT_TIMEOUT "10"
#define DEBUGINFOD_SONAME "libdebuginfod.so.1"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool configured(void)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	return urls && *urls;
}

void mp_dinfod_enter(struct mp_symbols *s, struct dinfod_scope *sc)
{
	const char *t = getenv("DEBUGINFOD_TIMEOUT");
	memset(sc, 0, sizeof(*sc));
	if (!configured())
		return;
	sc->active = true;
	if (s->cache->dinfod.stalled) {
		/* The client answers at once, without a server, when no URL is set. */
		sc->saved_urls = xstrdup(getenv("DEBUGINFOD_URLS"));
		unsetenv("DEBUGINFOD_URLS");
		return;
	}
	if (t && *t) {
		sc->timeout = strtol(t, NULL, 10); /* as the client reads it; 0: no bound */
	} else {
		setenv("DEBUGINFOD_TIMEOUT", DEFAULT_TIMEOUT, 1);
		sc->set_timeout = true;
		sc->timeout = strtol(DEFAULT_TIMEOUT, NULL, 10);
	}
	sc->start = now();
}

void mp_dinfod_leave(struct mp_symbols *s, struct dinfod_scope *sc, bool found)
{
	if (!sc->active)
		return;
	if (sc->saved_urls) {
		setenv("DEBUGINFOD_URLS", sc->saved_urls, 1);
		free(sc->saved_urls);
		return;
	}
	if (sc->set_timeout)
		unsetenv("DEBUGINFOD_TIMEOUT");
	/*
	 * A lookup that failed after the whole wait: the servers do not
	 * answer. Each later file would wait as long again (three times, with
	 * the client's retries), so none is asked any more.
	 */
	if (!found && sc->timeout > 0 && now() - sc->start >= (double)sc->timeout) {
		s->cache->dinfod.stalled = true;
		add_warning(s, intern_msg(s, xasprintf(
			"no debuginfod server in DEBUGINFOD_URLS answered in %ld s (DEBUGINFOD_TIMEOUT "
			"sets this wait): not asked again", sc->timeout)));
	}
}

/* The client library, once; false when it cannot be loaded. */
static bool load(struct dinfod *d)
{
	if (d->loaded)
		return d->client != NULL;
	d->loaded = true;
	d->so = dlopen(DEBUGINFOD_SONAME, RTLD_LAZY | RTLD_LOCAL);
	if (!d->so)
		return false;
	*(void **)&d->begin = dlsym(d->so, "debuginfod_begin");
	*(void **)&d->find_debuginfo = dlsym(d->so, "debuginfod_find_debuginfo");
	*(void **)&d->end = dlsym(d->so, "debuginfod_end");
	if (d->begin && d->find_debuginfo && d->end)
		d->client = d->begin();
	return d->client != NULL;
}

int mp_dinfod_find_debuginfo(struct mp_symbols *s, struct sym_file *f, char **path)
{
	struct dinfod *d = &s->cache->dinfod;
	struct dinfod_scope sc;
	int fd;

	*path = NULL;
	if (!configured() || !f->build_id_len || d->stalled || !load(d))
		return -1;
	mp_dinfod_enter(s, &sc);
	fd = d->find_debuginfo(d->client, f->build_id, (int)f->build_id_len, path);
	mp_dinfod_leave(s, &sc, fd >= 0);
	if (fd < 0) {
		free(*path);
		*path = NULL;
		return -1;
	}
	return fd;
}

void mp_dinfod_release(struct dinfod *d)
{
	if (d->client)
		d->end(d->client);
	/* The library stays loaded: libcurl does not support being unloaded. */
}
