#!/bin/bash
# Sampled captures of a running program: memprof ctl PID start --sampling-interval
# under memprof run --paused (a start without it samples as the tracker was told,
# every event here), and memprof attach --sampling-interval. Blocks of the
# interval and up are recorded all: their counts are exact; the program's
# churn of 64-byte blocks is sampled: a few of them at most, each matched by
# its free.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-attachee.sh"

interval_of() { "$MEMPROF" parse "$1" | sed -n 's/^HEADER .* sampling_interval=\([0-9]*\) .*/\1/p'; }
# sizes FILE: "count x size" of the commanded allocations.
sizes() { "$MEMPROF" parse --stacks "$1" | sed -n 's/^ALLOC .* size=\([0-9]*\) .*frames=\["command_alloc".*/\1/p' | sort -n | uniq -c | awk '{print $1 "x" $2}' | tr '\n' ' '; }
ctl() { mp ctl "$@"; }

start_target "$MEMPROF" run --paused -o c.bin
TARGET_PID=$(sed -n "s/^memprof: .* runs as pid \([0-9]*\) with tracking paused.*/\1/p" target.err)
[ -n "$TARGET_PID" ] || fail_ "memprof run --paused did not say the program's pid: $(cat target.err)"

ctl --sampling-interval 4k "$TARGET_PID" stop
expect_rc 2 "--sampling-interval with stop"
expect_err "memprof ctl: --sampling-interval goes with start, not with stop"
ctl --sampling-interval 2G "$TARGET_PID" start
expect_rc 2 "--sampling-interval 2G"
expect_err "memprof ctl: invalid value '2G' for --sampling-interval"

ctl --sampling-interval 4k "$TARGET_PID" start
expect_rc 0 "start --sampling-interval 4k"
[ "$(cat out)" = "process $TARGET_PID: recording capture 1 into '$PWD/c.bin'" ] || fail_ "start: $(cat out)"
send_cmd "alloc 30 5000"
send_cmd "alloc 200 16"
send_cmd "free"
ctl "$TARGET_PID" stop
expect_rc 0 "stop"
[ "$(interval_of c.bin)" = 4096 ] || fail_ "capture 1 is not sampled: '$(interval_of c.bin)'"
# The 5000-byte blocks all; of the 16-byte ones a sample, if any (0.83 expected: 9 or more
# once in ten million runs).
grep -qE '^([1-8]x16 )?30x5000 $' <<<"$(sizes c.bin)" || fail_ "capture 1 holds $(sizes c.bin)"
"$MEMPROF" stats --json -o - c.bin > c.json 2>/dev/null || fail_ "stats c.bin"
python3 -c 'import json; d = json.load(open("c.json")); assert d["estimated"]' || fail_ "capture 1 is not estimated"
# Every commanded block was freed. (Not "leaked_bytes == 0": at the stop the reader waits in
# fopen() of its FIFO, whose FILE, about 470 bytes allocated in the capture, is sampled one
# time in nine and then estimated as a leak of about 4.3 kB.)
"$MEMPROF" parse --stacks c.bin | awk '
	/^ALLOC .*frames=\["command_alloc"/ { split($4, b, "="); live[b[2]] = 1 }
	/^FREE / { split($4, b, "="); delete live[b[2]] }
	END { n = 0; for (k in live) n++; if (n) { print n " commanded blocks never freed"; exit 1 } }' > bad ||
	fail_ "capture 1: $(cat bad)"

# A start without it: as the tracker was told at its start (every event).
ctl "$TARGET_PID" start
expect_rc 0 "start"
send_cmd "alloc 20 16"
send_cmd "free"
ctl "$TARGET_PID" stop
expect_rc 0 "stop"
[ -z "$(interval_of c.bin.2)" ] || fail_ "capture 2 is sampled: '$(interval_of c.bin.2)'"
[ "$(sizes c.bin.2)" = "20x16 " ] || fail_ "capture 2 holds $(sizes c.bin.2)"
send_cmd "exit 0"
wait

# memprof serve's start: sampling_interval (k too), within its bounds.
if command -v curl > /dev/null; then
	start_target env MEMPROF_PAUSED=1 MEMPROF_OUTPUT="$T/svc.%p.bin" LD_PRELOAD="$TRACKER_LIB"
	"$MEMPROF" serve "$TARGET_PID" > url 2> serve.err &
	for i in $(seq 100); do [ -s url ] && break; sleep 0.05; done
	URL=$(cat url)
	[ -n "$URL" ] || fail_ "memprof serve did not start: $(cat serve.err)"
	code=$(curl -s -X POST -o body -w '%{http_code}' "${URL}start?sampling_interval=2G")
	[ "$code" = 400 ] && grep -q "invalid value '2G' for sampling_interval (0 to 1073741824)" body ||
		fail_ "serve: start?sampling_interval=2G: $code $(cat body)"
	code=$(curl -s -X POST -o body -w '%{http_code}' "${URL}start?sampling_interval=4k")
	[ "$code" = 200 ] || fail_ "serve: start?sampling_interval=4k: $code $(cat body)"
	send_cmd "alloc 3 9000"
	code=$(curl -s -X POST -o body -w '%{http_code}' "${URL}stop")
	[ "$code" = 200 ] || fail_ "serve: stop: $code $(cat body)"
	[ "$(interval_of "$T/svc.$TARGET_PID.bin")" = 4096 ] || fail_ "serve's capture is not sampled"
	# (Written by the tracker itself: without symbols, the blocks counted by their size.)
	[ "$("$MEMPROF" parse "$T/svc.$TARGET_PID.bin" | grep -c '^ALLOC .* size=9000 ')" = 3 ] ||
		fail_ "serve's capture does not hold the 3 blocks of 9000 bytes"
	send_cmd "exit 0"
	wait
fi

# memprof attach --sampling-interval, where this machine lets us ptrace.
why=$("$INJECT_TOOL" --probe); st=$?
[ $st -eq 77 ] && { warn_ "attach not tested: $why"; exit 0; }
[ $st -eq 0 ] || framework_failure_ "inject-tool --probe failed with status $st"
start_target
"$MEMPROF" attach -o a.bin --sampling-interval 4k "$TARGET_PID" > attach.out 2> attach.err &
ATTACH_PID=$!
for i in $(seq 200); do
	"$MEMPROF" parse a.bin 2>/dev/null | grep -q '^ATTACH' && break
	kill -0 $ATTACH_PID 2>/dev/null || fail_ "memprof attach ended: $(cat attach.err)"
	sleep 0.025
done
send_cmd "alloc 25 8192"
send_cmd "free"
"$MEMPROF" detach "$TARGET_PID" > /dev/null 2> detach.err || fail_ "detach: $(cat detach.err)"
wait $ATTACH_PID || fail_ "attach: $(cat attach.err)"
[ "$(interval_of a.bin)" = 4096 ] || fail_ "the attach's capture is not sampled"
[ "$(sizes a.bin)" = "25x8192 " ] || fail_ "the attach's capture holds $(sizes a.bin)"
# The frees of the blocks allocated before the attach (5 x 555) are not recorded: not sampled.
"$MEMPROF" parse a.bin | grep -q '^FREE .*addr=' && fail_ "a free of a block not recorded was"
send_cmd "exit 0"
wait $TARGET_PID
exit 0
