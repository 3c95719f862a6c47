#!/bin/bash
# memprof ctl PID start --aggregate: under memprof run --paused, one capture aggregated and the
# next one not; a snapshot of an aggregated capture is aggregated too, with the totals of that
# moment; a tracker that writes its own capture aggregates it too.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-attachee.sh"

ctl() { mp ctl "$@"; }
leaked() { "$MEMPROF" transform folded --leaks -o - "$1" | awk '/;command_alloc /{n += $NF} END {print n + 0}'; }

start_target "$MEMPROF" run --paused -o c.bin
RUN_PID=$TARGET_PID
TARGET_PID=$(sed -n "s/^memprof: .* runs as pid \([0-9]*\) with tracking paused.*/\1/p" target.err)
[ -n "$TARGET_PID" ] || fail_ "no pid: $(cat target.err)"
ctl start --aggregate "$TARGET_PID"
expect_rc 2 "the request before the pid"
expect_err "invalid process id 'start'"
ctl --aggregate "$TARGET_PID" stop
expect_rc 2 "--aggregate with stop"
expect_err "--aggregate goes with start, not with stop"
ctl "$TARGET_PID" start --aggregate
expect_rc 0 "start --aggregate"
[ "$(cat out)" = "process $TARGET_PID: recording capture 1 into '$PWD/c.bin'" ] || fail_ "start --aggregate: $(cat out)"
send_cmd "alloc 10 1000"
ctl "$TARGET_PID" snapshot
expect_rc 0 snapshot
send_cmd "alloc 2 2222"
ctl "$TARGET_PID" stop
expect_rc 0 stop
ctl "$TARGET_PID" start
expect_rc 0 "a full capture next"
send_cmd "alloc 3 333"
send_cmd "exit 0"
wait $RUN_PID || fail_ "memprof run failed: $(cat target.err)"

"$MEMPROF" parse c.bin > p1 || fail_ "parse c.bin"
grep -q '^HEADER .*aggregated' p1 || fail_ "c.bin is not aggregated"
expect_count 0 '^ALLOC ' p1
"$MEMPROF" parse c.bin.2 > p2 || fail_ "parse c.bin.2"
! grep -q '^HEADER .*aggregated' p2 || fail_ "c.bin.2 is aggregated"
[ "$(count '^ALLOC ' p2)" -gt 0 ] || fail_ "c.bin.2 has no events"
"$MEMPROF" parse c.bin.snap.1 > ps || fail_ "parse the snapshot"
grep -q '^HEADER .*aggregated' ps || fail_ "the snapshot is not aggregated"
[ "$(field end "$(grep ^TRAILER ps)")" = snapshot ] || fail_ "the snapshot's trailer"
# Leaks: 10 x 1000 live at the snapshot; 10 x 1000 + 2 x 2222 at the end of c.bin; 3 x 333 in c.bin.2.
[ "$(leaked c.bin.snap.1)" = 10000 ] || fail_ "the snapshot leaks $(leaked c.bin.snap.1) from command_alloc"
[ "$(leaked c.bin)" = 14444 ] || fail_ "c.bin leaks $(leaked c.bin) from command_alloc"
[ "$(leaked c.bin.2)" = 999 ] || fail_ "c.bin.2 leaks $(leaked c.bin.2) from command_alloc"
# The allocations from command_alloc, counted by the summary of all allocations.
for f in c.bin c.bin.snap.1; do
	"$MEMPROF" stats --json -o - "$f" | python3 -c '
import json, sys
d = json.load(sys.stdin)
top = [t for t in d["top_allocations_by_count"] if t["function"] == "command_alloc"]
want = {"c.bin": (12, 14444), "c.bin.snap.1": (10, 10000)}[sys.argv[1]]
assert top and (top[0]["count"], top[0]["size"]) == want, (top, want)' "$f" || fail_ "$f: command_alloc's allocations"
done

# A tracker that writes its own capture aggregates it itself (lib/format/fold.h).
start_target env MEMPROF_PAUSED=1 MEMPROF_OUTPUT="$T/d.%p.bin" LD_PRELOAD="$TRACKER_LIB"
# (Not a sampled one: the tracker's fold has no estimates.)
ctl --aggregate --sampling-interval 4096 "$TARGET_PID" start
expect_rc 1 "start --aggregate --sampling-interval in a tracker that writes its own capture"
expect_one_line_err
expect_err "this tracker writes its own capture and aggregates it without sampling: add MEMPROF_SAMPLING_INTERVAL=0, or start it under memprof run --paused"
ctl --aggregate "$TARGET_PID" start
expect_rc 0 "start --aggregate in a tracker that writes its own capture"
send_cmd "alloc 4 4000"
ctl "$TARGET_PID" snapshot
expect_rc 0 "snapshot of the tracker's own aggregated capture"
send_cmd "alloc 1 1111"
ctl "$TARGET_PID" stop
expect_rc 0 "stop the tracker's own aggregated capture"
ctl "$TARGET_PID" status
[ "$(cat out)" = "process $TARGET_PID: paused, 1 capture written, the last into '$T/d.$TARGET_PID.bin'" ] || fail_ "status: $(cat out)"
send_cmd "exit 0"
wait $TARGET_PID
d=d.$TARGET_PID.bin
for f in "$d" "$d.snap.1"; do
	"$MEMPROF" parse "$f" > p || fail_ "parse $f"
	grep -q '^HEADER .*aggregated' p || fail_ "$f is not aggregated"
	expect_count 0 '^(ALLOC|FREE|TICK) ' p
done
[ "$(leaked "$d.snap.1")" = 16000 ] || fail_ "the direct snapshot leaks $(leaked "$d.snap.1") from command_alloc"
[ "$(leaked "$d")" = 17111 ] || fail_ "$d leaks $(leaked "$d") from command_alloc"
exit 0
