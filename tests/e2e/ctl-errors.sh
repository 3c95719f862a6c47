#!/bin/bash
# memprof ctl's errors: usage, no such process, a process without a tracker, another user's
# tracker; each one line and a non-zero status, and the process is left as it was.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-attachee.sh"

mp ctl
expect_rc 2 "no arguments"
mp ctl 12ab status
expect_rc 2 "a bad pid"
expect_err "invalid process id '12ab'"
mp ctl $$ frobnicate
expect_rc 2 "an unknown request"
expect_err "unknown request 'frobnicate' (start, stop, snapshot or status)"
mp ctl --timeout 0 $$ status
expect_rc 2 "a zero timeout"

# A process that is gone.
true & gone=$!
wait $gone
mp ctl $gone status
expect_rc 1 "a process that is gone"
expect_one_line_err
[ "$(cat err)" = "memprof: no process $gone" ] || fail_ "gone: $(cat err)"

# A process without a tracker.
sleep 60 & untracked=$!
mp ctl $untracked start
expect_rc 1 "a process without a tracker"
expect_one_line_err
expect_err "process $untracked has no memprof tracker listening (preload it with MEMPROF_OUTPUT, or start the program with 'memprof run --paused')"
kill -0 $untracked || fail_ "the untracked process died"
kill $untracked

# A socket left by an earlier process of the same pid (its tracker killed, the pid come
# round again) is no tracker: said so, and the socket removed; one made since the process
# started, where nothing listens, is a tracker that does not answer.
sleep 60 & reused=$!
sock=/tmp/memprof-$(id -u)/ctl.$reused
mkdir -p -m 700 "/tmp/memprof-$(id -u)"
bind_socket() { rm -f "$sock"; python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$sock"; }
bind_socket
touch -d '1 hour ago' "$sock"
mp ctl $reused status
expect_rc 1 "a socket left by an earlier process"
expect_one_line_err
expect_err "process $reused has no memprof tracker listening"
[ ! -e "$sock" ] || fail_ "the stale socket was left"
bind_socket
mp ctl $reused status
expect_rc 1 "a socket nothing listens on"
expect_err "the tracker of process $reused does not answer ('$sock' is left from a process that ended?)"
rm -f "$sock"
kill $reused

# A tracked process of another user, from a user without privileges: refused, and the
# tracker records nothing.
if command -v setpriv > /dev/null && [ "$(id -u)" -eq 0 ]; then
	# (Copies other users may run: see share in init.sh.)
	share tracker "$TRACKER_LIB"
	share memprof "$MEMPROF"
	start_target setpriv --reuid=nobody --regid=nogroup --clear-groups \
		env MEMPROF_PAUSED=1 MEMPROF_OUTPUT="$T/shared/o.%p.bin" LD_PRELOAD="$tracker"
	for r in start status; do
		run setpriv --reuid=65533 --regid=65533 --clear-groups "$memprof" ctl $TARGET_PID $r
		expect_rc 1 "$r from another user"
		expect_one_line_err
		[ "$(cat err)" = "memprof: cannot reach the tracker of process $TARGET_PID: it runs as user 65534, and only that user or root may control it" ] ||
			fail_ "$r from another user: $(cat err)"
	done
	# Root may.
	mp ctl $TARGET_PID status
	expect_rc 0 "status from root"
	[ "$(cat out)" = "process $TARGET_PID: paused, 0 captures written" ] || fail_ "root's status: $(cat out)"
	running $TARGET_PID
	send_cmd "exit 0"
	wait $TARGET_PID || fail_ "the target failed"
	[ ! -e "$T/shared/o.$TARGET_PID.bin" ] || fail_ "a refused start wrote a capture"
fi

# A tracker that cannot use the socket directory says so once, and the program runs.
if command -v setpriv > /dev/null && [ "$(id -u)" -eq 0 ]; then
	d=/tmp/memprof-65532
	rm -rf "$d" && mkdir -m 0777 "$d" || framework_failure_ "mkdir $d"
	share tracker "$TRACKER_LIB"
	share allocs "$WORKLOADS/allocs"
	run setpriv --reuid=65532 --regid=65532 --clear-groups env MEMPROF_OUTPUT="$T/shared/w.%p.bin" \
		LD_PRELOAD="$tracker" "$allocs"
	[ -s "$(echo "$T"/shared/w.*.bin)" ] || fail_ "the program was not tracked: $(cat err)"
	rm -rf "$d"
	expect_rc 0 "a program whose socket directory is open to others"
	expect_one_line_err
	expect_err "cannot use '$d' for the control socket (it must be a directory of this user's, mode 0700); memprof ctl cannot reach this process"
fi
exit 0
