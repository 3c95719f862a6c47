#!/bin/bash
# A detach sent at once after memprof attach starts (no delay between the two) is honoured:
# queued until the tracker is ready, never refused nor lost. 20 cycles, each clean: detach
# says where the capture is, attach ends quietly with a complete capture, the process runs on.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-attach.sh"

start_target
for i in $(seq 20); do
	keep_bg -n attach "$MEMPROF" attach -q -f --duration 4 -o a.bin "$TARGET_PID"
	apid=$!
	mp detach -q "$TARGET_PID"
	expect_rc 0 "cycle $i: detach"
	expect_no_err "cycle $i: detach"
	reap $apid
	expect_rc 0 "cycle $i: attach"
	expect_no_err "cycle $i: attach"
	keep -o p "$MEMPROF" parse a.bin
	expect_rc 0 "cycle $i: parse"
	grep -q "^TRAILER .* end=detach " p || fail_ "cycle $i: $(grep ^TRAILER p)"
	running "$TARGET_PID"
done
send_cmd "exit 0"
wait "$TARGET_PID" || fail_ "the target failed"
exit 0
