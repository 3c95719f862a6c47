#!/bin/bash
# Every way a program can end leaves a complete capture, and memprof ends the same way.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"

check() { # how, expected memprof status, trailer field, value
	mp run -q -f -o c.bin "$WORKLOADS/crash" "$1" "${5:-0}"
	expect_rc "$2" "crash $1"
	keep -o p -e perr "$MEMPROF" parse --stacks c.bin
	expect_rc 0 "crash $1: parse"
	expect_no_err "crash $1: parse"
	expect_count 7 '^ALLOC .*size=77 .*frames=\["before_end","main"' p
	t=$(grep ^TRAILER p)
	[ "$(field "$3" "$t")" = "$4" ] || fail_ "crash $1: trailer $t, expected $3=$4"
	[ "$(field end "$t")" = exit ] || fail_ "crash $1: end reason in $t"
	# Nothing left behind: the control socket its tracker could not remove, memprof did.
	pid=$(field pid "$(grep ^HEADER p)")
	[ ! -e "/tmp/memprof-$(id -u)/ctl.$pid" ] || fail_ "crash $1: its control socket was left"
}
check return 0 exit_code 0
check return 42 exit_code 42 42
check exit 3 exit_code 3 3
check _exit 4 exit_code 4 4
check abort 134 exit_signal 6
check segv 139 exit_signal 11
expect_count 1 '^EXIT .*status=3' <(check exit 3 exit_code 3 3; cat p)

# SIGKILL from outside, while it waits.
keep_bg "$MEMPROF" run -q -f -o k.bin "$WORKLOADS/crash" wait
mpid=$!
wait_until 60 grep -q waiting out
grep -q waiting out || fail_ "the program did not start"
child=$(pgrep -P $mpid) || fail_ "no child of memprof"
kill -KILL "$child"
reap $mpid
expect_rc 137 "SIGKILL"
"$MEMPROF" parse --stacks k.bin > p || fail_ "parse after SIGKILL"
expect_count 7 '^ALLOC .*size=77 ' p
[ "$(field exit_signal "$(grep ^TRAILER p)")" = 9 ] || fail_ "SIGKILL trailer: $(grep ^TRAILER p)"
[ ! -e "/tmp/memprof-$(id -u)/ctl.$child" ] || fail_ "SIGKILL: its control socket was left"

# SIGTERM sent to memprof goes on to a program that does not catch it.
keep_bg "$MEMPROF" run -q -f -o w.bin "$WORKLOADS/crash" wait
mpid=$!
wait_until 60 grep -q waiting out
kill -TERM $mpid
reap $mpid
expect_rc 143 "SIGTERM to memprof"
[ "$(field exit_signal "$("$MEMPROF" parse w.bin | grep ^TRAILER)")" = 15 ] || fail_ "SIGTERM trailer"

# A program that catches SIGTERM may have had its own copy: memprof says so and
# adds none; the program gets exactly the one sent to it.
keep_bg "$MEMPROF" run -q -f -o t.bin "$WORKLOADS/crash" term
mpid=$!
wait_until 60 grep -q waiting out
child=$(pgrep -P $mpid)
kill -TERM $mpid
wait_until 60 grep -q "not passed on" err
grep -q "memprof: warning: Terminated not passed on to '$WORKLOADS/crash' (pid $child), which handles it itself" err ||
	fail_ "no note about the signal: $(cat err)"
kill -TERM "$child"
reap $mpid
expect_rc 1 "SIGTERM: the SIGTERMs the program counted"

# SIGTERM to the whole process group: the program gets its own copy, memprof adds none.
# (setsid makes memprof a group leader: in a script without job control it does not fork.)
keep_bg setsid "$MEMPROF" run -q -f -o g.bin "$WORKLOADS/crash" term
mpid=$!
wait_until 60 grep -q waiting out
grep -q waiting out || fail_ "the program did not start"
[ "$(ps -o pgid= -p $mpid | tr -d ' ')" = "$mpid" ] || framework_failure_ "memprof is not a group leader"
kill -TERM -- -$mpid
reap $mpid
expect_rc 1 "group SIGTERM: the SIGTERMs the program counted"
exit 0
