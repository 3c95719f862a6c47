#!/bin/bash
# Several captures: those of different programs refused with one line unless
# --merge; --children on a capture without children, on a missing file; a
# forked child whose capture is gone named; an aggregated capture with others.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"

cp "$TESTDATA/basic.mprof" other.bin
mp run -q --follow-fork -o f.bin "$WORKLOADS/forks"
expect_rc 0 "run --follow-fork forks"
child=$(ls f.bin.*)

for cmd in stats summary tree "transform folded" table flamegraph; do
	mp $cmd f.bin other.bin
	expect_rc 1 "$cmd of two programs"
	expect_one_line_err
	grep -qxF "memprof: 'f.bin' and 'other.bin' are captures of different programs ('$WORKLOADS/forks' and '/usr/bin/golden'), not of one process tree: add --merge to report them as one" err || fail_ "unexpected error: $(cat err)"
done
mp stats --merge f.bin other.bin
expect_rc 0 "stats --merge"
grep -q "^Capture: f.bin and 1 more: a process tree of 2 processes" out || fail_ "stats --merge: $(head -3 out)"
# Of one program, several runs: as one without --merge.
cp f.bin again.bin
mp stats f.bin again.bin
expect_rc 0 "two runs of one program"

mp stats --children other.bin
expect_rc 1 "--children without --follow-fork"
expect_one_line_err
grep -qxF "memprof: 'other.bin' was recorded without --follow-fork: no process it forked was tracked" err || fail_ "unexpected error: $(cat err)"
mp stats --children nothere.bin
expect_rc 1 "--children of a missing file"
expect_err "nothere.bin"

# A child's capture moved away: --children says which.
mv "$child" elsewhere.bin
mp stats --children f.bin
expect_rc 0 "--children with a child missing"
expect_one_line_err
grep -qxF "memprof: warning: 1 forked process left no capture next to 'f.bin' (pid ${child#f.bin.}): it allocated nothing, or the file was moved" err || fail_ "unexpected error: $(cat err)"
mv elsewhere.bin "$child"
mp stats --children f.bin
expect_rc 0 "--children"
expect_no_err "--children"

# diff: each side with its family (the parent's 300 B and the child's 1000 B at the peak).
mp diff --children f.bin f.bin
expect_rc 0 "diff --children"
grep -qx "Peak memory: 1.270 KiB in 8 allocations -> 1.270 KiB in 8 allocations (0 B, 0)" out ||
	fail_ "diff --children: $(cat out)"

mp run -q --aggregate -o agg.bin "$WORKLOADS/forks"
expect_rc 0 "run --aggregate"
mp stats --merge agg.bin f.bin
expect_rc 1 "an aggregated capture with others"
expect_one_line_err
grep -qxF "memprof: 'agg.bin' is an aggregated capture (--aggregate), with totals per stack and no events: it cannot be read with other captures" err || fail_ "unexpected error: $(cat err)"
exit 0
