#!/bin/bash
# A detach sent at once after memprof attach starts (no delay between the two) is honoured:
# queued until the tracker is ready, never refused nor lost. 20 cycles, each clean: detach
# says where the capture is, attach ends quietly with a complete capture, the process runs on.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/attach-init.sh"

start_target
for i in $(seq 20); do
	"$MEMPROF" attach -q -f --duration 4 -o a.bin "$TARGET_PID" > attach.out 2> attach.err &
	apid=$!
	"$MEMPROF" detach -q "$TARGET_PID" > out 2> err; rc=$?
	wait $apid; arc=$?
	[ "$rc" -eq 0 ] || fail_ "cycle $i: detach exited $rc: $(cat err)"
	expect_no_err "cycle $i: detach"
	[ "$arc" -eq 0 ] || fail_ "cycle $i: attach exited $arc: $(cat attach.err)"
	[ ! -s attach.err ] || fail_ "cycle $i: attach said: $(cat attach.err)"
	"$MEMPROF" parse a.bin > p 2> err || fail_ "cycle $i: parse: $(cat err)"
	grep -q "^TRAILER .* end=detach " p || fail_ "cycle $i: $(grep ^TRAILER p)"
	running "$TARGET_PID"
done
send_cmd "exit 0"
wait "$TARGET_PID" || fail_ "the target failed"
exit 0
