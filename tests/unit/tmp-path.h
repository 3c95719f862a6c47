/*
 * A fresh path under /tmp for a test's capture, no file there yet (the
 * caller frees the string and unlinks what it wrote). Include after cmocka.h.
 */
#ifndef MEMPROF_TESTS_TMP_PATH_H
#define MEMPROF_TESTS_TMP_PATH_H

#include <stdlib.h>
#include <unistd.h>

#include "lib/xalloc.h"

static __attribute__((unused)) char *tmp_path(void)
{
	char *p = xstrdup("/tmp/memprof-test-XXXXXX");
	int fd = mkstemp(p);
	assert_true(fd >= 0);
	close(fd);
	unlink(p);
	return p;
}

#endif
