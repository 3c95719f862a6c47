#!/bin/bash
# Under memprof run the tracker listens on its control socket but starts the thread that
# answers only when a request comes, so that a program of one thread keeps glibc's
# single-threaded paths. An idle program is woken by its collector (ptrace, once), a busy one
# starts the thread itself; the program's output, signals and exit status stay its own; a
# wake that cannot be done is said to the asker, who can ask again.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-attachee.sh"

# No thread of ours, and glibc still takes the program (and a followed child) for one of a
# single thread.
"$MEMPROF" run -q -f -o r.bin "$WORKLOADS/crash" names > names || fail_ "crash names failed"
[ "$(cat names)" = crash ] || fail_ "threads of a program under memprof run: $(tr '\n' ' ' < names)"
"$MEMPROF" run -q -f --follow-fork -o f.bin sh -c "\"$WORKLOADS/crash\" single" > single ||
	fail_ "crash single failed"
[ "$(cat single)" = single_threaded=1 ] || fail_ "under memprof run --follow-fork: $(cat single)"

# An idle program (in pause(), with a SIGTERM handler that ends it with status 1).
keep_bg -o w.out -e w.err "$MEMPROF" run -f -o w.bin "$WORKLOADS/crash" term
runpid=$!
wait_until 60 grep -q waiting w.out || fail_ "crash term did not start: $(cat w.err)"
target=$(pgrep -P "$runpid" -x crash) || fail_ "no crash child of memprof run $runpid"
threads() { cat /proc/"$target"/task/*/comm | sort | tr '\n' ' '; }
[ "$(threads)" = "crash " ] || fail_ "threads before a request: $(threads)"
# The collector watches the socket from its next look at the stream (every 50 ms).
sleep 0.2
mp ctl "$target" status
expect_rc 0 "status of an idle program"
expect_out "process $target: recording into '$T/w.bin'"
[ "$(threads)" = "crash memprof-ctl " ] || fail_ "threads after a request: $(threads)"
running "$target"
mp ctl "$target" snapshot
expect_rc 0 "snapshot of an idle program"
expect_out "snapshot 1 written to"
"$MEMPROF" stats "w.bin.snap.1" > /dev/null || fail_ "the snapshot is not a capture"
kill -TERM "$target"
reap "$runpid"
expect_rc 1 "memprof run of crash term, which returns 1 after its SIGTERM"
grep -qx waiting w.out || fail_ "the program's output changed: $(cat w.out)"
"$MEMPROF" parse w.bin > p || fail_ "w.bin is not a complete capture"
grep -q '^EXIT' p || fail_ "no exit in w.bin"

# A wake that cannot be done: the program is traced by another tracer (strace), so the
# collector cannot stop it. The asker hears why, in one line; once strace is gone, a new
# request wakes it.
if command -v strace > /dev/null; then
	keep_bg -o s.out -e s.err "$MEMPROF" run -f -o s.bin "$WORKLOADS/crash" term
	runpid=$!
	wait_until 60 grep -q waiting s.out || fail_ "crash term did not start: $(cat s.err)"
	target=$(pgrep -P "$runpid" -x crash) || fail_ "no crash child of memprof run $runpid"
	sleep 0.2
	strace -q -o /dev/null -p "$target" &
	tracer=$!
	wait_until 60 grep -qE '^TracerPid:[[:space:]]+[1-9]' "/proc/$target/status" || fail_ "strace did not attach"
	mp ctl "$target" status
	expect_rc 1 "status of a program that cannot be woken"
	expect_one_line_err
	expect_err "process $target: its tracker starts the thread that answers requests once asked, and memprof could not ask it ("
	expect_err "): it answers once the program allocates or frees again"
	kill "$tracer"
	wait "$tracer"
	wait_until 60 grep -qE '^TracerPid:[[:space:]]+0' "/proc/$target/status" || fail_ "strace did not let go"
	mp ctl "$target" status
	expect_rc 0 "status once the other tracer is gone"
	expect_out "recording into '$T/s.bin'"
	kill -TERM "$target"
	reap "$runpid"
	expect_rc 1 "memprof run of crash term, traced a while by strace"
	expect_err "memprof: warning: process $target: its tracker starts the thread that answers requests once asked, and memprof could not ask it ("
	! grep -q "process $target: process $target" s.err || fail_ "the pid said twice: $(cat s.err)"
fi

# A busy program of one thread starts the thread itself, where a ring passes a quarter: it
# answers even while another tracer keeps memprof from stopping it.
cat > busy.c <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(void)
{
	unsigned long n = 0;
	printf("busy\n");
	fflush(stdout);
	while (access("stop", F_OK) != 0)
		for (int i = 0; i < 100000; i++) {
			void *volatile p = malloc(16 + i % 64);
			free(p);
			n++;
		}
	printf("done %d\n", n > 0);
	return 0;
}
C
cc -O2 -o busy busy.c || framework_failure_ "cc busy"
if command -v strace > /dev/null; then
	rm -f stop
	keep_bg -o u.out -e u.err "$MEMPROF" run -f -o u.bin ./busy
	runpid=$!
	wait_until 60 grep -q busy u.out || fail_ "busy did not start: $(cat u.err)"
	target=$(pgrep -P "$runpid" -x busy) || fail_ "no busy child of memprof run $runpid"
	[ "$(threads)" = "busy " ] || fail_ "threads of busy before a request: $(threads)"
	strace -q -o /dev/null -p "$target" &
	tracer=$!
	wait_until 60 grep -qE '^TracerPid:[[:space:]]+[1-9]' "/proc/$target/status" || fail_ "strace did not attach"
	mp ctl "$target" status
	expect_rc 0 "status of a busy program of one thread, traced by strace"
	expect_out "recording into '$T/u.bin'"
	[ "$(threads)" = "busy memprof-ctl " ] || fail_ "threads of busy after a request: $(threads)"
	kill "$tracer"
	wait "$tracer"
	touch stop
	reap "$runpid"
	expect_rc 0 "memprof run of busy"
	[ "$(tail -1 u.out)" = "done 1" ] || fail_ "busy said: $(cat u.out)"
fi

# A program of threads (the attachee's two allocate all the time) starts the thread at once
# when its second thread records; it answers, and stops.
start_target "$MEMPROF" run -f -o b.bin
runpid=$TARGET_PID
TARGET_PID=$(pgrep -P "$runpid") || fail_ "no attachee child of memprof run $runpid"
target=$TARGET_PID
has_ctl() { grep -qx memprof-ctl /proc/"$target"/task/*/comm; }
wait_until 60 has_ctl ||
	fail_ "no control thread in a program whose threads allocate: $(threads)"
mp ctl "$TARGET_PID" status
expect_rc 0 "status of a busy program"
expect_out "recording into '$T/b.bin'"
send_cmd "alloc 3 3333"
mp ctl "$TARGET_PID" stop
expect_rc 0 "stop of a busy program"
expect_out "stopped: '$T/b.bin' is complete"
n=$("$MEMPROF" parse b.bin | grep -c '^ALLOC .* size=3333 ')
[ "$n" = 3 ] || fail_ "$n allocations of 3333 bytes in b.bin, expected 3"
send_cmd "exit 4"
wait "$runpid"; st=$?
[ "$st" -eq 4 ] || fail_ "memprof run exited $st, expected the program's 4: $(cat target.err)"
