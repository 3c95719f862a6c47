#!/bin/bash
# The allocation path makes no system call: in the steady state (every stack seen before),
# the program's threads make at most one system call per 1,000 events beyond what the same
# program makes untracked, on a C++ std::map of strings (operator new, std::string) and on
# a C program whose two threads allocate through 256 call paths; and as few where nearly
# every allocation has a new stack (the same program, 4^10 paths). Counted with strace(1),
# from the difference between a short and a long run of each (start-up counts the same in
# both), so it measures the events, not the time. futex calls are left out: they are the
# rings' (waking the collector when a ring is half full, waiting for room when it is full,
# which strace's slowing of the collector makes frequent) and the program's own locks.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"

command -v strace > /dev/null || skip_ "strace is not installed"
strace -f -qq -o /dev/null true 2> /dev/null || skip_ "strace cannot trace here"

cat > heavy.c <<'C'
/*
 * Two threads allocate and free through 4^DEPTH call paths (steps.h; 256
 * by default, with DEPTH 10 nearly every allocation has a stack never seen before),
 * sizes 8 B to 8 KiB, 256 blocks live each.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include "steps.h"
static long pairs;
static int depth;
static void *work(void *arg)
{
	unsigned long long seed = (unsigned long long)(size_t)arg * 0x9e3779b97f4a7c15ull + 1;
	void *live[256] = { 0 };
	for (long i = 0; i < pairs; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		unsigned r = (unsigned)(seed >> 32), slot = r & 255;
		unsigned path = (unsigned)(seed >> 8) & ((1u << (2 * depth)) - 1);
		free(live[slot]);
		live[slot] = steps[r >> 30](path, depth, 8 + (r >> 16) % 8192);
	}
	for (int k = 0; k < 256; k++)
		free(live[k]);
	return NULL;
}
int main(int argc, char **argv)
{
	pthread_t t[2];
	pairs = argc > 2 ? atol(argv[2]) : 10000;
	depth = argc > 1 ? atoi(argv[1]) : 4;
	for (long k = 0; k < 2; k++)
		pthread_create(&t[k], NULL, work, (void *)k);
	for (int k = 0; k < 2; k++)
		pthread_join(t[k], NULL);
	puts("heavy done");
	return 0;
}
C
cat > strmap.cc <<'C'
// A std::map<std::string, std::string> built, searched, thinned and dropped, ROUNDS times.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 2;
	unsigned long sum = 0;
	for (int r = 0; r < rounds; r++) {
		std::map<std::string, std::string> m;
		for (int i = 0; i < 2000; i++) {
			std::string k = "key/" + std::to_string(i * 7919 % 2000) + "/padding-past-sso";
			std::string v(20 + i % 50, 'v');
			v += std::to_string(i);
			m[k] = v;
		}
		for (int i = 0; i < 2000; i += 3) {
			auto it = m.find("key/" + std::to_string(i) + "/padding-past-sso");
			if (it != m.end()) {
				sum += it->second.size();
				it->second += " grown past its capacity";
			}
		}
		for (int i = 0; i < 2000; i += 2)
			m.erase("key/" + std::to_string(i) + "/padding-past-sso");
		sum += m.size();
	}
	printf("strmap %lu\n", sum);
	return 0;
}
C
cc -g -O2 -pthread -I"$WORKLOAD_SRC" -o heavy heavy.c || framework_failure_ "cc heavy"
have_cxx=0
if command -v c++ > /dev/null; then
	c++ -g -O2 -o strmap strmap.cc || framework_failure_ "c++ strmap"
	have_cxx=1
fi

# calls TRACE [TID...]: system calls in strace -f's TRACE other than futex, of those
# threads (all when none are named).
calls() {
	local trace=$1; shift
	awk -v tids="$*" '
		BEGIN { n = split(tids, t, " "); for (i = 1; i <= n; i++) want[t[i]] = 1 }
		$2 ~ /^<\.\.\./ || $2 ~ /^\+\+\+/ || $2 ~ /^---/ { next }
		{ name = $2; sub(/\(.*/, "", name) }
		name == "futex" { next }
		n == 0 || ($1 in want) { c++ }
		END { print c + 0 }' "$trace"
}
# tracked NAME ARGS...: system calls of the program's threads (those with THREAD records)
# under memprof run, in $sys, and allocations + frees in $events.
tracked() {
	local name=$1; shift
	rm -f "$name.bin"
	keep -n "$name" timeout 600 strace -f -qq -o "$name.trace" "$MEMPROF" run -q -f -o "$name.bin" "$@"
	expect_rc 0 "$name: memprof run under strace"
	"$MEMPROF" parse "$name.bin" > "$name.p" || fail_ "$name: parse"
	tids=$(sed -n 's/^THREAD .* tid=\([0-9]*\) .*/\1/p' "$name.p" | sort -u)
	[ -n "$tids" ] || fail_ "$name: no THREAD record"
	sys=$(calls "$name.trace" $tids)
	events=$(awk '/^TRAILER/ { for (i = 1; i <= NF; i++) { split($i, f, "="); if (f[1] == "allocs" || f[1] == "frees") e += f[2] } }
		END { print e + 0 }' "$name.p")
}
# untracked NAME ARGS...: the program's own system calls, in $sys.
untracked() {
	local name=$1; shift
	keep -n "$name" timeout 600 strace -f -qq -o "$name.trace" "$@"
	[ "$rc" -eq 0 ] || framework_failure_ "$name: untracked under strace: status $rc"
	sys=$(calls "$name.trace")
}
# guard NAME SHORT LONG PROGRAM...: the steady state's extra calls per 1,000 events.
guard() {
	local name=$1 short=$2 long=$3; shift 3
	tracked "$name-short" "$@" "$short"; t_short=$sys e_short=$events
	tracked "$name-long" "$@" "$long"; t_long=$sys e_long=$events
	untracked "$name-u-short" "$@" "$short"; u_short=$sys
	untracked "$name-u-long" "$@" "$long"; u_long=$sys
	extra=$(( (t_long - t_short) - (u_long - u_short) )) ev=$((e_long - e_short))
	[ "$ev" -ge 200000 ] || framework_failure_ "$name: only $ev more events in the long run"
	echo "$name: $extra system calls beyond the program's for $ev events (tracked $t_short, $t_long; untracked $u_short, $u_long)"
	[ $((extra * 1000)) -le "$ev" ] || {
		for f in "$name-short" "$name-long"; do
			echo "  $f:" >&2
			awk '$2 !~ /^<\.\.\./ { n = $2; sub(/\(.*/, "", n); c[n]++ } END { for (k in c) print "   ", c[k], k }' \
				"$f.trace" | sort -rn | head -8 >&2
		done
		fail_ "$name: $extra system calls beyond the program's for $ev events (more than 1 per 1,000)"
	}
}

# The tracker's start in a new program: a process that allocates once makes at most 500 system
# calls beyond its own untracked (some 325 here: loading the tracker and its libraries, its
# rings, socket and threads, the signal handlers looked at). It made 1,450 when the tracker
# held every free descriptor below its own (one fcntl each, some 1,100) to keep libunwind's
# pipe out of the program's way: a fifth of a millisecond for every process of a build.
cat > once.c <<'C'
#include <stdio.h>
#include <stdlib.h>
int main(void)
{
	char *p = malloc(100);
	printf("once %d\n", p != NULL);
	free(p);
	return 0;
}
C
cc -O2 -o once once.c || framework_failure_ "cc once"
keep -n once timeout 600 strace -f -qq -o once.trace "$MEMPROF" run -q -f -o once.bin ./once
expect_rc 0 "once: memprof run under strace"
[ "$(cat once.out)" = "once 1" ] || fail_ "once: the program said '$(cat once.out)'"
pid=$(awk '$2 ~ /^execve\("\.\/once"/ { print $1; exit }' once.trace)
[ -n "$pid" ] || fail_ "once: no exec of the program in the trace"
start=$(calls once.trace "$pid")
untracked once-u ./once
echo "start-up: $((start - sys)) system calls beyond the program's (tracked $start, untracked $sys)"
[ $((start - sys)) -le 500 ] || {
	awk -v p="$pid" '$1 == p && $2 !~ /^<\.\.\./ { n = $2; sub(/\(.*/, "", n); c[n]++ }
		END { for (k in c) print "   ", c[k], k }' once.trace | sort -rn | head -8 >&2
	fail_ "once: the tracker's start made $((start - sys)) system calls (more than 500)"
}
# ... and no thread: the collector samples the process, and the control socket's thread
# starts only when a request comes (ctl-lazy.sh).
clones=$(awk -v p="$pid" '$1 == p && $2 ~ /^clone3?\(/ { c++ } END { print c + 0 }' once.trace)
[ "$clones" -eq 0 ] || fail_ "once: the tracker made $clones threads in a program of one thread"

[ "$have_cxx" = 1 ] && guard strmap 3 30 ./strmap
guard heavy 20000 200000 ./heavy 4
guard new-stacks 20000 200000 ./heavy 10
[ "$have_cxx" = 1 ] || skip_ "no C++ compiler: the C program alone passed"
exit 0
