#!/bin/bash
# Without privileges and without ptrace: a user who may not ptrace the service (it is not
# dumpable, as a hardened service or a default container makes it) still starts and stops
# captures with memprof ctl, each with exactly the allocations made while started.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-attachee.sh"

if [ "$(id -u)" -eq 0 ]; then
	command -v setpriv > /dev/null || skip_ "running as root without setpriv to drop privileges"
	# The service and its controller: nobody, with no capabilities.
	ASUSER=(setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all --bounding-set=-all)
else
	ASUSER=()
fi
asuser() { "${ASUSER[@]}" "$@"; }
# (Copies the service's user may run: see share in init.sh.)
share memprof "$MEMPROF"
share tracker "$TRACKER_LIB"
ctl() { run asuser "$memprof" ctl "$TARGET_PID" "$@"; }
sizes() { "$MEMPROF" parse "$1" | sed -n 's/^ALLOC .* size=\(1000\|333\|777\) .*/\1/p' | sort -n | uniq -c | awk '{print $1 "x" $2}' | tr '\n' ' '; }

# (Not through the function: start_target needs the pid of what it starts.)
start_target "${ASUSER[@]}" env MEMPROF_PAUSED=1 MEMPROF_OUTPUT="$T/shared/svc.%p.bin" LD_PRELOAD="$tracker"
send_cmd nodump
# ptrace is refused to this user: memprof attach cannot work here.
run asuser env MEMPROF_LIBDIR="$SHARED_BIN" "$memprof" attach -o "$T/shared/a.bin" "$TARGET_PID"
[ "$rc" -ne 0 ] || skip_ "this machine lets an unprivileged user ptrace a non-dumpable process"
expect_one_line_err
expect_err "cannot attach to $TARGET_PID"
running "$TARGET_PID"

ctl start
expect_rc 0 "start without ptrace"
D=$T/shared/svc.$TARGET_PID.bin
[ "$(cat out)" = "process $TARGET_PID: recording capture 1 into '$D'" ] || fail_ "start: $(cat out)"
send_cmd "alloc 10 1000"
ctl stop
expect_rc 0 "stop without ptrace"
send_cmd "alloc 5 777"
ctl start
expect_rc 0 "second start without ptrace"
send_cmd "alloc 3 333"
ctl stop
expect_rc 0 "second stop"
ctl status
[ "$(cat out)" = "process $TARGET_PID: paused, 2 captures written, the last into '$D.2'" ] || fail_ "status: $(cat out)"
send_cmd "exit 0"
wait $TARGET_PID || fail_ "the service failed"
[ "$(sizes "$D")" = "10x1000 " ] || fail_ "the first capture holds $(sizes "$D")"
[ "$(sizes "$D.2")" = "3x333 " ] || fail_ "the second capture holds $(sizes "$D.2")"
for f in "$D" "$D.2"; do
	[ "$(stat -c %u "$f")" = "$(asuser id -u)" ] || fail_ "'$f' is not the service user's"
	mp stats "$f"
	expect_rc 0 "stats '$f'"
	[ "$(field end "$("$MEMPROF" parse "$f" | grep ^TRAILER)")" = detach ] || fail_ "'$f' did not end by the stop"
done
exit 0
