/*
 * Benchmark launcher: runs one command and measures it for bench/run.py.
 *
 *   launch [-o RESULT] [-e TARGET_EXE] [-m LIMIT_AS_MB] [-t TIMEOUT_S] -- PROGRAM [ARGS...]
 *
 * It measures
 *   - wall time, from fork to reaping PROGRAM (CLOCK_MONOTONIC);
 *   - CPU time (user, sys) and the largest RSS of the whole process tree, from
 *     getrusage(RUSAGE_CHILDREN) once every process is reaped: the launcher is
 *     a child subreaper, so descendants orphaned on the way are reaped and
 *     counted too;
 *   - the exact peak RSS (VmHWM) and the CPU time (user + system, all its
 *     threads, from /proc/PID/stat) of one process of the tree, the target, named
 *     by its executable: the launcher finds it in /proc (descendants through
 *     /proc/PID/task/TID/children), attaches with PTRACE_SEIZE and
 *     PTRACE_O_TRACEEXIT, and reads /proc/PID/status at the exit stop, when the
 *     process has done all its work but still has its memory. Nothing else
 *     stops the target (signals are passed on at once), so its timing is not
 *     disturbed. This separates the profiled program from its profiler: the
 *     collector of `memprof run`, heaptrack's interpreter and compressor.
 *
 * The result is one line of key=value pairs, written to RESULT (default
 * standard output) after everything ended. PROGRAM inherits the standard
 * streams and runs in its own process group, killed on timeout, SIGINT or
 * SIGTERM. Exit status: 0 when measured (whatever PROGRAM's status), 1 on
 * failure, 2 on a usage error.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_TREE 512

static volatile sig_atomic_t child_pid, stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
	if (child_pid > 0)
		kill(-child_pid, SIGKILL);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double tv_seconds(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static int runs_exe(pid_t pid, const char *exe)
{
	char path[64], buf[PATH_MAX];
	ssize_t n;
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, buf, sizeof(buf) - 1);
	if (n < 0)
		return 0;
	buf[n] = '\0';
	return !strcmp(buf, exe);
}

/* Append the children of every thread of pid to tree[]; returns the new count. */
static int add_children(pid_t pid, pid_t *tree, int n)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (!(d = opendir(path)))
		return n;
	while ((de = readdir(d))) {
		char file[320];
		FILE *f;
		int c;
		if (de->d_name[0] == '.')
			continue;
		snprintf(file, sizeof(file), "/proc/%d/task/%s/children", (int)pid, de->d_name);
		if (!(f = fopen(file, "r")))
			continue;
		while (n < MAX_TREE && fscanf(f, "%d", &c) == 1)
			tree[n++] = c;
		fclose(f);
	}
	closedir(d);
	return n;
}

/* The first process running exe in the tree under root (breadth first), or 0. */
static pid_t find_target(pid_t root, const char *exe)
{
	pid_t tree[MAX_TREE];
	int n = 1;
	tree[0] = root;
	for (int i = 0; i < n; i++) {
		if (runs_exe(tree[i], exe))
			return tree[i];
		n = add_children(tree[i], tree, n);
	}
	return 0;
}

/* VmHWM of pid in KiB, or -1. */
static long peak_rss_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (!(f = fopen(path, "r")))
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* CPU time (user + system) of pid's threads, dead ones included, in seconds, or -1. */
static double process_cpu_s(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long utime, stime;
	long tick = sysconf(_SC_CLK_TCK);
	size_t n;
	FILE *f;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "r")))
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	/* After the command name, which may hold spaces and parentheses: fields 3 on. */
	if (!(p = strrchr(buf, ')')) || tick <= 0 ||
	    sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime) != 2)
		return -1;
	return (double)(utime + stime) / (double)tick;
}

static void usage(void)
{
	fprintf(stderr, "usage: launch [-o RESULT] [-e TARGET_EXE] [-m LIMIT_AS_MB] [-t TIMEOUT_S] "
			"-- PROGRAM [ARGS...]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *result = NULL, *target_exe = NULL;
	char exe[PATH_MAX];
	long limit_mb = 0, timeout = 0, hwm = -1;
	double target_cpu = -1;
	pid_t child, target = 0;
	int opt, status = -1, traced = 0, looking;
	double t0, wall = -1;
	struct sigaction sa;
	struct rusage ru;
	FILE *out = stdout;

	while ((opt = getopt(argc, argv, "+o:e:m:t:")) != -1) {
		switch (opt) {
		case 'o': result = optarg; break;
		case 'e': target_exe = optarg; break;
		case 'm': limit_mb = atol(optarg); break;
		case 't': timeout = atol(optarg); break;
		default: usage();
		}
	}
	if (optind >= argc)
		usage();
	if (target_exe && !realpath(target_exe, exe)) {
		fprintf(stderr, "launch: cannot resolve '%s': %s\n", target_exe, strerror(errno));
		return 1;
	}
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) {
		fprintf(stderr, "launch: cannot become a subreaper: %s\n", strerror(errno));
		return 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal; /* no SA_RESTART: a blocked waitpid returns EINTR */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);

	t0 = now();
	child = fork();
	if (child < 0) {
		fprintf(stderr, "launch: cannot fork: %s\n", strerror(errno));
		return 1;
	}
	if (child == 0) {
		setpgid(0, 0);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		if (limit_mb > 0) {
			struct rlimit rl = { (rlim_t)limit_mb << 20, (rlim_t)limit_mb << 20 };
			setrlimit(RLIMIT_AS, &rl);
		}
		execvp(argv[optind], argv + optind);
		fprintf(stderr, "launch: cannot execute '%s': %s\n", argv[optind], strerror(errno));
		_exit(127);
	}
	setpgid(child, child);
	child_pid = child;
	if (timeout > 0)
		alarm((unsigned)timeout);

	looking = target_exe != NULL;
	for (;;) {
		int st;
		pid_t r = waitpid(-1, &st, __WALL | (looking ? WNOHANG : 0));
		if (r < 0) {
			if (errno == EINTR)
				continue;
			break; /* ECHILD: everything is reaped */
		}
		if (r == 0) {
			/* Still looking for the target: it may not have been exec'd yet. */
			if ((target = find_target(child, exe))) {
				looking = 0;
				if (ptrace(PTRACE_SEIZE, target, 0, PTRACE_O_TRACEEXIT) == 0)
					traced = 1;
				else
					fprintf(stderr, "launch: cannot attach to %d: %s\n", (int)target,
						strerror(errno));
			} else {
				nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
			}
			continue;
		}
		if (traced && r == target && WIFSTOPPED(st)) {
			if (st >> 8 == (SIGTRAP | (PTRACE_EVENT_EXIT << 8))) {
				hwm = peak_rss_kb(target);
				target_cpu = process_cpu_s(target);
				ptrace(PTRACE_DETACH, target, 0, 0);
				traced = 0;
			} else if (st >> 16 == PTRACE_EVENT_STOP) {
				ptrace(PTRACE_LISTEN, target, 0, 0); /* a group stop: stay stopped */
			} else {
				ptrace(PTRACE_CONT, target, 0, WSTOPSIG(st)); /* deliver the signal */
			}
			continue;
		}
		if (r == target && (WIFEXITED(st) || WIFSIGNALED(st)))
			traced = 0;
		if (r == child) {
			wall = now() - t0;
			status = st;
			child_pid = 0;
			looking = 0;
		}
	}
	alarm(0);
	if (getrusage(RUSAGE_CHILDREN, &ru)) {
		fprintf(stderr, "launch: getrusage: %s\n", strerror(errno));
		return 1;
	}
	if (result && !(out = fopen(result, "w"))) {
		fprintf(stderr, "launch: cannot write '%s': %s\n", result, strerror(errno));
		return 1;
	}
	fprintf(out, "wall_s=%.6f user_s=%.6f sys_s=%.6f exit=%d signal=%d tree_maxrss_kb=%ld "
		     "target_hwm_kb=%ld target_cpu_s=%.2f target_pid=%d timed_out=%d interrupted=%d\n",
		wall, tv_seconds(ru.ru_utime), tv_seconds(ru.ru_stime),
		status >= 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1,
		status >= 0 && WIFSIGNALED(status) ? WTERMSIG(status) : 0, ru.ru_maxrss, hwm,
		target_cpu, (int)target, stop_signal == SIGALRM, stop_signal == SIGINT || stop_signal == SIGTERM);
	if (out != stdout && fclose(out)) {
		fprintf(stderr, "launch: cannot write '%s': %s\n", result, strerror(errno));
		return 1;
	}
	return stop_signal == SIGINT || stop_signal == SIGTERM ? 1 : 0;
}
