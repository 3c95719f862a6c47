#!/bin/bash
# Threads: names, per-thread events, one stack per site.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"

mp run -q -o t.bin "$WORKLOADS/threads"
expect_rc 0 "run threads"
expect_out "threads done"
"$MEMPROF" parse --stacks t.bin > p || fail_ "parse"
expect_count 1000 '^ALLOC .*size=64 .*frames=\["worker_alloc","worker",' p
expect_count 1 '^ALLOC .*size=4321 .*frames=\["main",' p
for i in 0 1 2 3; do
	line=$(grep -E "^THREAD .*name=\"worker-$i\"" p | head -1)
	[ -n "$line" ] || fail_ "no thread named worker-$i"
	idx=$(field index "$line")
	n=$(grep -cE "^ALLOC thread=$idx .*size=64 " p)
	[ "$n" -eq 250 ] || fail_ "worker-$i (index $idx) made $n allocations, expected 250"
done
# Each worker frees its own 250 blocks.
expect_count 1000 '^FREE thread=[1-9][0-9]* kind=free ' p
pid=$(field pid "$(grep ^HEADER p)")
grep -qE "^THREAD index=0 tid=$pid " p || fail_ "the main thread is not index 0"
exit 0
