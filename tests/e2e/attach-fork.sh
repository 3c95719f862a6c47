#!/bin/bash
# An attached process that forks: the child is not tracked, unless --follow-fork.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-attach.sh"

start_target
attach_bg f.bin -q $TARGET_PID
send_cmd "fork"
detach_wait "detach"
"$MEMPROF" parse f.bin > p
expect_count 1 '^FORK .*child_pid=[0-9]+' p
expect_count 0 '^ALLOC .*size=333 ' p
ls f.bin.* 2>/dev/null && fail_ "a capture of the child without --follow-fork"

# -f overwrites a file that is not a capture (an old capture would end attach_bg's wait early).
echo "not a capture" > f.bin
attach_bg f.bin -q -f --follow-fork $TARGET_PID
send_cmd "fork"
detach_wait "detach --follow-fork"
child=$(field child_pid "$("$MEMPROF" parse f.bin | grep ^FORK)")
[ -f "f.bin.$child" ] || fail_ "no capture f.bin.$child"
"$MEMPROF" parse --stacks "f.bin.$child" > c
expect_count 3 '^ALLOC .*size=333 .*frames=\["child_alloc","main"' c
[ "$(field exit_code "$(grep ^TRAILER c)")" = 3 ] || fail_ "child trailer: $(grep ^TRAILER c)"
grep -q 'forked_from='"$TARGET_PID" c || fail_ "the child's header does not name its parent"
running $TARGET_PID
send_cmd "exit 0"
wait $TARGET_PID || fail_ "the target failed"
exit 0
