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

# Thread churn: 1600 threads, 8 at a time, each on a stack of another size
# than the ended thread whose tracker state it takes over. Every allocation
# keeps its own stack: 1000 + D bytes under D + 1 frames of churn_rec.
mp run -q -f -o c.bin "$WORKLOADS/threads" churn 200
expect_rc 0 "run threads churn"
expect_out "churned 1600 threads"
"$MEMPROF" parse --stacks c.bin > pc || fail_ "parse churn"
expect_count 32000 '^ALLOC .*frames=\["churn_rec",' pc
awk '/^ALLOC .*frames=\["churn_rec",/ {
	match($0, / size=[0-9]+ /); size = substr($0, RSTART + 6, RLENGTH - 7)
	n = gsub(/"churn_rec"/, "&")
	if (n != size - 1000 + 1 || $0 !~ /"churn_rec","churner","start_thread","__clone3"\]$/) {
		print "wrong stack for size " size ": " $0; bad++
	}
} END { exit bad > 0 }' pc > bad || fail_ "churned threads' stacks: $(head -c 600 bad)"

# Threads cancelled while they allocate, under memprof run and written
# directly by the preloaded tracker (whose threads drain the rings): a cancel
# that acted inside the tracker once left a lock held and the program hung.
# Every pair a cancelled thread made is in the capture.
cancel_counts() { # CAPTURE: the cancelled threads' allocations and frees
	"$MEMPROF" stats --json -o - "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
w = [t for t in d["threads"] if t["name"] == "cancel-w"]
print(sum(t["num_allocations"] for t in w), sum(t["num_frees"] for t in w))'
}
for how in run direct; do
	rm -f k.bin
	if [ $how = run ]; then
		run timeout 120 "$MEMPROF" run -q -o k.bin "$WORKLOADS/threads" cancel 60
	else
		run timeout 120 env MEMPROF_OUTPUT="$T/k.bin" LD_PRELOAD="$TRACKER_LIB" \
			"$WORKLOADS/threads" cancel 60
	fi
	[ $rc -ne 124 ] || { pkill -KILL -f "$WORKLOADS/threads cancel"; fail_ "$how: cancelled threads: still running after 120 s"; }
	expect_rc 0 "$how: threads cancel"
	pairs=$(sed -n 's/^cancelled 240 threads after \([0-9]*\) pairs$/\1/p' out)
	[ -n "$pairs" ] || fail_ "$how: threads cancel printed: $(head -c 200 out)"
	got=$(cancel_counts k.bin) || fail_ "$how: stats of the cancel capture"
	[ "$got" = "$pairs $pairs" ] || fail_ "$how: the capture has '$got' allocations and frees of cancelled threads, the program made $pairs pairs"
done
exit 0
