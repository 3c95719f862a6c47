#!/bin/bash
# memprof run on a workload that uses every allocator kind: exact counts, sizes, stacks, lines.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
src=$WORKLOAD_SRC/allocs.c

mp run -q -o a.bin "$WORKLOADS/allocs"
expect_rc 0 "run allocs"
expect_out "allocs done"
expect_no_err "run -q"
"$MEMPROF" parse --stacks a.bin > p || fail_ "parse"

# Counts by kind (see tests/workloads/allocs.c).
expect_count 1023 '^ALLOC ' p
expect_count 1013 '^ALLOC .*kind=malloc ' p
expect_count 2 '^ALLOC .*kind=realloc ' p
expect_count 1 '^ALLOC .*kind=calloc .*size=1000 ' p
expect_count 1 '^ALLOC .*kind=posix_memalign .*size=4096 ' p
expect_count 1 '^ALLOC .*kind=aligned_alloc .*size=128 ' p
expect_count 1 '^ALLOC .*kind=memalign .*size=256 ' p
expect_count 1 '^ALLOC .*kind=valloc .*size=4096 ' p
expect_count 1 '^ALLOC .*kind=pvalloc .*size=4096 ' p
expect_count 1 '^ALLOC .*kind=reallocarray .*size=200 ' p
expect_count 1 '^ALLOC .*kind=mmap .*size=12288 ' p
expect_count 1013 '^FREE ' p
expect_count 1007 '^FREE .*kind=free ' p
expect_count 3 '^FREE .*kind=realloc ' p
expect_count 3 '^FREE .*kind=munmap .*size=4096' p

# Stacks and the functions they pass through.
expect_count 1000 '^ALLOC .*size=32 .*frames=\["churn","main",' p
for i in $(seq 1000 1009); do
	expect_count 1 "^ALLOC .*kind=malloc .*size=$i .*frames=\\[\"make_kept\",\"main\"," p
done
expect_count 1 '^ALLOC .*kind=malloc .*size=10 .*frames=\["grow_chain","main"' p
expect_count 1 '^ALLOC .*kind=realloc .*size=100 .*frames=\["grow_chain","main"' p
expect_count 1 '^ALLOC .*kind=realloc .*size=1000 .*frames=\["grow_chain","main"' p
expect_count 1 '^ALLOC .*size=17 .*frames=\["[_A-Za-z]*strdup","copy","main"' p
expect_count 1 '^ALLOC .*kind=malloc .*size=64 .*frames=\["zero_realloc","main"' p
# realloc(p, 0) on glibc frees p: the block of zero_realloc is freed, nothing allocated.
# Heap blocks are numbered (block=N); mappings keep their addresses.
zblock=$(field block "$(grep -E '^ALLOC .*size=64 .*zero_realloc' p)")
[ -n "$zblock" ] || fail_ "no block number on the heap allocation"
expect_count 1 "^FREE .*kind=realloc block=$zblock\$" p
expect_count 0 '^ALLOC .*kind=malloc .*addr=' p
# The middle page is unmapped first, then the others.
maddr=$(field addr "$(grep -E '^ALLOC .*kind=mmap' p)")
first=$(grep -E '^FREE .*kind=munmap' p | head -1)
[ "$(field addr "$first")" = "$(printf '0x%x' $((maddr + 4096)))" ] || fail_ "the first munmap is not the middle page: $first"
# The stack ends in main's callers.
grep -qE '^ALLOC .*frames=\["churn","main",.*"_start"\]' p || fail_ "stacks do not reach _start"

# Source lines of the allocation sites.
for s in make_kept churn chain_malloc posix_memalign aligned_alloc memalign valloc pvalloc reallocarray mmap; do
	line=$(site "$s" "$src")
	grep -qE "^SYMBOL .*frames=\[\"[a-z_]+\" \"[^\"]*tests/workloads/allocs.c\":$line:" p ||
		fail_ "no symbol at allocs.c:$line (SITE:$s)"
done

# Header and trailer.
h=$(grep '^HEADER' p)
[ "$(field mode "$h")" = run ] || fail_ "mode: $h"
grep -q 'flags=symbolized' <<<"$h" || fail_ "not symbolized: $h"
grep -q "exe=\"$WORKLOADS/allocs\"" <<<"$h" || fail_ "exe: $h"
t=$(grep '^TRAILER' p)
[ "$(field exit_code "$t")" = 0 ] || fail_ "trailer exit code: $t"
[ "$(field allocs "$t")" = 1023 ] || fail_ "trailer allocs: $t"
[ "$(field frees "$t")" = 1013 ] || fail_ "trailer frees: $t"
[ "$(field end "$t")" = exit ] || fail_ "end reason: $t"
# 10045 + 32000 + 10+100+1000 + 1000 + 4096+128+256+4096+4096 + 200 + 12288 + 17 + 64
[ "$(field bytes_allocated "$t")" = 69396 ] || fail_ "bytes: $t"
exit 0
