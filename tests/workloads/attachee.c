/*
 * Workload for attach tests: a long-running process with a known allocation
 * script. Threads "churn-1" and "churn-2" malloc/free 64 bytes in churn_alloc
 * in a loop (with short sleeps), "sleeper" sleeps in nanosleep, and "reader"
 * blocks in read() on the command FIFO argv[1] and runs commands, writing
 * "ok <command>" on stdout after each:
 *   alloc N SIZE   N blocks of SIZE bytes from command_alloc, kept
 *   free           free the kept blocks
 *   fork           fork a child that allocates 3 x 333 bytes (child_alloc) and exits 3
 *   exit CODE      exit with status CODE (after "ok exit")
 *   nodump         make the process non-dumpable: no ptrace by its own (non-root) user
 *   sig            raise SIGUSR2, whose handler (installed at the start) counts, and write
 *                  "handler own=A kernel=B seen=N": A 1 when sigaction reads back that
 *                  handler, B 1 when the kernel's action is it (0: a tracker's trampoline
 *                  is in front), N the handler's runs
 * Before reading the first command it allocates 5 x 555 bytes (before_attach),
 * freed by the "free" command: after an attach those are unknown frees.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BARRIER() __asm__ volatile("" ::: "memory")

static void *volatile sink;
static void *kept[100000];
static size_t nkept;
static void *early[5];

__attribute__((noinline)) static void *churn_alloc(void)
{
	void *p = malloc(64); /* SITE:churn_alloc */
	BARRIER();
	return p;
}

__attribute__((noinline)) static void *command_alloc(size_t n)
{
	void *p = malloc(n); /* SITE:command_alloc */
	BARRIER();
	return p;
}

__attribute__((noinline)) static void *child_alloc(void)
{
	void *p = malloc(333); /* SITE:child_alloc */
	BARRIER();
	return p;
}

__attribute__((noinline)) static void *before_attach(void)
{
	void *p = malloc(555);
	BARRIER();
	return p;
}

static void *churn(void *arg)
{
	struct timespec t = { 0, 200 * 1000 };
	pthread_setname_np(pthread_self(), (const char *)arg);
	for (;;) {
		for (int i = 0; i < 100; i++) {
			/* Each thread its own pointer: a shared one would let one free the other's. */
			void *volatile mine = churn_alloc();
			free(mine);
		}
		nanosleep(&t, NULL);
	}
	return NULL;
}

static void *sleeper(void *arg)
{
	struct timespec t = { 0, 50 * 1000 * 1000 };
	(void)arg;
	pthread_setname_np(pthread_self(), "sleeper");
	for (;;)
		nanosleep(&t, NULL);
	return NULL;
}

static volatile sig_atomic_t usr2_seen;

static void on_usr2(int sig)
{
	(void)sig;
	usr2_seen++;
}

static void handler_state(void)
{
	struct sigaction old;
	struct {
		void *handler;
		unsigned long flags;
		void *restorer;
		unsigned long mask;
	} k;
	raise(SIGUSR2);
	sigaction(SIGUSR2, NULL, &old);
	syscall(SYS_rt_sigaction, SIGUSR2, NULL, &k, sizeof(k.mask));
	printf("handler own=%d kernel=%d seen=%d\n", old.sa_handler == on_usr2,
	       k.handler == (void *)on_usr2, (int)usr2_seen);
}

static void say(const char *line)
{
	printf("ok %s\n", line);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	pthread_t t[3];
	FILE *cmds;
	char line[256];
	struct sigaction sa;
	if (argc < 2)
		return 2;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr2;
	sigaction(SIGUSR2, &sa, NULL);
	for (int i = 0; i < 5; i++)
		early[i] = before_attach();
	pthread_create(&t[0], NULL, churn, "churn-1");
	pthread_create(&t[1], NULL, churn, "churn-2");
	pthread_create(&t[2], NULL, sleeper, NULL);
	pthread_setname_np(pthread_self(), "reader");
	say("started");
	for (;;) {
		/* Opening the FIFO blocks until a writer comes; each writer may send commands. */
		cmds = fopen(argv[1], "r");
		if (!cmds)
			return 3;
		while (fgets(line, sizeof(line), cmds)) {
			unsigned long n, size;
			int code;
			line[strcspn(line, "\n")] = '\0';
			if (sscanf(line, "alloc %lu %lu", &n, &size) == 2) {
				for (unsigned long i = 0; i < n && nkept < 100000; i++)
					kept[nkept++] = command_alloc(size);
			} else if (!strcmp(line, "free")) {
				for (size_t i = 0; i < nkept; i++)
					free(kept[i]);
				nkept = 0;
				for (int i = 0; i < 5; i++) {
					free(early[i]);
					early[i] = NULL;
				}
			} else if (!strcmp(line, "fork")) {
				pid_t pid = fork();
				int st;
				if (pid == 0) {
					for (int i = 0; i < 3; i++)
						sink = child_alloc();
					_exit(3);
				}
				waitpid(pid, &st, 0);
			} else if (!strcmp(line, "sig")) {
				handler_state();
			} else if (!strcmp(line, "nodump")) {
				if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
					return 4;
			} else if (sscanf(line, "exit %d", &code) == 1) {
				say(line);
				exit(code);
			}
			say(line);
		}
		fclose(cmds);
	}
}
