#!/bin/bash
# memprof attach into a process of another pid namespace (unshare --pid; a container that
# shares the host's files): the process numbers itself, its threads and the collector
# otherwise than the collector does. Before, its capture was taken for a child's
# (FILE.1, FILE left empty, status 1), and a collector that fell behind for 50 ms stopped
# tracking for good: its pid, looked up inside the namespace, was no process there.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-attach.sh"

[ "$(id -u)" -eq 0 ] || skip_ "needs root for a pid namespace"
command -v unshare > /dev/null || skip_ "needs unshare"
unshare --pid --fork true 2> /dev/null || skip_ "cannot make a pid namespace here"

start_target unshare --pid --fork --kill-child
# (unshare forks the attachee: pid 1 in its namespace.)
TARGET_PID=$(tr -d " " < "/proc/$TARGET_PID/task/$TARGET_PID/children")
[ -n "$TARGET_PID" ] && grep -q "^NSpid:.*[[:space:]]1$" "/proc/$TARGET_PID/status" ||
	framework_failure_ "the attachee is not pid 1 of a namespace of its own"

attach_bg n.bin -q --follow-fork $TARGET_PID
# The collector stops reading while the target's two threads keep allocating: their rings
# (128 KiB) fill and they wait, checking now and then that the collector lives.
collector=$ATTACH_PID
kill -STOP $collector
sleep 1
kill -CONT $collector
send_cmd "alloc 10 1000"
send_cmd "fork"
send_cmd "free"
detach_wait "memprof detach $TARGET_PID (the pid here)"
! grep -q "tracking stopped" target.err || fail_ "tracking stopped in the target: $(cat target.err)"
[ ! -s attach.err ] || fail_ "memprof attach said: $(cat attach.err)"
"$MEMPROF" parse --stacks n.bin > p || fail_ "parse n.bin"
[ "$(field pid "$(grep ^HEADER p)")" = 1 ] || fail_ "the header's pid: $(grep ^HEADER p)"
grep -q '^TRAILER .*end=detach' p || fail_ "not ended by the detach: $(grep ^TRAILER p)"
expect_count 10 '^ALLOC .*size=1000 .*frames=\["command_alloc"' p
for b in $(sed -n 's/^ALLOC .* block=\([0-9]*\) size=1000 .*/\1/p' p); do
	grep -q "^FREE .* block=$b\$" p || fail_ "block $b (1000 bytes) was not freed"
done
# The churn threads' allocations went on through the stall: none lost, none unmatched.
grep -q '^LOST' p && fail_ "events lost: $(grep ^LOST p | head -3)"
[ "$(grep -c '^ALLOC .*frames=\["churn_alloc"' p)" -gt 0 ] || fail_ "no churn allocations"
# The child's capture is named by the pid its FORK record holds (the namespace's).
child=$(field child_pid "$(grep ^FORK p)")
[ -n "$child" ] && [ -f "n.bin.$child" ] || fail_ "no capture n.bin.$child: $(ls n.bin*)"
"$MEMPROF" parse --stacks "n.bin.$child" > c || fail_ "parse the child's capture"
expect_count 3 '^ALLOC .*size=333 .*frames=\["child_alloc","main"' c
running $TARGET_PID
send_cmd "exit 0"
exit 0
