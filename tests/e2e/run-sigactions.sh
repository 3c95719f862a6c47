#!/bin/bash
# The program's own signal handlers under the tracker, which enters them through a
# trampoline of its own (lib/tracker/signals.c) so that a signal that comes while a thread
# holds a lock of the tracker's waits until it lets go: the program reads back the
# handlers it installed (sigaction, signal; one installed by a library's constructor
# too), a one-shot handler (SA_RESETHAND) runs once, and queued real-time signals sent
# to a thread that allocates from new stacks all the time (so most land while it holds
# the trace tree's lock) all arrive, in order, with their values and sender. With the
# deferred signals queued again instead of called in order, their order breaks.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"

cat > sigs.c <<'C'
/*
 * What a program sees of its own signal handlers: sigaction and signal give
 * back what it installed; SA_SIGINFO handlers get the sender's value;
 * SA_RESETHAND handlers run once; and queued real-time signals, sent while
 * this thread allocates from new stacks all the time (the tracker's locks
 * held), arrive all, in order, with their values.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "steps.h"

#define N 3000
static volatile int got[N], ngot, bad_info, once_runs, plain_runs;
static volatile int sent_all;
static pid_t pid;
static pthread_t main_thread;

static void on_rt(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (sig != SIGRTMIN || si->si_code != SI_QUEUE || si->si_pid != pid)
		bad_info++;
	if (ngot < N)
		got[ngot++] = si->si_value.sival_int;
}
static void on_once(int sig) { (void)sig; once_runs++; }
static void on_plain(int sig) { (void)sig; plain_runs++; }

static void *sender(void *arg)
{
	(void)arg;
	for (int i = 0; i < N; i++) {
		union sigval v = { .sival_int = i };
		while (pthread_sigqueue(main_thread, SIGRTMIN, v) != 0)
			usleep(100); /* the queue is full: the receiver is behind */
		if (i % 8 == 7)
			usleep(300); /* bursts of 8: those after the first queue up behind it */
	}
	sent_all = 1;
	return NULL;
}

int main(void)
{
	struct sigaction sa, old;
	sigset_t rt, prev;
	pthread_t t;
	unsigned long long seed = 7;
	int ok = 1;
	pid = getpid();
	main_thread = pthread_self();
	/* Read back what was installed. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_rt;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGRTMIN, &sa, NULL);
	sigaction(SIGRTMIN, NULL, &old);
	if (old.sa_sigaction != on_rt || !(old.sa_flags & SA_SIGINFO) || !(old.sa_flags & SA_RESTART)) {
		printf("sigaction read back %p flags %#x\n", (void *)old.sa_sigaction, (unsigned)old.sa_flags);
		ok = 0;
	}
	if (signal(SIGUSR2, on_plain) != SIG_DFL || signal(SIGUSR2, on_plain) != on_plain) {
		printf("signal() did not give back the handler\n");
		ok = 0;
	}
	raise(SIGUSR2);
	/* One-shot. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_once;
	sa.sa_flags = SA_RESETHAND;
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGHUP, NULL, &old);
	if (old.sa_handler != on_once || !(old.sa_flags & SA_RESETHAND)) {
		printf("SA_RESETHAND read back %p flags %#x\n", (void *)old.sa_handler, (unsigned)old.sa_flags);
		ok = 0;
	}
	raise(SIGHUP);
	sigaction(SIGHUP, NULL, &old);
	if (old.sa_handler != SIG_DFL) {
		printf("after a one-shot handler ran: %p\n", (void *)old.sa_handler);
		ok = 0;
	}
	signal(SIGHUP, SIG_IGN);
	raise(SIGHUP);
	/* Queued signals to this thread while it allocates from new stacks. */
	sigemptyset(&rt);
	sigaddset(&rt, SIGRTMIN);
	pthread_sigmask(SIG_BLOCK, &rt, &prev);
	pthread_create(&t, NULL, sender, NULL);
	pthread_sigmask(SIG_SETMASK, &prev, NULL);
	while (!sent_all || ngot < N) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		free(steps[seed >> 62]((unsigned)(seed >> 20), 12, 16 + (seed >> 8) % 500));
	}
	pthread_join(t, NULL);
	for (int i = 0; i < N; i++)
		if (got[i] != i) {
			printf("signal %d arrived as number %d\n", got[i], i);
			ok = 0;
			break;
		}
	printf("rt %d bad %d once %d plain %d %s\n", ngot, bad_info, once_runs, plain_runs, ok ? "ok" : "wrong");
	return 0;
}
C
cat > early.c <<'C'
#include <signal.h>
#include <string.h>
void early_handler(int sig) { (void)sig; }
/* Installed before main, by a library's constructor. */
__attribute__((constructor)) static void install(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = early_handler;
	sigaction(SIGUSR1, &sa, NULL);
}
C
cat > early-main.c <<'C'
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
void early_handler(int sig);
struct ksa { void *handler; unsigned long flags; void *restorer; unsigned long mask; };
int main(void)
{
	struct sigaction sa;
	struct ksa k;
	sigaction(SIGUSR1, NULL, &sa);
	syscall(SYS_rt_sigaction, SIGUSR1, NULL, &k, 8); /* what the kernel has */
	printf("reads its own %d, the kernel has it %d\n", (void *)sa.sa_handler == (void *)early_handler,
	       k.handler == (void *)early_handler);
	return 0;
}
C
cc -g -O1 -fno-builtin -pthread -I"$WORKLOAD_SRC" -o sigs sigs.c || framework_failure_ "cc sigs"
cc -shared -fPIC -o libearly.so early.c && cc -o early-main early-main.c -L. -learly -Wl,-rpath,"$T" ||
	framework_failure_ "cc early"

keep -o want ./sigs
[ "$rc" -eq 0 ] || framework_failure_ "sigs, untracked: status $rc"
grep -q ' ok$' want || framework_failure_ "sigs, untracked: $(cat want)"
for i in 1 2 3; do
	run timeout 120 "$MEMPROF" run -q -f -o s.bin ./sigs
	expect_rc 0 "sigs, run $i (124: it hung)"
	cmp -s want out || fail_ "sigs, run $i: $(cat out)"
done
"$MEMPROF" parse s.bin > p || fail_ "parse"
[ "$(sed -n 's/^TRAILER .* lost=\([0-9]*\).*/\1/p' p)" = 0 ] || fail_ "events lost: $(grep ^TRAILER p)"

./early-main > out || framework_failure_ "early-main, untracked"
grep -qx 'reads its own 1, the kernel has it 1' out || framework_failure_ "early-main: $(cat out)"
mp run -q -f -o e.bin ./early-main
expect_rc 0 "early-main"
grep -qx 'reads its own 1, the kernel has it 0' out || fail_ "early-main: $(cat out)"
exit 0
