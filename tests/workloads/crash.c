/*
 * Workload: allocates 7 x 77 bytes (before_end), waits 100 ms so the tracker
 * flushes, then ends the way argv[1] says: segv, abort, exit N, _exit N,
 * return N, wait (sleeps until killed), stdin (waits for input, then exits),
 * or term (counts SIGTERMs: after the first it waits 300 ms for more, then
 * exits with the count as its status), or ticks N (waits until the thread
 * that samples it has gone to sleep N times, as /proc/PID/task/TID/status
 * counts them: the collector's "memprof-drain" in its parent, memprof run, or
 * else the tracker's "memprof-timer" in itself; exits 3 if there is neither),
 * or touch N (one block of N MiB, every page written, held while the sampler
 * sleeps 3 times, then freed), or names (prints its threads' names), or
 * single (prints glibc's __libc_single_threaded).
 */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/single_threaded.h>
#include <time.h>
#include <unistd.h>

void *volatile sink[7];
static volatile sig_atomic_t terms;

static void on_term(int sig)
{
	(void)sig;
	terms++;
}

/* The name of thread tid of dir (/proc/PID/task) into comm, "" when it has none (ended). */
static void thread_name(const char *dir, const char *tid, char *comm, size_t cap)
{
	char path[300];
	FILE *f;
	snprintf(path, sizeof(path), "%s/%s/comm", dir, tid);
	f = fopen(path, "r");
	if (!f || !fgets(comm, (int)cap, f))
		comm[0] = '\0';
	if (f)
		fclose(f);
	comm[strcspn(comm, "\n")] = '\0';
}

/* How many times process pid's thread named name has blocked, or -1 when there is none. */
static long sleeps_of(long pid, const char *name)
{
	char dir[64];
	DIR *d;
	struct dirent *e;
	long n = -1;
	snprintf(dir, sizeof(dir), "/proc/%ld/task", pid);
	d = opendir(dir);
	while (d && (e = readdir(d))) {
		char path[300], comm[64], line[256];
		FILE *f;
		if (e->d_name[0] == '.')
			continue;
		thread_name(dir, e->d_name, comm, sizeof(comm));
		if (strcmp(comm, name))
			continue;
		snprintf(path, sizeof(path), "%s/%s/status", dir, e->d_name);
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

/*
 * Wait until the thread that samples this process has gone to sleep n times
 * (more than now, when more): the collector's in our parent (memprof run),
 * or else the tracker's own. -1 when there is neither.
 */
static long sampler_sleeps(int more, long n)
{
	struct timespec pause_ms = { 0, 1000 * 1000 };
	long pid = (long)getppid(), got;
	const char *name = "memprof-drain";
	if (sleeps_of(pid, name) < 0) {
		pid = (long)getpid();
		name = "memprof-timer";
	}
	if (more && (got = sleeps_of(pid, name)) >= 0)
		n += got;
	while ((got = sleeps_of(pid, name)) >= 0 && got < n)
		nanosleep(&pause_ms, NULL);
	return got;
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
	if (!strcmp(how, "ticks"))
		return sampler_sleeps(0, code) < 0 ? 3 : 0;
	if (!strcmp(how, "single")) {
		/* Whether glibc still takes this process for one of a single thread (its fast paths). */
		printf("single_threaded=%d\n", (int)__libc_single_threaded);
		return 0;
	}
	if (!strcmp(how, "names")) {
		/* The names of this process's threads, one a line. */
		char comm[64];
		DIR *d = opendir("/proc/self/task");
		struct dirent *e;
		while (d && (e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			thread_name("/proc/self/task", e->d_name, comm, sizeof(comm));
			if (comm[0])
				printf("%s\n", comm);
		}
		if (d)
			closedir(d);
		return 0;
	}
	if (!strcmp(how, "touch")) {
		/* One block of N MiB, every page of it touched: no event while the sampler sleeps 3 times. */
		size_t n = (size_t)code << 20;
		char *p = malloc(n); /* SITE:touched */
		if (!p)
			return 1;
		memset(p, 1, n);
		if (sampler_sleeps(1, 3) < 0)
			return 3;
		free(p);
		return 0;
	}
	if (!strcmp(how, "stdin")) {
		char c;
		return read(0, &c, 1) == 1 ? code : 1;
	}
	return code;
}
