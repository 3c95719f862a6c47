#!/bin/bash
# The program's signal handlers across attach and detach: the tracker enters them through a
# trampoline of its own while it is attached (so that a signal that comes while a thread
# holds a lock of the tracker's waits for its release), the program reads back its own
# handler all along, the handler runs, and after the detach the kernel has the program's
# handler again.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-attach.sh"

state() { # the attachee's answer to "sig"
	send_cmd sig
	grep '^handler ' target.out | tail -1
}
start_target
[ "$(state)" = "handler own=1 kernel=1 seen=1" ] || framework_failure_ "untracked: $(state)"
# Attached twice: wrapped each time, given back at each detach.
for round in 1 2; do
	attach_bg a$round.bin $TARGET_PID
	s=$(state)
	[ "$s" = "handler own=1 kernel=0 seen=$((2 * round))" ] || fail_ "attached ($round): $s"
	detach_wait "detach ($round)"
	s=$(state)
	[ "$s" = "handler own=1 kernel=1 seen=$((2 * round + 1))" ] || fail_ "after the detach ($round): $s"
done
send_cmd "exit 0"
wait $TARGET_PID || fail_ "the target exited $?"
exit 0
