/*
 * Workload: allocates 7 x 77 bytes (before_end), waits 100 ms so the tracker
 * flushes, then ends the way argv[1] says: segv, abort, exit N, _exit N,
 * return N, wait (sleeps until killed), stdin (waits for input, then exits),
 * or term (counts SIGTERMs: after the first it waits 300 ms for more, then
 * exits with the count as its status), or ticks N (waits until the tracker's
 * timer thread, "memprof-timer", has gone to sleep N times, as
 * /proc/self/task/TID/status counts them; exits 3 if there is no such thread).
 */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void *volatile sink[7];
static volatile sig_atomic_t terms;

static void on_term(int sig)
{
	(void)sig;
	terms++;
}

/* How many times the thread named name has blocked, or -1 when there is none. */
static long sleeps_of(const char *name)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	long n = -1;
	while (d && (e = readdir(d))) {
		char path[300], comm[64] = "", line[256];
		FILE *f;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = '\0';
		fclose(f);
		comm[strcspn(comm, "\n")] = '\0';
		if (strcmp(comm, name))
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/status", e->d_name);
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f))
			if (sscanf(line, "voluntary_ctxt_switches: %ld", &n) == 1)
				break;
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return n;
}

__attribute__((noinline)) static void *before_end(void)
{
	void *p = malloc(77); /* SITE:before_end */
	__asm__ volatile("" ::: "memory");
	return p;
}

int main(int argc, char **argv)
{
	struct timespec t = { 0, 100 * 1000 * 1000 };
	const char *how = argc > 1 ? argv[1] : "return";
	int code = argc > 2 ? atoi(argv[2]) : 0;
	for (int i = 0; i < 7; i++)
		sink[i] = before_end();
	nanosleep(&t, NULL);
	if (!strcmp(how, "segv"))
		*(volatile int *)sink[0] = *(volatile int *)(long)(code - code);
	if (!strcmp(how, "abort"))
		abort();
	if (!strcmp(how, "exit"))
		exit(code);
	if (!strcmp(how, "_exit"))
		_exit(code);
	if (!strcmp(how, "wait")) {
		if (write(1, "waiting\n", 8) != 8)
			return 1;
		for (;;)
			pause();
	}
	if (!strcmp(how, "term")) {
		struct timespec grace = { 0, 300 * 1000 * 1000 };
		signal(SIGTERM, on_term);
		if (write(1, "waiting\n", 8) != 8)
			return 100;
		while (!terms)
			pause();
		while (nanosleep(&grace, &grace) < 0)
			;
		return terms;
	}
	if (!strcmp(how, "ticks")) {
		struct timespec pause_ms = { 0, 1000 * 1000 };
		long n;
		while ((n = sleeps_of("memprof-timer")) >= 0 && n < code)
			nanosleep(&pause_ms, NULL);
		return n < 0 ? 3 : 0;
	}
	if (!strcmp(how, "stdin")) {
		char c;
		return read(0, &c, 1) == 1 ? code : 1;
	}
	return code;
}
