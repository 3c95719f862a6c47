#!/bin/bash
# attach --method gdb: the same tracking through gdb.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-attach.sh"
command -v gdb > /dev/null || skip_ "gdb is not installed"

start_target
attach_bg g.bin --method gdb $TARGET_PID
send_cmd "alloc 20 2020"
detach_wait "detach"
running $TARGET_PID
"$MEMPROF" parse --stacks g.bin > p
expect_count 20 '^ALLOC .*size=2020 .*frames=\["command_alloc","main"' p
send_cmd "exit 0"
wait $TARGET_PID || fail_ "the target failed"
exit 0
