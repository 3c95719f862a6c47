# Sourced by the attach and ctl tests after init.sh: the attachee workload, driven
# through a FIFO (see tests/workloads/attachee.c).
TARGET_PID=
# start_target [PREFIX...]: run the attachee (PREFIX: e.g. setpriv) with its FIFO, its output
# in target.out and target.err; TARGET_PID is its pid (reap $TARGET_PID waits for it). The
# attachee is $ATTACHEE, a copy any user may run (share, in init.sh): the target may run as
# another user (setpriv); its FIFO is in $T/shared, where any user may write.
share ATTACHEE "$WORKLOADS/attachee"
start_target() {
	rm -f cmds target.out "$T/shared/cmds"
	mkfifo -m 666 "$T/shared/cmds" && ln -sf "$T/shared/cmds" cmds || framework_failure_ "mkfifo"
	keep_bg -n target "$@" "$ATTACHEE" "$T/shared/cmds"
	TARGET_PID=$!
	wait_until 60 grep -qs '^ok started' target.out || framework_failure_ "the attachee did not start"
	# (setpriv execs the workload: the same pid; cleanup_ in init.sh kills it.)
}
# send_cmd LINE: send one command and wait for its "ok" line.
send_cmd() {
	local n
	n=$(grep -c '^ok ' target.out)
	# (Opening the FIFO waits for a reader: a target that died fails the test, never hangs it.)
	timeout 60 sh -c 'echo "$1" > cmds' _ "$1" ||
		fail_ "the target did not take '$1' (is it alive?): $(tail -2 target.err)"
	wait_until 60 answered_ "$n"
	tail -1 target.out | grep -qxF "ok $1" || fail_ "the target did not answer '$1': $(tail -2 target.out)"
}
answered_() { [ "$(grep -c '^ok ' target.out)" -gt "$1" ]; }
# running PID: alive and not stopped (a failed attach must not leave it traced or stopped).
running() {
	local st
	st=$(sed -n 's/^State:\t\(.\).*/\1/p' "/proc/$1/status" 2>/dev/null)
	[ -n "$st" ] && [ "$st" != T ] && [ "$st" != t ] && [ "$st" != Z ] ||
		fail_ "process $1 is not running (state '$st')"
	! grep -qE '^TracerPid:[[:space:]]+[1-9]' "/proc/$1/status" || fail_ "process $1 is still traced"
}
