#!/bin/bash
# A service started with the tracker preloaded by hand and MEMPROF_PAUSED=1: memprof ctl
# start/stop/start writes numbered captures with exactly the allocations made while started,
# a snapshot is a complete capture of that moment, and %n numbers the files where asked.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-attachee.sh"

ctl() { mp ctl "$TARGET_PID" "$@"; }
# sizes FILE: "countxsize" of the commanded allocations (raw captures have no function names:
# the commands' sizes are none of the program's own, 64, 472 and 4096).
sizes() { "$MEMPROF" parse "$1" | sed -n 's/^ALLOC .* size=\(1000\|2222\|4444\|777\|333\|51\|52\) .*/\1/p' | sort -n | uniq -c | awk '{print $1 "x" $2}' | tr '\n' ' '; }
leaked() { "$MEMPROF" transform folded --leaks -o - "$1" | awk '/;command_alloc /{n += $NF} END {print n + 0}'; }

start_target env MEMPROF_PAUSED=1 MEMPROF_OUTPUT="$T/d.%p.bin" LD_PRELOAD="$TRACKER_LIB"
D=$T/d.$TARGET_PID.bin
ctl status
expect_rc 0 status
[ "$(cat out)" = "process $TARGET_PID: paused, 0 captures written" ] || fail_ "status: $(cat out)"
[ ! -e "$D" ] || fail_ "a paused tracker wrote '$D'"
send_cmd "alloc 4 4444"
ctl start
expect_rc 0 start
[ "$(cat out)" = "process $TARGET_PID: recording capture 1 into '$D'" ] || fail_ "start: $(cat out)"
send_cmd "alloc 10 1000"
ctl snapshot
expect_rc 0 snapshot
[ "$(cat out)" = "process $TARGET_PID: snapshot 1 written to '$D.snap.1'" ] || fail_ "snapshot: $(cat out)"
send_cmd "alloc 2 2222"
send_cmd "free"
ctl stop
expect_rc 0 stop
[ "$(cat out)" = "process $TARGET_PID: stopped: '$D' is complete" ] || fail_ "stop: $(cat out)"
# Complete now, while the service runs on.
keep -o p1 "$MEMPROF" parse "$D"
expect_rc 0 "parse '$D' while the service runs"
[ "$(field end "$(grep ^TRAILER p1)")" = detach ] || fail_ "the first capture's trailer: $(grep ^TRAILER p1)"
send_cmd "alloc 7 777"
ctl start
expect_rc 0 "second start"
[ "$(cat out)" = "process $TARGET_PID: recording capture 2 into '$D.2'" ] || fail_ "second start: $(cat out)"
send_cmd "alloc 3 333"
ctl snapshot
expect_rc 0 "snapshot of the second capture"
[ "$(cat out)" = "process $TARGET_PID: snapshot 1 written to '$D.2.snap.1'" ] || fail_ "second snapshot: $(cat out)"
send_cmd "exit 4"
wait $TARGET_PID; st=$?
[ "$st" -eq 4 ] || fail_ "the service exited $st, expected 4"
[ ! -s target.err ] || fail_ "the service wrote on stderr: $(cat target.err)"

[ "$(sizes "$D")" = "10x1000 2x2222 " ] || fail_ "the first capture holds $(sizes "$D")"
[ "$(sizes "$D.snap.1")" = "10x1000 " ] || fail_ "the snapshot holds $(sizes "$D.snap.1")"
[ ! -e "$D.snap.1.partial" ] || fail_ "the snapshot's partial file was left behind"
[ "$(sizes "$D.2")" = "3x333 " ] || fail_ "the second capture holds $(sizes "$D.2")"
[ "$(sizes "$D.2.snap.1")" = "3x333 " ] || fail_ "the second snapshot holds $(sizes "$D.2.snap.1")"
[ "$(leaked "$D.snap.1")" = 10000 ] || fail_ "the snapshot leaks $(leaked "$D.snap.1") bytes from command_alloc"
[ "$(leaked "$D")" = 0 ] || fail_ "the first capture leaks $(leaked "$D") bytes from command_alloc"
[ "$(leaked "$D.2")" = 999 ] || fail_ "the second capture leaks $(leaked "$D.2") bytes from command_alloc"
"$MEMPROF" parse "$D.2" > p2 || fail_ "parse the second capture"
t2=$(grep ^TRAILER p2)
[ "$(field end "$t2")" = exit ] && [ "$(field exit_code "$t2")" = 4 ] || fail_ "the second capture's trailer: $t2"
grep -q '^HEADER .*flags=[a-z,]*restarted' p2 || fail_ "the second capture is not marked restarted"
"$MEMPROF" parse "$D.snap.1" > ps || fail_ "parse the snapshot"
[ "$(field end "$(grep ^TRAILER ps)")" = snapshot ] || fail_ "the snapshot's trailer: $(grep ^TRAILER ps)"
[ ! -e "/tmp/memprof-$(id -u)/ctl.$TARGET_PID" ] || fail_ "the control socket outlived the service"

# %n: the capture's number where the pattern says.
start_target env MEMPROF_PAUSED=1 MEMPROF_OUTPUT="$T/n.%p.%n.bin" LD_PRELOAD="$TRACKER_LIB"
for i in 1 2; do
	ctl start
	expect_rc 0 "start $i"
	[ "$(cat out)" = "process $TARGET_PID: recording capture $i into '$T/n.$TARGET_PID.$i.bin'" ] ||
		fail_ "start $i: $(cat out)"
	send_cmd "alloc $i 5$i"
	ctl stop
	expect_rc 0 "stop $i"
done
send_cmd "exit 0"
wait $TARGET_PID
[ "$(sizes "$T/n.$TARGET_PID.1.bin")" = "1x51 " ] || fail_ "n.1 holds $(sizes "$T/n.$TARGET_PID.1.bin")"
[ "$(sizes "$T/n.$TARGET_PID.2.bin")" = "2x52 " ] || fail_ "n.2 holds $(sizes "$T/n.$TARGET_PID.2.bin")"

# MEMPROF_CONTROL=0: no socket, and ctl says there is no tracker listening.
start_target env MEMPROF_CONTROL=0 MEMPROF_OUTPUT="$T/q.%p.bin" LD_PRELOAD="$TRACKER_LIB"
ctl status
expect_rc 1 "status with MEMPROF_CONTROL=0"
expect_one_line_err
expect_err "process $TARGET_PID has no memprof tracker listening"
send_cmd "exit 0"
wait $TARGET_PID
"$MEMPROF" parse "$T/q.$TARGET_PID.bin" > /dev/null || fail_ "the capture of a tracker without control"
exit 0
