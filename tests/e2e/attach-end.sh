#!/bin/bash
# The normal end of memprof attach (its --duration, a detach, Ctrl-C) says what it wrote and
# nothing that reads like trouble: the tracker closing its socket is the detach itself.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-attach.sh"

start_target
for i in 1 2 3; do
	rm -f a.bin
	mp attach --duration 1 -o a.bin "$TARGET_PID"
	expect_rc 0 "attach $i"
	grep -q "^memprof: tracking process $TARGET_PID ('.*') into 'a.bin' after [0-9]* ms; stop with Ctrl-C or 'memprof detach $TARGET_PID'$" err ||
		fail_ "attach $i: no line for the start: $(cat err)"
	grep -q "^memprof: wrote 'a.bin': [0-9]* allocations and [0-9]* frees since attach, [0-9]* bytes on disk$" err ||
		fail_ "attach $i: no line for the capture: $(cat err)"
	! grep -v "^memprof: note: no debug information" err | grep -v "^memprof: tracking process" |
		grep -qv "^memprof: wrote 'a.bin'" || fail_ "attach $i said more: $(cat err)"
	"$MEMPROF" parse a.bin | grep -q "^TRAILER .* end=detach " || fail_ "attach $i: no detach in the trailer"
	running "$TARGET_PID"
done
send_cmd "exit 0"
wait "$TARGET_PID" || fail_ "the target failed"
exit 0
