#!/bin/bash
# memprof run --paused, then memprof ctl: start/stop/start give two captures with exactly the
# allocations made while started, a snapshot mid-run is a complete capture, and the program's
# output and status stay its own.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-attachee.sh"

ctl() { mp ctl "$TARGET_PID" "$@"; }
# sizes FILE: "count size" of the commanded allocations (sizes other than the churn's 64).
sizes() { "$MEMPROF" parse --stacks "$1" | sed -n 's/^ALLOC .* size=\([0-9]*\) .*frames=\["command_alloc".*/\1/p' | sort -n | uniq -c | awk '{print $1 "x" $2}' | tr '\n' ' '; }
start_target "$MEMPROF" run --paused -o c.bin
RUN_PID=$TARGET_PID
TARGET_PID=$(sed -n "s/^memprof: .* runs as pid \([0-9]*\) with tracking paused; 'memprof ctl \1 start' starts a capture into 'c.bin'$/\1/p" target.err)
[ -n "$TARGET_PID" ] || fail_ "memprof run --paused did not say the program's pid: $(cat target.err)"
[ "$(readlink /proc/$TARGET_PID/exe)" = "$(readlink -f "$ATTACHEE")" ] || fail_ "pid $TARGET_PID is not the attachee"

ctl status
expect_rc 0 status
[ "$(cat out)" = "process $TARGET_PID: paused, 0 captures written" ] || fail_ "status: $(cat out)"
send_cmd "alloc 4 4444"          # paused: in no capture
ctl stop
expect_rc 1 "stop while paused"
expect_one_line_err
[ "$(cat err)" = "memprof: process $TARGET_PID: not recording" ] || fail_ "stop while paused: $(cat err)"
ctl snapshot
expect_rc 1 "snapshot while paused"
expect_err "not recording"
# (memprof run holds the file from the start, empty, so that it fails before the program runs.)
[ ! -s c.bin ] || fail_ "a paused program has a capture"

ctl start
expect_rc 0 start
[ "$(cat out)" = "process $TARGET_PID: recording capture 1 into '$PWD/c.bin'" ] || fail_ "start: $(cat out)"
ctl start
expect_rc 1 "start while recording"
expect_one_line_err
expect_err "already recording"
ctl status
expect_rc 0 status
grep -qE "^process $TARGET_PID: recording into '$PWD/c.bin' for [0-9]+\.[0-9] s, capture 1, [0-9]+ thread rings$" out ||
	fail_ "status while recording: $(cat out)"
send_cmd "alloc 10 1000"
ctl snapshot
expect_rc 0 snapshot
# The answer comes once the collector wrote it: the file is there, whole, when ctl returns.
[ "$(cat out)" = "process $TARGET_PID: snapshot 1 written to '$PWD/c.bin.snap.1'" ] || fail_ "snapshot: $(cat out)"
[ "$(sizes c.bin.snap.1)" = "10x1000 " ] || fail_ "the snapshot, as ctl returned, holds $(sizes c.bin.snap.1)"
# One the collector cannot write (a directory where its partial file goes) is an error, in one line.
mkdir c.bin.snap.2.partial
ctl snapshot
expect_rc 1 "snapshot that cannot be written"
expect_one_line_err
[ "$(cat err)" = "memprof: process $TARGET_PID: snapshot 2 could not be written: '$PWD/c.bin.snap.2': Is a directory" ] ||
	fail_ "unwritable snapshot: $(cat err)"
[ ! -e c.bin.snap.2 ] || fail_ "a snapshot that failed left c.bin.snap.2"
rmdir c.bin.snap.2.partial
send_cmd "alloc 2 2222"          # after the snapshot: in the capture, not in the snapshot
send_cmd "free"
ctl stop
expect_rc 0 stop
[ "$(cat out)" = "process $TARGET_PID: stopped: '$PWD/c.bin' is complete" ] || fail_ "stop: $(cat out)"
send_cmd "alloc 7 777"           # stopped: in no capture
ctl status
[ "$(cat out)" = "process $TARGET_PID: paused, 1 capture written, the last into '$PWD/c.bin'" ] ||
	fail_ "status after stop: $(cat out)"
# A capture the collector cannot create is an error, and nothing records: the number is used.
touch c.bin.2
ctl start
expect_rc 1 "start into a file that exists"
expect_one_line_err
[ "$(cat err)" = "memprof: process $TARGET_PID: the collector cannot write capture 2: cannot create '$PWD/c.bin.2': File exists (use -f to overwrite)" ] ||
	fail_ "start into a file that exists: $(cat err)"
[ ! -s c.bin.2 ] || fail_ "c.bin.2 was written"
ctl status
[ "$(cat out)" = "process $TARGET_PID: paused, 1 capture written, the last into '$PWD/c.bin'" ] ||
	fail_ "status after a failed start: $(cat out)"
ctl start
expect_rc 0 "second start"
[ "$(cat out)" = "process $TARGET_PID: recording capture 3 into '$PWD/c.bin.3'" ] || fail_ "second start: $(cat out)"
send_cmd "alloc 3 333"
send_cmd "exit 4"
wait $RUN_PID; st=$?
[ "$st" -eq 4 ] || fail_ "memprof run exited $st, expected the program's 4: $(cat target.err)"
printf '%s\n' "ok started" "ok alloc 4 4444" "ok alloc 10 1000" "ok alloc 2 2222" "ok free" \
	"ok alloc 7 777" "ok alloc 3 333" "ok exit 4" | cmp -s - target.out ||
	fail_ "the program's output changed: $(cat target.out)"
grep -qx "memprof: wrote snapshot 'c.bin.snap.1'" target.err || fail_ "no snapshot line: $(cat target.err)"
grep -q "^memprof: wrote 'c.bin': " target.err || fail_ "no line for c.bin: $(cat target.err)"
grep -q "^memprof: wrote 'c.bin.3' (capture 3, from 'memprof ctl start'): " target.err ||
	fail_ "no line for c.bin.3: $(cat target.err)"
! grep -q "exec" target.err || fail_ "memprof run talks of an exec: $(cat target.err)"

[ "$(sizes c.bin)" = "10x1000 2x2222 " ] || fail_ "c.bin holds $(sizes c.bin)"
[ "$(sizes c.bin.snap.1)" = "10x1000 " ] || fail_ "the snapshot holds $(sizes c.bin.snap.1)"
[ ! -e c.bin.snap.1.partial ] || fail_ "the snapshot's partial file was left behind"
[ "$(sizes c.bin.3)" = "3x333 " ] || fail_ "c.bin.3 holds $(sizes c.bin.3)"

"$MEMPROF" parse c.bin > p1 || fail_ "parse c.bin"
"$MEMPROF" parse c.bin.3 > p2 || fail_ "parse c.bin.3"
"$MEMPROF" parse c.bin.snap.1 > ps || fail_ "parse the snapshot"
[ "$(field end "$(grep ^TRAILER p1)")" = detach ] || fail_ "c.bin's trailer: $(grep ^TRAILER p1)"
expect_count 1 '^DETACH ' p1
t2=$(grep ^TRAILER p2)
[ "$(field end "$t2")" = exit ] && [ "$(field exit_code "$t2")" = 4 ] || fail_ "c.bin.3's trailer: $t2"
grep -q '^HEADER .*flags=[a-z,]*restarted' p2 || fail_ "c.bin.3 is not marked restarted: $(grep ^HEADER p2)"
! grep -q '^HEADER .*restarted' p1 || fail_ "c.bin is marked restarted"
[ "$(field end "$(grep ^TRAILER ps)")" = snapshot ] || fail_ "the snapshot's trailer: $(grep ^TRAILER ps)"
# Each capture's own numbers: pids, and the blocks freed that came from before it.
[ "$(field pid "$(grep ^HEADER p2)")" = "$TARGET_PID" ] || fail_ "c.bin.3's pid"
# A capture begun by ctl (on the tracker's control thread) names the process's main thread.
[ "$(field main_tid "$(grep ^HEADER p2)")" = "$TARGET_PID" ] || fail_ "c.bin.3's main_tid: $(grep ^HEADER p2)"
# Every reporter reads each; the snapshot's leaks are the 10 blocks live at that moment.
for f in c.bin c.bin.3 c.bin.snap.1; do
	mp stats "$f"
	expect_rc 0 "stats $f"
	mp flamegraph -f -o "$f.html" --leaks "$f"
	expect_rc 0 "flamegraph $f"
done
# leaked FILE: the bytes leaked from command_alloc, from the folded stacks of the leaks.
leaked() { "$MEMPROF" transform folded --leaks -o - "$1" | awk '/;command_alloc /{n += $NF} END {print n + 0}'; }
[ "$(leaked c.bin.snap.1)" = 10000 ] || fail_ "the snapshot leaks $(leaked c.bin.snap.1) bytes from command_alloc, not the 10 x 1000 live then"
[ "$(leaked c.bin)" = 0 ] || fail_ "c.bin leaks $(leaked c.bin) bytes from command_alloc"
[ "$(leaked c.bin.3)" = 999 ] || fail_ "c.bin.3 leaks $(leaked c.bin.3) bytes from command_alloc"
exit 0
