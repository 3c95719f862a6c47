#!/bin/bash
# 100 attach/detach cycles on a process that allocates in three threads all the time.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-attach.sh"

start_target
for i in $(seq 100); do
	keep -n attach "$MEMPROF" attach -q -f --duration 0.02 -o c.bin $TARGET_PID
	expect_rc 0 "cycle $i: attach"
	keep -o p -e perr "$MEMPROF" parse c.bin
	expect_rc 0 "cycle $i: parse the capture"
	[ "$(field end "$(grep ^TRAILER p)")" = detach ] || fail_ "cycle $i: $(grep ^TRAILER p)"
done
running $TARGET_PID
send_cmd "alloc 2 123"
send_cmd "exit 4"
wait $TARGET_PID; st=$?
[ "$st" -eq 4 ] || fail_ "after 100 cycles the target exited $st"
exit 0
