/*
 * A file published whole: written as NAME.partial, then renamed to NAME, so
 * that whoever waits for NAME (a script after `memprof ctl PID snapshot`, a
 * copy out of a container) never reads part of it. Header-only: the tracker
 * (which does not link libmp.a) uses it too, and it calls only the system.
 */
#ifndef MEMPROF_LIB_UTIL_PUBLISH_H
#define MEMPROF_LIB_UTIL_PUBLISH_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define MP_PARTIAL_SUFFIX ".partial"

/*
 * Open path's partial file for writing (made empty); its name goes into
 * tmp (cap bytes). The descriptor, or -1 with errno (ENAMETOOLONG when the
 * name does not fit).
 */
static inline int mp_publish_open(const char *path, char *tmp, size_t cap)
{
	size_t n = strlen(path);
	if (n + sizeof(MP_PARTIAL_SUFFIX) > cap) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(tmp, path, n);
	memcpy(tmp + n, MP_PARTIAL_SUFFIX, sizeof(MP_PARTIAL_SUFFIX));
	return open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

/*
 * Close fd, the partial file tmp, and when err is 0 put it in path's place;
 * otherwise, or when that fails, remove it (path stays as it was). Returns
 * 0 or an errno value (err when it was one).
 */
static inline int mp_publish_close(int fd, const char *tmp, const char *path, int err)
{
	if (close(fd) < 0 && !err)
		err = errno;
	if (!err && rename(tmp, path) < 0)
		err = errno;
	if (err)
		unlink(tmp);
	return err;
}

#endif
