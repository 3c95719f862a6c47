/* Run-time file locations. */
#include <config.h>
#include "lib/util/paths.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/util/xalloc.h"

#ifndef MP_PKGDATADIR
#error "MP_PKGDATADIR must be defined by the build"
#endif

int mp_in_build_tree(void)
{
	static int cached = -1;
	if (cached < 0) {
		char self[PATH_MAX], build[PATH_MAX];
		const char *execfn = (const char *)getauxval(AT_EXECFN);
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		cached = 0;
		if (n > 0)
			self[n] = '\0';
		/* Without /proc (a chroot that does not mount it): the name exec was given. */
		else if (!execfn || !realpath(execfn, self))
			return cached;
		/* Compare real paths so symlinked build dirs still match. */
		if (realpath(MP_BUILDDIR "/memprof", build) && !strcmp(self, build))
			cached = 1;
	}
	return cached;
}

static const char *env_or(const char *var, const char *fallback)
{
	const char *v = getenv(var);
	return v && *v ? v : fallback;
}

const char *mp_datadir(void)
{
	return env_or("MEMPROF_DATADIR", mp_in_build_tree() ? MP_SRCDIR "/share" : MP_PKGDATADIR);
}

const char *mp_libdir(void)
{
	return env_or("MEMPROF_LIBDIR", mp_in_build_tree() ? MP_BUILDDIR "/.libs" : MP_PKGLIBDIR);
}

char *mp_tracker_path(void)
{
	return xasprintf("%s/libmemprof.so", mp_libdir());
}

char *mp_manpage_path(const char *page)
{
	const char *sect = strrchr(page, '.');
	char *p;
	struct stat st;
	if (!sect)
		return NULL;
	if (getenv("MEMPROF_MANDIR") && *getenv("MEMPROF_MANDIR"))
		p = xasprintf("%s/%s", getenv("MEMPROF_MANDIR"), page);
	else if (mp_in_build_tree())
		p = xasprintf("%s/man/%s", MP_SRCDIR, page);
	else
		p = xasprintf("%s/man%s/%s", MP_MANDIR, sect + 1, page);
	if (stat(p, &st) == 0)
		return p;
	free(p);
	return NULL;
}
