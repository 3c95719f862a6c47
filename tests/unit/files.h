/*
 * Files for the unit tests: a fresh path under /tmp for a capture, and a
 * whole file read into memory. Include after cmocka.h.
 */
#ifndef MEMPROF_TESTS_FILES_H
#define MEMPROF_TESTS_FILES_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "lib/util/xalloc.h"

/* No file there yet: the caller frees the string and unlinks what it wrote. */
static __attribute__((unused)) char *tmp_path(void)
{
	char *p = xstrdup("/tmp/memprof-test-XXXXXX");
	int fd = mkstemp(p);
	assert_true(fd >= 0);
	close(fd);
	unlink(p);
	return p;
}

/* The bytes of the file at path (the test fails when it cannot be read); the caller frees them. */
static __attribute__((unused)) uint8_t *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = xmalloc((size_t)n);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

#endif
