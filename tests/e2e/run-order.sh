#!/bin/bash
# Events from different threads reach the capture in the order they happened:
# threads hand blocks to each other (one frees what another allocated, and
# the allocator gives the address out again), and the capture has every block
# allocated once and freed once, never a free of a block it does not know.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"

order() { # threads, then the environment of the run
	threads=$1
	shift
	run env "$@" "$MEMPROF" run -q -f -o s.bin "$WORKLOADS/swaps" "$threads" $((200000 / threads))
	expect_rc 0 "$*: memprof run"
	keep -o p -e perr "$MEMPROF" parse --stacks s.bin
	expect_rc 0 "$*: parse"
	expect_no_err "$*: parse"
	# Blocks by serial number: every swap_alloc block freed exactly once.
	awk '/^ALLOC .*frames=\["swap_alloc",/ { for (i = 1; i <= NF; i++) if ($i ~ /^block=/) live[$i] = 1; n++ }
	     /^FREE / { for (i = 1; i <= NF; i++) if ($i ~ /^block=/) { if ($i in live) { delete live[$i]; f++ } } }
	     END { left = 0; for (b in live) left++; print n, f, left }' p > counts
	read -r allocs frees left < counts
	[ "$allocs" -eq 200000 ] || fail_ "$*: $allocs allocations by swap_alloc, expected 200000"
	[ "$frees" -eq 200000 ] || fail_ "$*: $frees of them freed, expected 200000"
	[ "$left" -eq 0 ] || fail_ "$*: $left of them never freed"
	"$MEMPROF" stats --json -f -o s.json s.bin || fail_ "$*: stats failed"
	grep -q '"unknown_frees": 0,' s.json || fail_ "$*: frees of unknown blocks: $(grep unknown s.json)"
}

order 4
order 4 MEMPROF_CLOCK=counter
order 4 MEMPROF_CLOCK=tsc
order 4 MEMPROF_RING_KB=4
# More threads than processors: threads are preempted between an event and its record.
order 8
exit 0
