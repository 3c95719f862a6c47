#!/bin/bash
# memprof ctl PID stop under memprof run --paused finishes the capture at once: when stop
# returns, the capture has its trailer, its duration is the time it recorded (not the
# program's life, which goes on), and memprof says nothing alarming about it, nor about
# the captures stopped after it when the program ends.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-attachee.sh"

now_us() { echo $(( $(date +%s%N) / 1000 )); }
start_target "$MEMPROF" run --paused -o c.bin
RUN_PID=$TARGET_PID
TARGET_PID=$(sed -n "s/^memprof: .* runs as pid \([0-9]*\) with tracking paused; .*/\1/p" target.err)
[ -n "$TARGET_PID" ] || fail_ "memprof run --paused did not say the program's pid: $(cat target.err)"

before=$(now_us)
mp ctl "$TARGET_PID" start
expect_rc 0 start
send_cmd "alloc 3 3000"
sleep 1
mp ctl "$TARGET_PID" stop
after=$(now_us)
expect_rc 0 stop
[ "$(cat out)" = "process $TARGET_PID: stopped: '$PWD/c.bin' is complete" ] || fail_ "stop: $(cat out)"
# Complete as stop returned, the program still running.
kill -0 "$TARGET_PID" || fail_ "the program is gone"
keep -o p "$MEMPROF" parse c.bin
expect_rc 0 "parse right after stop"
trailer=$(grep ^TRAILER p) || fail_ "no trailer right after stop"
[ "$(field end "$trailer")" = detach ] || fail_ "trailer: $trailer"
# Recorded between the start and the stop: at most that long, however fast the machine is.
duration=$(field duration_us "$trailer")
[ "$duration" -le $((after - before)) ] || fail_ "duration ${duration} us, but start to stop took $((after - before)) us"
mp stats c.bin
expect_rc 0 stats
expect_no_err "stats right after stop"
sum=$(md5sum < c.bin)

# The program lives on, longer than it recorded; its end leaves the capture as it was.
# Two more captures, each stopped as quickly: each finished, nothing said of their sockets.
sleep 1
for n in 2 3; do
	mp ctl "$TARGET_PID" start
	expect_rc 0 "start $n"
	mp ctl "$TARGET_PID" stop
	expect_rc 0 "stop $n"
	[ "$(cat out)" = "process $TARGET_PID: stopped: '$PWD/c.bin.$n' is complete" ] || fail_ "stop $n: $(cat out)"
done
sleep 1
send_cmd "exit 3"
wait $RUN_PID; st=$?
[ "$st" -eq 3 ] || fail_ "memprof run exited $st, expected the program's 3: $(cat target.err)"
[ "$(md5sum < c.bin)" = "$sum" ] || fail_ "the capture changed after stop"
"$MEMPROF" parse c.bin > p || fail_ "parse"
[ "$(field duration_us "$(grep ^TRAILER p)")" = "$duration" ] || fail_ "the duration changed"
[ "$(grep -c '^TRAILER' p)" -eq 1 ] || fail_ "$(grep -c '^TRAILER' p) trailers"
# Nothing that reads like trouble: the socket's end was the stop.
! grep -q "closed memprof's socket" target.err || fail_ "memprof run: $(cat target.err)"
grep -q "^memprof: wrote 'c.bin': [0-9]* allocations, " target.err || fail_ "no line for c.bin: $(cat target.err)"
[ "$(grep -c 'size=3000 ' p)" -eq 3 ] || fail_ "c.bin lacks the 3 blocks of 3000 bytes"
exit 0
