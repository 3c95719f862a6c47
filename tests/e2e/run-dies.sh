#!/bin/bash
# A program that dies of a signal, or ends with _exit from a thread, leaves every
# allocation that had returned in its capture: the collector still holds the
# tracker's rings when the process is gone.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"

# dies STATUS ARGS...: run the workload (with $DIES_ENV in its environment), expect STATUS.
dies() {
	want=$1
	shift
	run env ${DIES_ENV:-} "$MEMPROF" run -q -f -o d.bin "$WORKLOADS/dies" "$@"
	expect_rc "$want" "dies $* (${DIES_ENV:-})"
	keep -o p -e perr "$MEMPROF" parse --stacks d.bin
	expect_rc 0 "dies $*: parse"
	expect_no_err "dies $*: parse"
}
# expect ALLOCS FIELD VALUE: the capture's allocations by dies_alloc, and a trailer field.
expect() {
	n=$(count '^ALLOC .*frames=\["dies_alloc",' p)
	[ "$n" -eq "$1" ] || fail_ "${DIES_ENV:-} $n allocations in the capture, expected $1"
	t=$(grep ^TRAILER p)
	[ "$(field "$2" "$t")" = "$3" ] || fail_ "trailer $t: expected $2=$3"
}

dies 139 segv 100
expect 100 exit_signal 11
dies 139 raise 5
expect 5 exit_signal 11
dies 135 sigbus 7
expect 7 exit_signal 7
dies 139 overflow 9
expect 9 exit_signal 11
dies 5 thread-exit 11
expect 11 exit_code 5

# Rings far smaller than what the program writes: its threads wait for the
# collector, and nothing is dropped.
DIES_ENV=MEMPROF_RING_KB=4 dies 139 segv 5000 64
expect 5000 exit_signal 11
# Records ordered by either clock (the default depends on the number of CPUs).
DIES_ENV=MEMPROF_CLOCK=counter dies 139 raise 5
expect 5 exit_signal 11
DIES_ENV=MEMPROF_CLOCK=tsc dies 139 raise 5
expect 5 exit_signal 11
exit 0
