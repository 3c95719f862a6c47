#!/bin/bash
# memprof ctl's refusal names the real reason: when the directory of the user's control
# sockets (/tmp/memprof-UID) is one its tracker cannot use, the user is told that, not that
# only the user it runs as may control the process (the user it runs as is the one asking).
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"

command -v setpriv > /dev/null || skip_ "no setpriv"
[ "$(id -u)" -eq 0 ] || skip_ "needs root, to act as other users"
# What the other user runs, where it may read it (see share in init.sh).
share memprof "$MEMPROF"
share tracker "$TRACKER_LIB"

for problem in owner mode; do
	u=$((64200 + ${#problem}))
	d=/tmp/memprof-$u
	rm -rf "$d"
	case $problem in
	owner) mkdir -m 0700 "$d"; want="'$d' belongs to user 0" ;;   # the user cannot even enter it
	mode) mkdir -m 0777 "$d" && chown $u "$d"; want="'$d' has mode 0777" ;;
	esac
	keep_bg -n target setpriv --reuid=$u --regid=$u --clear-groups env MEMPROF_PAUSED=1 \
		MEMPROF_OUTPUT="$T/shared/o.bin" LD_PRELOAD="$tracker" sleep 30
	pid=$!
	wait_until 60 grep -q "control socket" target.err
	grep -q "^memprof: cannot use '$d' for the control socket" target.err ||
		framework_failure_ "$problem: the tracker did not refuse '$d': $(cat target.err)"
	run setpriv --reuid=$u --regid=$u --clear-groups "$memprof" ctl $pid status
	expect_rc 1 "$problem: status"
	expect_one_line_err "$problem"
	[ "$(cat err)" = "memprof: process $pid has no memprof tracker listening: $want, where a tracker of user $u would listen (it must be that user's directory, mode 0700)" ] ||
		fail_ "$problem: $(cat err)"
	kill $pid
	wait $pid
	rm -rf "$d"
done
exit 0
