#!/bin/bash
# Signal handlers that interrupt the tracker and do not come back at once.
# 1. One that waits, in read(2), for another thread, which allocates meanwhile
#    and then lets it go. Where it interrupted its thread in the middle of an
#    event, the collector (and a thread taking over the order counter) must
#    not wait for that event: the thread is asleep there, so the others are
#    merged past it. Where its thread held a lock of the tracker's, the signal
#    waits for the lock's release (with new stacks all the time, its thread
#    holds the trace tree's lock for most of its allocations: it hangs when
#    the tracker's trampoline does not hold the signal back). Before, the other thread's
#    ring filled and both waited for good.
# 2. One that never returns: it leaves by siglongjmp whenever the interrupted
#    instruction is the tracker's (never the C library's, which would be
#    undefined; untracked, it never jumps). The thread's next hook finds the
#    one it left (at or above its stack pointer: not nested) and records
#    again. Before, every later event of the thread was counted lost, and an
#    order counter or lock the hook held stopped the other threads.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"

# counts PARSED CALLS ALLOCS JUMPS LOST: every event of the other thread (the
# index whose allocations are of 24 to 223 bytes: not always 1, as a thread of
# the tracker's may take a ring first; ALLOCS allocations and as many frees) is
# in the output of memprof parse, and of the main thread's CALLS allocations of
# 1000 to 1049 bytes all but those a jump cut short or that came right after
# one (counted LOST).
counts() {
	awk -v calls="$2" -v others="$3" -v jumps="$4" -v lost="$5" '
		/^ALLOC / { split($2, t, "="); split($5, s, "="); a[t[2]]++
			    if (s[2] >= 24 && s[2] < 224) small[t[2]]++
			    else if (s[2] >= 1000 && s[2] < 1050) big[t[2]]++ }
		/^FREE /  { split($2, t, "="); f[t[2]]++ }
		END {
			o = -1
			for (i in small) if (o < 0 || small[i] > small[o]) o = i
			a1 = o < 0 ? 0 : a[o]; f1 = o < 0 ? 0 : f[o]
			for (i in big) if (i != o) a0 += big[i]
			if (a1 != others || f1 != others) {
				printf "other thread (index %s): %d allocations, %d frees of %d\n", o, a1, f1, others; exit 1 }
			if (a0 > calls || a0 < calls - jumps - lost) {
				printf "main thread: %d allocations of %d calls (%d jumps, %d lost)\n", a0, calls, jumps, lost; exit 1 }
		}' "$1"
}

cat > blocker.c <<'C'
/*
 * A SIGUSR1 handler that waits, in read(2), for another thread: that thread
 * sends the signal, waits for the handler to start, allocates enough to fill
 * a tracker's ring many times over, then lets the handler go. The main thread
 * allocates all along, so the handler interrupts it anywhere, the tracker
 * included. Untracked this is well defined (read and write are
 * async-signal-safe, and each thread allocates from its own arena).
 * With DEPTH (argv[3]), both threads allocate from stacks never seen before
 * (random paths DEPTH and DEPTH - 2 calls deep, steps.h: millions), so the
 * tracker's tree lock is taken for most allocations, and the other thread
 * needs it while the handler waits.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <errno.h>
#include "steps.h"

static int entered[2], release[2];
static volatile int done;
static long rounds, per_round;
static int depth;

static void on_usr1(int sig)
{
	char c = 1;
	int saved = errno;
	(void)sig;
	if (write(entered[1], &c, 1) != 1 || read(release[0], &c, 1) != 1)
		_exit(3);
	errno = saved;
}

static void *other(void *arg)
{
	pthread_t main_thread = *(pthread_t *)arg;
	char c = 0;
	for (long r = 0; r < rounds; r++) {
		pthread_kill(main_thread, SIGUSR1);
		if (read(entered[0], &c, 1) != 1)
			_exit(4);
		for (long i = 0; i < per_round; i++) {
			unsigned path = (unsigned)(r * per_round + i) * 2654435761u;
			void *volatile p = depth ? steps[path & 3](path >> 2, depth - 2, 24 + i % 200)
						 : malloc(24 + i % 200);
			free(p);
		}
		if (write(release[1], &c, 1) != 1)
			_exit(5);
	}
	done = 1;
	return NULL;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	pthread_t t, self = pthread_self();
	sigset_t usr1, old;
	long calls = 0;
	unsigned long long seed = 1;
	rounds = argc > 1 ? atol(argv[1]) : 50;
	per_round = argc > 2 ? atol(argv[2]) : 40000;
	depth = argc > 3 ? atoi(argv[3]) : 0;
	if (pipe(entered) || pipe(release))
		return 2;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, &old); /* the other thread never takes it */
	pthread_create(&t, NULL, other, &self);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	while (!done) {
		void *volatile p;
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		p = depth ? steps[seed >> 62]((unsigned)(seed >> 20), depth, 1000 + calls % 50)
			  : malloc(1000 + calls % 50);
		free(p);
		calls++;
	}
	pthread_join(t, NULL);
	printf("%ld\n", calls);
	return 0;
}
C
cat > jumper.c <<'C'
/*
 * A SIGALRM handler that leaves by siglongjmp whenever it interrupted the
 * tracker's own code (never the C library's: that would be undefined), while
 * a second thread, which never takes the signal, allocates and frees.
 * Untracked, the handler never jumps (no tracker code runs).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <ucontext.h>
#include <link.h>

static sigjmp_buf env;
static volatile sig_atomic_t armed;
static volatile long jumps, signals;
static uintptr_t lo, hi;

static int find_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	if (!strstr(info->dlpi_name, "libmemprof"))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			lo = info->dlpi_addr + ph->p_vaddr;
			hi = lo + ph->p_memsz;
		}
	}
	(void)data;
	return 1;
}

static void on_alarm(int sig, siginfo_t *si, void *uc_)
{
	ucontext_t *uc = uc_;
	uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	(void)sig; (void)si;
	signals++;
	if (armed && pc >= lo && pc < hi) {
		jumps++;
		siglongjmp(env, 1);
	}
}

static void *other(void *arg)
{
	long n = (long)arg;
	for (long i = 0; i < n; i++) {
		void *volatile p = malloc(24 + i % 200);
		free(p);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	long want = argc > 1 ? atol(argv[1]) : 100, other_n = argc > 2 ? atol(argv[2]) : 300000;
	struct sigaction sa;
	struct itimerval every = { { 0, 100 }, { 0, 100 } }, off = { { 0, 0 }, { 0, 0 } };
	sigset_t alrm, old;
	pthread_t t;
	volatile long calls = 0;
	dl_iterate_phdr(find_cb, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_alarm;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGALRM, &sa, NULL);
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &alrm, &old); /* the other thread never takes it */
	pthread_create(&t, NULL, other, (void *)other_n);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	setitimer(ITIMER_REAL, &every, NULL);
	/* Until the handler has jumped out of the tracker often enough, or 4 million calls. */
	while (jumps < want && calls < 4000000) {
		if (sigsetjmp(env, 1) == 0) {
			armed = 1;
			for (int i = 0; i < 50; i++) {
				calls++;
				void *volatile p = malloc(1000 + i);
				free(p);
			}
		}
		armed = 0;
	}
	setitimer(ITIMER_REAL, &off, NULL);
	pthread_join(t, NULL);
	printf("calls %ld jumps %ld signals %ld\n", (long)calls, (long)jumps, (long)signals);
	return 0;
}
C
cc -g -O1 -fno-builtin -pthread -I"$WORKLOAD_SRC" -o blocker blocker.c || framework_failure_ "cc blocker"
cc -g -O1 -fno-builtin -pthread -o jumper jumper.c || framework_failure_ "cc jumper"

# 1. Untracked it is well defined: it ends, and prints how many times it allocated.
run timeout 60 ./blocker 20 40000
[ "$rc" -eq 0 ] || framework_failure_ "blocker, untracked: status $rc"
for mode in run direct; do
	rm -f b.bin
	if [ $mode = run ]; then
		run timeout 120 "$MEMPROF" run -q -f -o b.bin ./blocker 50 40000
	else
		run timeout 120 env MEMPROF_OUTPUT="$T/b.bin" LD_PRELOAD="$TRACKER_LIB" ./blocker 50 40000
	fi
	expect_rc 0 "blocker, $mode (124: it hung)"
	calls=$(cat out)
	[ -n "$calls" ] || fail_ "blocker, $mode: no output"
	"$MEMPROF" parse b.bin > p || fail_ "blocker, $mode: parse: $(head -3 p)"
	counts p "$calls" 2000000 0 0 > bad || fail_ "blocker, $mode: $(cat bad)"
done

# The same where the handler mostly interrupts its thread holding the trace tree's lock.
run timeout 60 ./blocker 20 2000 11
[ "$rc" -eq 0 ] || framework_failure_ "blocker, new stacks, untracked: status $rc"
run timeout 120 "$MEMPROF" run -q -f -o t.bin ./blocker 100 2000 11
expect_rc 0 "blocker, new stacks (124: it hung)"
calls=$(cat out)
"$MEMPROF" parse t.bin > p || fail_ "blocker, new stacks: parse: $(head -3 p)"
counts p "$calls" 200000 0 0 > bad || fail_ "blocker, new stacks: $(cat bad)"

# 2.
run timeout 60 ./jumper 100 300000
[ "$rc" -eq 0 ] || framework_failure_ "jumper, untracked: status $rc"
grep -q " jumps 0 " out || framework_failure_ "jumper, untracked, the handler jumped: $(cat out)"
run timeout 120 "$MEMPROF" run -q -f -o j.bin ./jumper 100 300000
expect_rc 0 "jumper (124: it hung)"
read -r _ calls _ jumps _ < out
[ "$jumps" -ge 100 ] || skip_ "the handler jumped out of the tracker only $jumps times in $calls calls"
"$MEMPROF" parse j.bin > p || fail_ "jumper: parse: $(head -3 p)"
lost=$(sed -n 's/^TRAILER .* lost=\([0-9]*\).*/\1/p' p)
[ -n "$lost" ] || lost=0
[ "$lost" -le $((2 * jumps)) ] || fail_ "jumper: $lost events lost for $jumps jumps"
counts p "$calls" 300000 "$jumps" "$lost" > bad || fail_ "jumper: $(cat bad)"
exit 0
