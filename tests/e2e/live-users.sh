#!/bin/bash
# memprof live without privileges and without ptrace: a user who may not ptrace the service
# (not dumpable) still watches it live; root watches another user's service (the view's
# socket is given to that user); any other user is refused in one line.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-attachee.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-live.sh"

if [ "$(id -u)" -eq 0 ]; then
	command -v setpriv > /dev/null || skip_ "running as root without setpriv to drop privileges"
	ASUSER=(setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all --bounding-set=-all)
else
	ASUSER=()
fi

# (Copies the other users may run: see share in init.sh.)
share memprof "$MEMPROF"
share tracker "$TRACKER_LIB"
start_target "${ASUSER[@]}" env MEMPROF_PAUSED=1 MEMPROF_OUTPUT="$T/shared/svc.%p.bin" LD_PRELOAD="$tracker"
P=$TARGET_PID
send_cmd nodump

# The service's own user, who may not ptrace it.
view_start u "${ASUSER[@]}" "$memprof" live "$P"
wait_screen u has u "  running [0-9.]+ s$"
send_cmd "alloc 10 1000"
wait_screen u row_is u 1 " +10 +10  command_alloc at attachee\.c *$"
keys u q
view_rc u
[ "$rc" -eq 0 ] || fail_ "the service's user: exit $rc"
paused "$P"

if [ "$(id -u)" -eq 0 ]; then
	# Root watches it too: the view's socket is in a directory given to the service's user.
	view_start r "$MEMPROF" live "$P"
	wait_screen r has r "  running [0-9.]+ s$"
	mp ctl "$P" status
	expect_rc 0 "status"
	dir=$(sed -n "s|.* at '\(/tmp/memprof-live-[^/]*\)/stream' .*|\1|p" out)
	[ -n "$dir" ] || fail_ "status while root watches: $(cat out)"
	[ "$(stat -c %U "$dir")" = nobody ] || fail_ "'$dir' is not the service user's"
	send_cmd "alloc 3 3000"
	wait_screen r row_is r 1 " +3 +3  command_alloc at attachee\.c *$"
	keys r q
	view_rc r
	[ "$rc" -eq 0 ] || fail_ "root: exit $rc"
	[ ! -e "$dir" ] || fail_ "'$dir' is left behind"
	paused "$P"

	# Another user may not.
	view_start o sh -c 'exec setpriv --reuid=65533 --regid=65533 --clear-groups "$0" live "$1" 2> o.err' \
		"$memprof" "$P"
	view_rc o
	[ "$rc" -eq 1 ] || fail_ "another user: exit $rc"
	cp o.err err
	expect_one_line_err
	[ "$(cat err)" = "memprof: cannot reach the tracker of process $P: it runs as user 65534, and only that user or root may control it" ] ||
		fail_ "another user: $(cat err)"
	paused "$P"
fi
send_cmd "exit 0"
wait "$P" || fail_ "the service failed"
[ ! -s target.err ] || fail_ "the service wrote on stderr: $(cat target.err)"
[ ! -e "$T/shared/svc.$P.bin" ] || fail_ "a view wrote a capture"
exit 0
