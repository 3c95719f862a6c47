#!/bin/bash
# attach, detach, attach again: each capture holds what happened while attached, nothing else.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-attach.sh"

start_target
attach_bg one.bin -q $TARGET_PID
send_cmd "alloc 10 111"
detach_wait "first detach"
send_cmd "alloc 10 222"
attach_bg two.bin -q $TARGET_PID
send_cmd "alloc 10 333"
detach_wait "second detach"
running $TARGET_PID
send_cmd "exit 0"
wait $TARGET_PID || fail_ "the target failed"
for f in one two; do "$MEMPROF" parse --stacks $f.bin > $f.p || fail_ "parse $f"; done
expect_count 10 '^ALLOC .*size=111 .*"command_alloc"' one.p
expect_count 0 '^ALLOC .*size=(222|333) ' one.p
expect_count 10 '^ALLOC .*size=333 .*"command_alloc"' two.p
expect_count 0 '^ALLOC .*size=(111|222) ' two.p

# --duration ends the session by itself; the process runs on. What it did while attached is
# in the capture: a command it answered before the detach. (On a loaded machine the second
# may run out before the command is taken: then again, up to 5 times.)
start_target
for try in 1 2 3 4 5; do
	rm -f d.bin
	start=$(date +%s%N)
	# (--duration counts from the moment tracking starts: attach_bg waits for that moment.)
	attach_bg d.bin -q --duration 1 $TARGET_PID
	send_cmd "alloc 7 777"
	answered=$(( $(date +%s%N) / 1000 ))
	reap $ATTACH_PID
	expect_rc 0 "attach --duration"
	ms=$(( ($(date +%s%N) - start) / 1000000 ))
	[ "$ms" -ge 1000 ] && [ "$ms" -lt 10000 ] || fail_ "--duration 1 took $ms ms"
	running $TARGET_PID
	"$MEMPROF" parse d.bin > p
	[ "$(field end "$(grep ^TRAILER p)")" = detach ] || fail_ "trailer: $(grep ^TRAILER p)"
	# The detach's wall-clock time, in microseconds: the capture's start and the DETACH's offset.
	detached=$(( $(date -d "$(field start_time "$(grep ^HEADER p)")" +%s%6N) + $(field time_us "$(grep ^DETACH p)") ))
	[ "$answered" -gt "$detached" ] || break
	warn_ "$ME_: try $try: the target answered $(( (answered - detached) / 1000 )) ms after the detach; again"
done
[ "$answered" -le "$detached" ] || fail_ "5 times the target answered after --duration 1 had ended"
expect_count 7 '^ALLOC .*size=777 ' p
send_cmd "exit 0"
wait $TARGET_PID || fail_ "the target failed"

# Ctrl-C (SIGINT) on memprof attach detaches too.
start_target
attach_bg c.bin -q $TARGET_PID
send_cmd "alloc 3 999"
kill -INT $ATTACH_PID
reap $ATTACH_PID
expect_rc 0 "attach after SIGINT"
running $TARGET_PID
"$MEMPROF" parse c.bin > p
expect_count 3 '^ALLOC .*size=999 ' p
[ "$(field end "$(grep ^TRAILER p)")" = detach ] || fail_ "SIGINT trailer"
send_cmd "exit 0"
wait $TARGET_PID || fail_ "the target failed"

# The process ends while attached: the capture ends with it.
start_target
attach_bg e.bin -q $TARGET_PID
send_cmd "alloc 4 888"
send_cmd "exit 6"
wait $TARGET_PID; st=$?
[ "$st" -eq 6 ] || fail_ "the target exited $st"
reap $ATTACH_PID
expect_rc 0 "attach when the target exits"
t=$("$MEMPROF" parse e.bin | grep ^TRAILER)
[ "$(field end "$t")" = exit ] && [ "$(field exit_code "$t")" = 6 ] || fail_ "trailer: $t"
exit 0
