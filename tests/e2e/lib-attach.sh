# Sourced by the attach tests after init.sh: the attachee workload, driven through a
# FIFO, and a skip when this machine does not let us ptrace a process we did not start.
why=$("$INJECT_TOOL" --probe); st=$?
[ $st -eq 77 ] && skip_ "$why"
[ $st -eq 0 ] || framework_failure_ "inject-tool --probe failed with status $st"

. "${MEMPROF_SRCDIR}/tests/e2e/lib-attachee.sh"
# attach_bg CAPTURE ARGS...: start memprof attach -o CAPTURE ARGS in the background and
# wait until the capture has its ATTACH record (the tracker runs in the target).
attach_bg() {
	local out=$1; shift
	# The wait below ends at the first ATTACH record in $out: a capture left there by an
	# earlier attach would end it before this one has started tracking.
	! "$MEMPROF" parse "$out" 2>/dev/null | grep -q '^ATTACH' ||
		framework_failure_ "attach_bg: $out already holds a capture with an ATTACH record"
	"$MEMPROF" attach -o "$out" "$@" > attach.out 2> attach.err &
	ATTACH_PID=$!
	for i in $(seq 200); do
		"$MEMPROF" parse "$out" 2>/dev/null | grep -q '^ATTACH' && return 0
		kill -0 $ATTACH_PID 2>/dev/null || break
		sleep 0.025
	done
	fail_ "memprof attach did not start tracking: $(cat attach.err)"
}
