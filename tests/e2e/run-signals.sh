#!/bin/bash
# Allocations made in signal handlers. A handler that runs while its thread is inside one of the
# tracker's hooks cannot be recorded (the thread's ring and stack walker are in the middle of the
# interrupted event); those are counted, in LOST records, and said: the capture never has a gap
# nobody knows of. A handler that runs anywhere else is recorded like any other code.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"

# Every 50 us, SIGALRM's handler allocates 4321 bytes and frees them, while the main thread
# allocates and frees as fast as it can (so most signals land inside a hook); the program says
# how many times the handler ran.
cat > sigalloc.c <<'C'
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
static volatile long handled;
__attribute__((noinline)) static void on_alarm(int sig)
{
	void *volatile p = malloc(4321);
	free(p);
	handled++;
	(void)sig;
}
int main(void)
{
	struct sigaction sa;
	struct itimerval every = { { 0, 50 }, { 0, 50 } }, off = { { 0, 0 }, { 0, 0 } };
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &every, NULL);
	for (int i = 0; i < 1000000; i++) {
		void *volatile p = malloc(16 + i % 100);
		free(p);
	}
	setitimer(ITIMER_REAL, &off, NULL);
	printf("%ld\n", handled);
	return 0;
}
C
cc -g -O1 -fno-builtin -o sigalloc sigalloc.c || framework_failure_ "cc"
"$MEMPROF" run -f -o s.bin ./sigalloc > out 2> err || fail_ "run: status $?: $(cat err)"
handled=$(cat out)
[ "$handled" -gt 0 ] || framework_failure_ "the handler never ran"
"$MEMPROF" parse s.bin > p || fail_ "parse"
recorded=$(grep -c '^ALLOC .*size=4321 ' p)
lost=$(sed -n 's/^TRAILER .* lost=\([0-9]*\).*/\1/p' p)
[ -n "$lost" ] || lost=0
# Each run of the handler is either recorded (its malloc and its free) or lost (both).
[ $((recorded + lost / 2)) -eq "$handled" ] && [ $((lost % 2)) -eq 0 ] ||
	fail_ "the handler ran $handled times: $recorded recorded, $lost events lost"
[ "$lost" -eq 0 ] ||
	grep -q "^memprof: warning: 's.bin' misses $lost allocations and frees the tracker could not record" err ||
	fail_ "$lost events lost without a word: $(cat err)"
"$MEMPROF" stats s.bin > st || fail_ "stats"
[ "$lost" -eq 0 ] || grep -qx "Events lost by the tracker: $lost" st || fail_ "stats: $(head -12 st)"
# The recorded ones are the handler's: on_alarm, through the kernel's signal frame, in main.
"$MEMPROF" parse --stacks s.bin | grep -m1 '^ALLOC .*size=4321 ' > first
[ "$recorded" -eq 0 ] || grep -q 'frames=\["on_alarm","__restore_rt",' first || fail_ "a handler's stack: $(cat first)"
exit 0
