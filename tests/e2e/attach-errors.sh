#!/bin/bash
# Refused attaches: one-line errors naming the cause; the target never left stopped or changed.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-attach.sh"

mp attach 99999999999
expect_rc 2 "a pid out of range"
mp attach 4194000
expect_rc 1 "no such process"
expect_err "memprof: cannot attach to 4194000: no such process"
expect_one_line_err
for args in "" "abc" "--method lldb 1" "--duration -1 1" "--duration x 1" "--max-depth 0 1"; do
	mp attach $args
	expect_rc 2 "attach $args"
done
mp detach 4194000
expect_rc 1 "detach of no process"
expect_err "memprof: no process 4194000"

start_target
# Already tracked by another session.
attach_bg a.bin $TARGET_PID
mp attach -o b.bin $TARGET_PID
expect_rc 1 "a second attach"
expect_err "memprof: process $TARGET_PID is already tracked by 'memprof attach' (pid $ATTACH_PID); run 'memprof detach $TARGET_PID' first"
expect_one_line_err
[ ! -e b.bin ] || fail_ "the refused attach left b.bin"
detach_wait "detach"
running $TARGET_PID
mp detach $TARGET_PID
expect_rc 1 "detach without a session"
expect_err "memprof: process $TARGET_PID is not tracked by 'memprof attach'"
# The capture exists already.
mp attach -o a.bin $TARGET_PID
expect_rc 1 "an existing capture"
expect_err "memprof: 'a.bin' exists (use -f to overwrite it)"
running $TARGET_PID
# The tracker library is missing.
MEMPROF_LIBDIR=$T/nowhere mp attach -o m.bin $TARGET_PID
expect_rc 1 "a missing tracker library"
expect_err "cannot find the tracker library '$T/nowhere/libmemprof.so'"
[ ! -e m.bin ] || fail_ "a missing tracker library: the empty capture m.bin was left"
running $TARGET_PID
# A capture that cannot be written (a full disk): the attach fails, saying why.
mp attach -f -o /dev/full --duration 0.3 $TARGET_PID
expect_rc 1 "a capture on a full disk"
expect_err "'/dev/full': No space left on device"
running $TARGET_PID
send_cmd "exit 0"
wait $TARGET_PID || fail_ "the target failed"

# A process that memprof run already tracks.
mkfifo run.cmds
"$MEMPROF" run -q -o r.bin "$WORKLOADS/attachee" "$T/run.cmds" > run.out 2>&1 &
mrun=$!
wait_until 60 grep -q '^ok started' run.out
tracked=$(pgrep -P $mrun)
mp attach -o t.bin "$tracked"
expect_rc 1 "a process memprof run tracks"
expect_err "memprof: cannot track process $tracked: it is already tracked"
running "$tracked"
echo "exit 0" > run.cmds
wait $mrun || fail_ "memprof run of the attachee"

# Another user's process, from a third user without privileges.
if command -v setpriv > /dev/null && [ "$(id -u)" -eq 0 ]; then
	start_target setpriv --reuid=nobody --regid=nogroup --clear-groups
	# (Copies the other user may run: see share in init.sh.)
	share memprof "$MEMPROF"
	share tracker "$TRACKER_LIB"
	run setpriv --reuid=65533 --regid=65533 --clear-groups env MEMPROF_LIBDIR="$SHARED_BIN" \
		"$memprof" attach -o "$T/u.bin" $TARGET_PID
	expect_rc 1 "another user's process"
	expect_err "cannot attach to $TARGET_PID"
	expect_one_line_err
	running $TARGET_PID
	send_cmd "exit 0"
	wait $TARGET_PID || fail_ "the target failed"
fi
# A statically linked process (when the static C library is installed).
if [ -x "$MEMPROF_BUILDDIR/tests/workloads/inject-target-static" ]; then
	static="$MEMPROF_BUILDDIR/tests/workloads/inject-target-static"
	"$static" pause > /dev/null & s=$!
	# Until it has exec'd, pid $s is a copy of this (dynamic) shell.
	wait_until 60 eval '[ "$(readlink /proc/$s/exe)" -ef "$static" ]'
	[ "$(readlink /proc/$s/exe)" -ef "$static" ] || framework_failure_ "the static target did not start"
	mp attach -o s.bin $s
	expect_rc 1 "a static process"
	expect_err "statically linked"
	running $s
	kill $s
fi
exit 0
