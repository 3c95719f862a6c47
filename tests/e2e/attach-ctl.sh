#!/bin/bash
# memprof ctl on a process memprof attach got into: status and snapshots while it records
# (the attach collector writes them next to its capture); start is refused, stop ends the
# capture as memprof detach does; after it nothing listens, until the next attach.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-attach.sh"

start_target
sock=/tmp/memprof-$(id -u)/ctl.$TARGET_PID
run "$MEMPROF" ctl $TARGET_PID status
expect_rc 1 "status before the attach"
expect_err "has no memprof tracker listening"

attach_bg a.bin $TARGET_PID
send_cmd "alloc 10 1000"
mp ctl $TARGET_PID status
expect_rc 0 "status"
grep -qx "process $TARGET_PID: recording (memprof attach) into '$T/a.bin' for [0-9.]* s, capture 1, [0-9]* thread rings" out ||
	fail_ "status said: $(cat out)"
mp ctl $TARGET_PID snapshot
expect_rc 0 "snapshot"
grep -qx "process $TARGET_PID: snapshot 1 written to '$T/a.bin.snap.1'" out || fail_ "snapshot said: $(cat out)"
send_cmd "free"
mp ctl $TARGET_PID snapshot
expect_rc 0 "second snapshot"
grep -qx "process $TARGET_PID: snapshot 2 written to '$T/a.bin.snap.2'" out || fail_ "snapshot 2 said: $(cat out)"

# Nothing else starts while the attach records; memprof ctl stop ends its capture as the
# detach does, complete when it returns.
mp ctl $TARGET_PID start
expect_rc 1 "start"
expect_err "already recording into '$T/a.bin'"
send_cmd "alloc 3 777"
mp ctl $TARGET_PID stop
expect_rc 0 "stop"
[ "$(cat out)" = "process $TARGET_PID: stopped: '$T/a.bin' is complete" ] || fail_ "stop said: $(cat out)"
"$MEMPROF" parse a.bin | grep -q "^TRAILER .* end=detach " || fail_ "a.bin is not complete as stop returns"
reap $ATTACH_PID
expect_rc 0 "memprof attach"
[ ! -e "$sock" ] || fail_ "the control socket outlived the detach"
mp ctl $TARGET_PID status
expect_rc 1 "status after the detach"
expect_err "has no memprof tracker listening"

# Snapshot 1: the 10 blocks live; snapshot 2: freed; the capture: both, and the 3 after.
for f in a.bin.snap.1 a.bin.snap.2 a.bin; do
	"$MEMPROF" parse --stacks $f > $f.p || fail_ "parse $f"
	expect_count 10 '^ALLOC .*size=1000 .*frames=\["command_alloc","main",' $f.p
done
[ "$(field end "$(grep ^TRAILER a.bin.snap.1.p)")" = snapshot ] || fail_ "snapshot 1's trailer: $(grep ^TRAILER a.bin.snap.1.p)"
freed() {
	local n=0
	for b in $(sed -n 's/^ALLOC .* block=\([0-9]*\) size=1000 .*/\1/p' $1); do
		grep -q "^FREE .* block=$b\$" $1 && n=$((n + 1))
	done
	echo $n
}
[ "$(freed a.bin.snap.1.p)" = 0 ] || fail_ "snapshot 1 has freed blocks of 1000 bytes"
[ "$(freed a.bin.snap.2.p)" = 10 ] || fail_ "snapshot 2 lacks frees"
expect_count 0 '^ALLOC .*size=777 ' a.bin.snap.2.p
expect_count 3 '^ALLOC .*size=777 ' a.bin.p
grep -q "wrote snapshot 'a.bin.snap.1'" attach.err || fail_ "memprof attach did not list the snapshots: $(cat attach.err)"

# A second attach listens again.
attach_bg b.bin -q $TARGET_PID
mp ctl $TARGET_PID status
expect_rc 0 "status in the second attach"
expect_out "recording (memprof attach) into '$T/b.bin'"
detach_wait "second detach"
[ ! -e "$sock" ] || fail_ "the control socket outlived the second detach"

running $TARGET_PID
send_cmd "exit 0"
wait $TARGET_PID || fail_ "the target failed"
[ ! -s target.err ] || fail_ "the target wrote on stderr: $(cat target.err)"
exit 0
