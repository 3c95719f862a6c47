#!/bin/bash
# memprof ctl's refusal names the real reason: when the directory of the user's control
# sockets (/tmp/memprof-UID) is one its tracker cannot use, the user is told that, not that
# only the user it runs as may control the process (the user it runs as is the one asking).
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"

command -v setpriv > /dev/null || skip_ "no setpriv"
[ "$(id -u)" -eq 0 ] || skip_ "needs root, to act as other users"
# What the other user runs, where it may read it (the tree may be under a 0700 directory).
mkdir -m 0755 shared && chmod 0711 "$T" || framework_failure_ "mkdir"
cp "$MEMPROF" "$TRACKER_LIB" shared/ && chmod 0755 shared/* || framework_failure_ "cp"

for problem in owner mode; do
	u=$((64200 + ${#problem}))
	d=/tmp/memprof-$u
	rm -rf "$d"
	case $problem in
	owner) mkdir -m 0700 "$d"; want="'$d' belongs to user 0" ;;   # the user cannot even enter it
	mode) mkdir -m 0777 "$d" && chown $u "$d"; want="'$d' has mode 0777" ;;
	esac
	setpriv --reuid=$u --regid=$u --clear-groups env MEMPROF_PAUSED=1 MEMPROF_OUTPUT="$T/shared/o.bin" \
		LD_PRELOAD="$T/shared/libmemprof.so" sleep 30 > target.out 2> target.err &
	pid=$!
	for i in $(seq 100); do grep -q "control socket" target.err && break; sleep 0.05; done
	grep -q "^memprof: cannot use '$d' for the control socket" target.err ||
		framework_failure_ "$problem: the tracker did not refuse '$d': $(cat target.err)"
	setpriv --reuid=$u --regid=$u --clear-groups "$T/shared/memprof" ctl $pid status > out 2> err; rc=$?
	expect_rc 1 "$problem: status"
	expect_one_line_err "$problem"
	[ "$(cat err)" = "memprof: process $pid has no memprof tracker listening: $want, where a tracker of user $u would listen (it must be that user's directory, mode 0700)" ] ||
		fail_ "$problem: $(cat err)"
	kill $pid
	wait $pid
	rm -rf "$d"
done
exit 0
