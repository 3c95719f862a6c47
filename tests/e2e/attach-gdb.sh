#!/bin/bash
# attach --method gdb: the same tracking through gdb; where gdb cannot make calls (gdb 13.1 on
# a CPU with AMX), one line that says so and what to do, and the process runs on untouched.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-attach.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-gdb.sh"

start_target
if [ -n "$GDB_LIMIT" ]; then
	mp attach --method gdb -o g.bin $TARGET_PID
	expect_rc 1 "attach --method gdb where gdb cannot make calls"
	expect_one_line_err
	[ "$(cat err)" = "memprof: $(gdb_limit_error $TARGET_PID)" ] || fail_ "attach --method gdb said: $(cat err)"
	[ ! -e g.bin ] || fail_ "the failed attach left g.bin"
	running $TARGET_PID
	# Untouched: it works on, and tracking through ptrace starts as usual.
	attach_bg p.bin $TARGET_PID
	send_cmd "alloc 20 2020"
	detach_wait "detach"
	running $TARGET_PID
	"$MEMPROF" parse --stacks p.bin > p
	expect_count 20 '^ALLOC .*size=2020 .*frames=\["command_alloc","main"' p
	send_cmd "exit 0"
	wait $TARGET_PID || fail_ "the target failed"
	skip_ "gdb cannot make calls here ($GDB_LIMIT): memprof's words for it were tested, not tracking through gdb"
fi
attach_bg g.bin --method gdb $TARGET_PID
send_cmd "alloc 20 2020"
detach_wait "detach"
running $TARGET_PID
"$MEMPROF" parse --stacks g.bin > p
expect_count 20 '^ALLOC .*size=2020 .*frames=\["command_alloc","main"' p
send_cmd "exit 0"
wait $TARGET_PID || fail_ "the target failed"
exit 0
