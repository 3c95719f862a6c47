#!/bin/bash
# Heap blocks by serial number (the default) or by address (--keep-addresses):
# the same events, every report the same, and the numbered capture is smaller.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"

mp run -q -o num.bin "$WORKLOADS/oracle" 20000
expect_rc 0 "run oracle"
mp run -q --keep-addresses -o addr.bin "$WORKLOADS/oracle" 20000
expect_rc 0 "run --keep-addresses oracle"
"$MEMPROF" parse num.bin > num.txt || fail_ "parse num.bin"
"$MEMPROF" parse addr.bin > addr.txt || fail_ "parse addr.bin"

# The same events; heap blocks numbered 0, 1, ... in one, addresses in the other.
for re in '^ALLOC ' '^FREE ' '^ALLOC .*kind=realloc ' '^FREE .*kind=realloc '; do
	[ "$(count "$re" num.txt)" = "$(count "$re" addr.txt)" ] ||
		fail_ "'$re': $(count "$re" num.txt) lines by number, $(count "$re" addr.txt) by address"
done
expect_count 0 '^(ALLOC|FREE) .*kind=(malloc|calloc|realloc|free) .*addr=0x[1-9a-f]' num.txt
expect_count 0 '^(ALLOC|FREE) .* block=' addr.txt
n=$(count '^ALLOC .* block=' num.txt)
[ "$n" -gt 10000 ] || fail_ "only $n numbered allocations"
grep '^ALLOC .* block=' num.txt | sed 's/.* block=\([0-9]*\) .*/\1/' > serials
seq 0 $((n - 1)) | cmp -s - serials || fail_ "blocks are not numbered 0 to $((n - 1)) in order"
# Every numbered free names a block allocated before it and not freed yet.
awk '/^ALLOC .* block=/ { sub(/.* block=/, ""); sub(/ .*/, ""); live[$0] = 1 }
     /^FREE .* block=/ { sub(/.* block=/, ""); if (!($0 in live)) { print "bad free of block " $0; exit 1 } delete live[$0] }' \
	num.txt || fail_ "a free of a block that is not live"

# Every report is the same, but for what differs between two runs.
norm() { grep -vE '^(Capture|PID|Start time|Duration):|\(oracle\):' | sed -E 's/ at [0-9.]+ (us|ms|s)\b//g'; }
for cmd in stats summary "summary --leaks" tree "tree --leaks" "tree --temporary-allocations"; do
	for f in num addr; do
		# shellcheck disable=SC2086
		keep -o $f.out "$MEMPROF" $cmd $f.bin
		expect_rc 0 "$cmd $f.bin"
	done
	norm < num.out > a.txt
	norm < addr.out > b.txt
	[ -s a.txt ] || fail_ "$cmd printed nothing"
	diff -u b.txt a.txt >&2 || fail_ "$cmd differs between the numbered and the addressed capture"
done

num_size=$(stat -c %s num.bin)
addr_size=$(stat -c %s addr.bin)
[ "$num_size" -lt "$addr_size" ] || fail_ "numbered capture $num_size bytes, addressed $addr_size"
exit 0
