# Sourced by the attach tests after init.sh: the attachee workload, driven through a
# FIFO, and a skip when this machine does not let us ptrace a process we did not start.
why=$("$INJECT_TOOL" --probe); st=$?
[ $st -eq 77 ] && skip_ "$why"
[ $st -eq 0 ] || framework_failure_ "inject-tool --probe failed with status $st"

. "${MEMPROF_SRCDIR}/tests/e2e/lib-attachee.sh"
# attach_bg CAPTURE ARGS...: start memprof attach -o CAPTURE ARGS in the background (its
# output in attach.out and attach.err; reap $ATTACH_PID waits for it) and wait until the
# capture has its ATTACH record (the tracker runs in the target).
attach_bg() {
	local out=$1; shift
	# The wait below ends at the first ATTACH record in $out: a capture left there by an
	# earlier attach would end it before this one has started tracking.
	! "$MEMPROF" parse "$out" 2>/dev/null | grep -q '^ATTACH' ||
		framework_failure_ "attach_bg: $out already holds a capture with an ATTACH record"
	keep_bg -n attach "$MEMPROF" attach -o "$out" "$@"
	ATTACH_PID=$!
	wait_until 60 attaching_ "$out"
	"$MEMPROF" parse "$out" 2>/dev/null | grep -q '^ATTACH' ||
		fail_ "memprof attach did not start tracking: $(cat attach.err)"
}
# attaching_ CAPTURE: it has its ATTACH record, or memprof attach is gone.
attaching_() {
	"$MEMPROF" parse "$1" 2>/dev/null | grep -q '^ATTACH' || ! kill -0 $ATTACH_PID 2>/dev/null
}
# detach_wait [PID] WHAT: memprof detach -q PID ($TARGET_PID), then the end of the attach_bg's
# memprof attach; both must succeed.
detach_wait() {
	local pid=$TARGET_PID
	[ $# -lt 2 ] || { pid=$1; shift; }
	keep -n detach "$MEMPROF" detach -q "$pid"
	expect_rc 0 "$1: memprof detach"
	reap "$ATTACH_PID"
	expect_rc 0 "$1: memprof attach"
}
