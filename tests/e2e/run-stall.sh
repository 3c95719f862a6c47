#!/bin/bash
# A collector that is slow to take a new process's rings (stopped here for 12 s, as a
# loaded machine with hundreds of new processes can be): the program waits for room,
# however long, and no event is lost. Before, a tracker whose rings the collector had
# not mapped within 10 s took it for gone: "lost the connection to the collector;
# tracking stopped", and the capture kept a few thousand of the events.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"

N=1000000
mkfifo go || framework_failure_ "mkfifo"
keep_bg -n run "$MEMPROF" run -f --follow-fork -o s.bin \
	sh -c 'read x < go; exec "$1" pairs "$2"' sh "$WORKLOADS/allocs" "$N"
mpid=$!
# memprof has the shell's capture: stop it before the program it execs connects.
wait_until 60 eval '"$MEMPROF" parse s.bin 2> /dev/null | grep -q "^THREAD"' ||
	framework_failure_ "no capture of the shell: $(cat run.err)"
kill -STOP $mpid
echo go > go
sleep 12
kill -CONT $mpid
reap $mpid
[ "$rc" -eq 0 ] || fail_ "memprof run exited $rc: $(cat run.err)"
[ "$(cat run.out)" = "pairs done" ] || fail_ "the program said '$(cat run.out)'"
! grep -q "lost the connection" run.err || fail_ "tracking stopped while the collector was stopped: $(cat run.err)"
cap=$(ls s.bin.* 2> /dev/null)
[ -n "$cap" ] || fail_ "no capture of the exec'd program: $(cat run.err)"
mp parse --stacks "$cap"
expect_rc 0 "parse the program's capture"
expect_count "$N" '^ALLOC .*size=48 .*frames=\["pairs","main"' out
exit 0
