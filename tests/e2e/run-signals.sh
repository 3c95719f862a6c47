#!/bin/bash
# Allocations made in signal handlers. A handler that runs while its thread is inside one of the
# tracker's hooks cannot be recorded (the thread's ring and stack walker are in the middle of the
# interrupted event); those are counted, in LOST records, and said: the capture never has a gap
# nobody knows of. A handler that runs anywhere else is recorded like any other code.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"

# Every 50 us, SIGALRM's handler allocates 4321 bytes and frees them, while the main thread
# allocates and frees as fast as it can (so many signals land inside a hook); the program says
# how many times the handler allocated, and how many times it did not.
# The handler allocates only where it interrupted the program's own code or the tracker's:
# never inside the C library (or the loader), whose allocator may hold the very lock the
# handler's malloc takes (glibc waits for it forever there, tracked or not). The tracker's
# hooks hold no lock of the allocator's while their own code runs.
cat > sigalloc.c <<'C'
#define _GNU_SOURCE
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <ucontext.h>
static volatile long handled, skipped;
static uintptr_t code[16][2];
static int nr_code;
/* The executable segments of the program (the first object, unnamed) and of the tracker. */
static int find_code(struct dl_phdr_info *info, size_t size, void *first)
{
	int *is_first = first;
	(void)size;
	if (*is_first || strstr(info->dlpi_name, "libmemprof")) {
		for (int i = 0; i < info->dlpi_phnum && nr_code < 16; i++) {
			const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
			if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
				code[nr_code][0] = info->dlpi_addr + ph->p_vaddr;
				code[nr_code][1] = code[nr_code][0] + ph->p_memsz;
				nr_code++;
			}
		}
	}
	*is_first = 0;
	return 0;
}
static int may_allocate(uintptr_t pc)
{
	for (int i = 0; i < nr_code; i++)
		if (pc >= code[i][0] && pc < code[i][1])
			return 1;
	return 0;
}
__attribute__((noinline)) static void on_alarm(int sig, siginfo_t *si, void *uc_)
{
	ucontext_t *uc = uc_;
	(void)sig; (void)si;
	if (!may_allocate((uintptr_t)uc->uc_mcontext.gregs[REG_RIP])) {
		skipped++;
		return;
	}
	void *volatile p = malloc(4321);
	free(p);
	handled++;
}
int main(void)
{
	struct sigaction sa;
	struct itimerval every = { { 0, 50 }, { 0, 50 } }, off = { { 0, 0 }, { 0, 0 } };
	int first = 1;
	dl_iterate_phdr(find_code, &first);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_alarm;
	sa.sa_flags = SA_RESTART | SA_SIGINFO;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &every, NULL);
	for (int i = 0; i < 1000000; i++) {
		void *volatile p = malloc(16 + i % 100);
		free(p);
	}
	setitimer(ITIMER_REAL, &off, NULL);
	printf("%ld %ld\n", handled, skipped);
	return 0;
}
C
[ "$(uname -m)" = x86_64 ] || skip_ "the workload reads the interrupted pc on x86_64 only"
cc -g -O1 -fno-builtin -o sigalloc sigalloc.c || framework_failure_ "cc"
# Untracked it is well defined: it ends.
run timeout 60 ./sigalloc
[ "$rc" -eq 0 ] || framework_failure_ "sigalloc, untracked: status $rc"
mp run -f -o s.bin ./sigalloc
expect_rc 0 "run"
read -r handled skipped < out
[ "$handled" -gt 0 ] || framework_failure_ "the handler never allocated ($skipped times it did not)"
"$MEMPROF" parse s.bin > p || fail_ "parse"
recorded=$(grep -c '^ALLOC .*size=4321 ' p)
lost=$(sed -n 's/^TRAILER .* lost=\([0-9]*\).*/\1/p' p)
[ -n "$lost" ] || lost=0
# Each run of the handler is either recorded (its malloc and its free) or lost (both).
[ $((recorded + lost / 2)) -eq "$handled" ] && [ $((lost % 2)) -eq 0 ] ||
	fail_ "the handler allocated $handled times: $recorded recorded, $lost events lost"
[ "$lost" -eq 0 ] ||
	grep -q "^memprof: warning: 's.bin' misses $lost allocations and frees the tracker could not record" err ||
	fail_ "$lost events lost without a word: $(cat err)"
"$MEMPROF" stats s.bin > st || fail_ "stats"
[ "$lost" -eq 0 ] || grep -qx "Events lost by the tracker: $lost" st || fail_ "stats: $(head -12 st)"
# The recorded ones are the handler's: on_alarm, through the kernel's signal frame, in main.
"$MEMPROF" parse --stacks s.bin | grep -m1 '^ALLOC .*size=4321 ' > first
[ "$recorded" -eq 0 ] || grep -q 'frames=\["on_alarm","__restore_rt",' first || fail_ "a handler's stack: $(cat first)"
exit 0
