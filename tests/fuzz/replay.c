/*
 * The fuzz targets' main in a build without libFuzzer (./configure without
 * --enable-fuzzing): the target runs once on each file named, and on each
 * file of each directory named, in order; an input that takes longer than
 * FUZZ_REPLAY_TIMEOUT seconds (default 60) is a hang and is killed by an
 * alarm. tests/fuzz/run.sh runs each target so on its seed corpus and the
 * inputs of past findings.
 */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/util/strbuf.h"
#include "lib/util/usage.h"
#include "lib/util/xalloc.h"
#include "tests/fuzz/fuzz.h"

static unsigned timeout_s = 60;
static size_t ninputs;

static void run_file(const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	FILE *f = fopen(path, "rb");
	char buf[65536];
	size_t n;
	if (!f)
		die_errno("cannot open '%s'", path);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		strbuf_add(&sb, buf, n);
	if (ferror(f))
		die_errno("cannot read '%s'", path);
	fclose(f);
	fprintf(stderr, "replay: %s (%zu bytes)\n", path, sb.len);
	alarm(timeout_s); /* SIGALRM's default action ends the process: a hang fails */
	LLVMFuzzerTestOneInput((const uint8_t *)sb.buf, sb.len);
	alarm(0);
	ninputs++;
	strbuf_release(&sb);
}

static int by_name(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

static void run_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, alloc = 0;
	if (!d)
		die_errno("cannot open '%s'", path);
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		ALLOC_GROW(names, n + 1, alloc);
		names[n++] = xasprintf("%s/%s", path, e->d_name);
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), by_name);
	for (size_t i = 0; i < n; i++) {
		run_file(names[i]);
		free(names[i]);
	}
	free(names);
}

int main(int argc, char **argv)
{
	const char *t = getenv("FUZZ_REPLAY_TIMEOUT");
	if (t && atoi(t) > 0)
		timeout_s = (unsigned)atoi(t);
	mp_set_progname(argv[0]);
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) < 0)
			die_errno("cannot stat '%s'", argv[i]);
		if (S_ISDIR(st.st_mode))
			run_dir(argv[i]);
		else
			run_file(argv[i]);
	}
	fprintf(stderr, "replay: %zu inputs, no finding\n", ninputs);
	return 0;
}
