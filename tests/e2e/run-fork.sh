#!/bin/bash
# fork: by default the child stops tracking; --follow-fork gives it a capture of its own.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"

mp run -q -o f.bin "$WORKLOADS/forks"
expect_rc 0 "run forks"
ls f.bin.* 2>/dev/null && fail_ "a child capture without --follow-fork"
"$MEMPROF" parse --stacks f.bin > p || fail_ "parse"
expect_count 3 '^ALLOC .*size=100 .*frames=\["parent_alloc","main"' p
expect_count 1 '^ALLOC .*size=300 .*frames=\["after_fork","main"' p
expect_count 0 '^ALLOC .*size=200 ' p
expect_count 4 '^ALLOC ' p
expect_count 0 '^FREE ' p
expect_count 1 '^FORK .*child_pid=[0-9]+' p
child=$(field child_pid "$(grep ^FORK p)")

# With addresses kept, the parent's blocks can be found in the child's capture.
mp run -q -f --follow-fork --keep-addresses -o f.bin "$WORKLOADS/forks"
expect_rc 0 "run --follow-fork forks"
"$MEMPROF" parse --stacks f.bin > p || fail_ "parse"
child=$(field child_pid "$(grep ^FORK p)")
[ -f "f.bin.$child" ] || fail_ "no capture f.bin.$child for the child"
[ "$(ls f.bin.* | wc -l)" -eq 1 ] || fail_ "more than one child capture: $(ls f.bin.*)"
"$MEMPROF" parse --stacks "f.bin.$child" > c || fail_ "parse the child's capture"
h=$(grep ^HEADER c)
parent=$(field pid "$(grep ^HEADER p)")
[ "$(field pid "$h")" = "$child" ] || fail_ "child header pid: $h"
[ "$(field forked_from "$h")" = "$parent" ] || fail_ "child header forked_from: $h"
grep -q 'fork-child' <<<"$h" || fail_ "child header flags: $h"
expect_count 5 '^ALLOC .*size=200 .*frames=\["child_alloc","main"' c
expect_count 5 '^ALLOC ' c
# The child frees one of its parent's blocks: a free of an address it never saw allocated.
paddr=$(field addr "$(grep -E '^ALLOC .*size=100 ' p | head -1)")
[ -n "$paddr" ] || fail_ "--keep-addresses: no address on the parent's allocation"
expect_count 1 "^FREE .*addr=$paddr\$" c
expect_count 0 '^(ALLOC|FREE) .*block=' c
[ "$(field exit_code "$(grep ^TRAILER c)")" = 5 ] || fail_ "child trailer: $(grep ^TRAILER c)"
[ "$(field exit_code "$(grep ^TRAILER p)")" = 0 ] || fail_ "parent trailer"

# forks_run MODE N SECONDS: `forks MODE N` under --follow-fork and a 1 ms
# interval, in its own directory; N children, each with its 5 allocations.
forks_run() {
	mkdir "$T/$1" && cd "$T/$1" || fail_ "mkdir $1"
	run timeout "$3" "$MEMPROF" run -q --follow-fork --memory-interval-ms 1 -o m.bin "$WORKLOADS/forks" "$1" "$2"
	[ "$rc" -ne 124 ] || { pkill -KILL -f "$WORKLOADS/forks $1 $2"; fail_ "forks $1: $2 children under --follow-fork: still running after $3 s ($(ls | wc -l) files)"; }
	expect_rc 0 "forks $1"
	grep -qx "forked $2 children" out || fail_ "forks $1: $(head -c 200 out)"
	[ "$(ls m.bin.* | wc -l)" -eq "$2" ] || fail_ "forks $1: $(ls m.bin.* | wc -l) child captures, expected $2"
	for f in m.bin.*; do
		n=$("$MEMPROF" parse "$f" | grep -cE '^ALLOC .*size=200 ')
		[ "$n" -eq 5 ] || fail_ "forks $1: $f: $n allocations of 200 bytes, expected 5"
	done
}

# Many children while the timer ticks every millisecond: a fork in the middle
# of a tick once left the child waiting forever for the tick's lock.
forks_run many 400 120
"$MEMPROF" parse m.bin > p || fail_ "parse many"
expect_count 400 '^ALLOC .*size=100 ' p
expect_count 400 '^FORK ' p

# The same while 4 threads of the parent allocate without pause: each child
# waits for the collector to take its connection, and the collector, always
# behind on the parent's events, once served it only after processing the
# whole backlog (half a second a child; 300 children took minutes).
forks_run busy 200 60

# Children of a parent whose trace tree and stack map grew past their first
# sizes (4096 stacks, some 8000 nodes): each child starts its capture in
# tables of the first size, and must name again the stack its parent knew.
forks_run wide 20 60
"$MEMPROF" parse --stacks m.bin > p || fail_ "parse wide"
expect_count 4096 '^ALLOC .*size=8 ' p
expect_count 20 '^FORK ' p
k=0
for child in $(grep ^FORK p | sed -E 's/.*child_pid=([0-9]+).*/\1/'); do
	"$MEMPROF" parse --stacks "m.bin.$child" > c || fail_ "parse m.bin.$child"
	expect_count 5 '^ALLOC .*size=200 .*frames=\["child_alloc","wide","main"' c
	expect_count 6 '^ALLOC ' c
	# Innermost first: the function at depth 0 is path_a's when bit 11 of 1000 + k is set.
	want=$(python3 -c 'import sys; b = 1000 + int(sys.argv[1]); print(",".join("\"path_%s\"" % ("a" if b >> i & 1 else "b") for i in reversed(range(12))) + ",\"path_a\",\"wide\"")' "$k")
	expect_count 1 "^ALLOC .*size=8 .*frames=\\[$want" c
	k=$((k + 1))
done
exit 0
