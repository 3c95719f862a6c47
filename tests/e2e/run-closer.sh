#!/bin/bash
# A program that closes every descriptor it inherited (as daemons do: close() on each, closefrom,
# close_range, or the system call itself) is tracked to its end: every allocation before and
# after, from threads started after; its own descriptors, output and status stay its own. So is
# one started with its standard streams closed, under a low descriptor or address-space limit.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"

# counts CAPTURE WHAT N: closer's allocations, exactly, by their stacks (by their sizes, 111 and
# 222, in a capture the tracker wrote itself: it has no symbols).
counts() {
	local before='frames=\["closer_before","main"' work='frames=\["closer_work","worker"'
	case "$2" in preloaded*) before= work= ;; esac
	keep -o p -e perr "$MEMPROF" parse --stacks "$1"
	expect_rc 0 "$2: parse"
	expect_count 5 "^ALLOC .*size=111 .*$before" p
	expect_count "$3" "^ALLOC .*size=222 .*$work" p
	t=$(grep ^TRAILER p)
	[ "$(field end "$t")" = exit ] && [ "$(field exit_code "$t")" = 0 ] || fail_ "$2: trailer $t"
}
check() {
	mp run -f -o c.bin "$WORKLOADS/closer" "$1" "$2" "$3"
	expect_rc 0 "closer $1"
	[ "$(cat out)" = "message intact" ] || fail_ "closer $1: the program said '$(cat out)'"
	! grep -qE "tracking stopped|lost the connection|are lost|is lost" err || fail_ "closer $1: $(cat err)"
	counts c.bin "closer $1" $(( $2 * $3 ))
}
# 12 threads after the close: more rings than the rings' file held, so it grows after it.
check loop 12 1000
check closefrom 12 1000
check close_range 12 1000
# Past the hooks, the collector reads the rings on while the process maps them (it says so
# when the socket's end comes before the process's).
check raw 3 1000
# Under a low descriptor limit the tracker's numbers start at 3: after the system call, the
# program's own socket pair gets them, and closing it is the program's to do.
(ulimit -n 150 && check raw 3 1000) || exit 1
# A descriptor the program puts at one of the tracker's numbers (dup2, dup3) is the program's:
# the tracker's moves aside (a shell's "exec 200>lock" wrote into the rings' file before).
check dup2 2 100
check dup2 12 1000
# Under an address-space limit (ulimit -v, as sandboxes set) the rings reserve less of it: 1 GB
# once left the tracker no room for its 2 GiB of rings, and the program ran untracked. (Two
# threads: each thread's malloc arena reserves 64 MB of address space, tracked or not.)
# (Not in a sanitized build: memprof's ASAN reserves terabytes of address space for itself.)
if [ -n "${MEMPROF_SANITIZED:-}" ]; then
	warn_ "$ME_: no address-space limit in a sanitized build (ASAN's shadow memory)"
else
	(ulimit -v 1000000 && "$WORKLOADS/closer" loop 2 500 > /dev/null && check loop 2 500) || exit 1
fi

# ...but a thread that needs a ring the file no longer has room for stops tracking, saying why:
# the program runs on, unharmed.
mp run -f -o r.bin "$WORKLOADS/closer" raw 12 1000
expect_rc 0 "raw, 12 threads"
[ "$(cat out)" = "message intact" ] || fail_ "raw, 12 threads: '$(cat out)'"
grep -qx "memprof: the program closed the tracker's descriptors with a system call its hooks do not see, and a new thread needs a ring; tracking stopped" err ||
	fail_ "raw, 12 threads: $(cat err)"
"$MEMPROF" parse --stacks r.bin > p || fail_ "raw, 12 threads: parse"
expect_count 5 '^ALLOC .*size=111 .*frames=\["closer_before","main"' p

# A tracker preloaded by hand writes its own capture: its descriptor stays open (the hooks),
# moves aside (dup2), or is opened again by its path (the system call; a relative one, after
# the program's chdir("/")).
for how in loop raw dup2; do
	rm -f "d.$how.bin"
	run env MEMPROF_OUTPUT="d.$how.bin" LD_PRELOAD="$TRACKER_LIB" "$WORKLOADS/closer" $how 3 1000
	expect_rc 0 "preloaded, $how"
	[ "$(cat out)" = "message intact" ] || fail_ "preloaded, $how: '$(cat out)'"
	expect_no_err "preloaded, $how"
	counts "d.$how.bin" "preloaded, $how" 3000
done

# Started with its standard input and output closed, a program finds them closed, tracked or not:
# the tracker's descriptors (and libunwind's pipe) are out of its way.
keep -o - -e plain.fds "$WORKLOADS/closer" fds 2 100 <&- >&-
expect_rc 0 "fds, untracked"
keep -o - -e tracked.fds "$MEMPROF" run -q -f -o s.bin "$WORKLOADS/closer" fds 2 100 <&- >&-
expect_rc 0 "fds, tracked"
grep -v '^memprof: ' tracked.fds | cmp -s - plain.fds ||
	fail_ "the tracked program finds other descriptors open: $(cat tracked.fds) against $(cat plain.fds)"
counts s.bin "fds" 200

# A daemon(): the parent leaves by an _exit inside the C library, which the tracker does not see.
# That is no exec, and the child's capture has the rest.
mp run --follow-fork -f -o m.bin "$WORKLOADS/closer" daemon 2 500
expect_rc 0 "daemon"
! grep -q "replaced itself" err || fail_ "daemon: $(cat err)"
counts m.bin "daemon's parent" 0
child=$(ls m.bin.* 2>/dev/null)
[ -n "$child" ] || fail_ "daemon: no capture of the child: $(cat err)"
"$MEMPROF" parse --stacks "$child" > p || fail_ "daemon: parse the child's"
expect_count 1000 '^ALLOC .*size=222 .*frames=\["closer_work","worker"' p
[ "$(cat out)" = "message intact" ] || fail_ "daemon: the child said '$(cat out)'"

# Closing what it inherited, then replacing itself: the capture ends at the exec.
mp run -f -o e.bin "$WORKLOADS/closer" raw 1 100 exec /bin/true
expect_rc 0 "raw then exec"
"$MEMPROF" parse --stacks e.bin > p || fail_ "raw then exec: parse"
expect_count 100 '^ALLOC .*size=222 .*frames=\["closer_work","worker"' p
grep -q "replaced itself with another program (exec), which was not tracked; --follow-fork tracks it" err ||
	fail_ "raw then exec: no note of the exec: $(cat err)"
exit 0
