#!/bin/bash
# stats, summary and tree on a capture that `memprof run` made of a real
# program (tests/workloads/allocs.c, whose header lists every allocation):
# every figure follows from the program's source.
#   allocations 1023: make_kept 10, churn 1000, grow_chain 3, calloc 1, the five
#     aligned allocators, reallocarray 1, mmap 1, strdup 1, zero_malloc 1
#   bytes 69,396: 10,045 + 32,000 + 1,110 + 1,000 + 12,672 + 200 + 12,288 + 17 + 64
#   leaked 11,062 B in 12 blocks: make_kept 10,045 (10), calloc 1,000, strdup 17
#   peak 23,333 B in 12 blocks: make_kept and calloc (11,045) with the 3-page mapping
#     (12,288), made while they are live
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
command -v python3 > /dev/null || skip_ "python3 is not installed"
src="$MEMPROF_SRCDIR/tests/workloads/allocs.c"
[ "$(getconf PAGESIZE)" = 4096 ] || skip_ "the figures assume 4 KiB pages"
# Source paths are as the compiler saw them (../../tests/... out of tree): shown as allocs.c.
norm() { sed 's|[^ ]*tests/workloads/allocs\.c|allocs.c|g' out > out.norm && mv out.norm out; }
row() { grep -F "│ $1 " out | tr -s ' ' | sed 's/ │ /|/g; s/^│ //; s/ │$//'; }

mp run -q -o a.bin "$WORKLOADS/allocs"
expect_rc 0 "run allocs"

mp stats --json -o s.json a.bin
expect_rc 0 "stats --json"
got=$(python3 -c '
import json
d = json.load(open("s.json"))
print(d["total_num_allocations"], d["total_bytes_allocated"], d["leaked_bytes"],
      d["leaked_blocks"], d["peak_memory_bytes"], d["total_num_frees"])')
# Frees: everything but the 12 kept blocks, with realloc counting as a free of
# its old block (2 in grow_chain, 1 in zero_realloc) and the mapping's three munmaps
# each a free of part of it (1 mapping).
[ "$got" = "1023 69396 11062 12 23333 1013" ] ||
	fail_ "stats --json: '$got', expected '1023 69396 11062 12 23333 1013'"

mp stats a.bin
expect_rc 0 "stats"
expect_no_err "stats"
grep -A1 '^Total allocations:' out | grep -qx $'\t1023' || fail_ "stats: total allocations"
grep -A1 '^Leaked memory' out | grep -qx $'\t10.803 KiB in 12 blocks' || fail_ "stats: leaks"
grep -A1 '^Peak memory usage:' out | grep -q $'^\t22.786 KiB in 12 blocks, at ' || fail_ "stats: peak"

# summary --leaks: make_kept owns its 10 blocks, main the calloc, copy its
# strdup (the allocation's site: strdup is libc's).
mp summary --leaks a.bin
expect_rc 0 "summary --leaks"
norm
expect_out "Leaked memory (still allocated at the end): 10.803 KiB in 12 allocations"
[ "$(row "make_kept at allocs.c")" = \
  "make_kept at allocs.c|9.810 KiB|90.81 %|9.810 KiB|90.81 %|10" ] ||
	fail_ "summary: make_kept row is '$(row "make_kept at allocs.c")'"
[ "$(row "main at allocs.c")" = \
  "main at allocs.c|10.803 KiB|100.00 %|1000 B|9.04 %|12" ] ||
	fail_ "summary: main row is '$(row "main at allocs.c")'"
row "copy at allocs.c" | grep -qx 'copy at allocs.c|17 B|0.15 %|17 B|0.15 %|1' ||
	fail_ "summary: copy row is '$(row "copy at allocs.c")'"
# The churn was freed: it is no leak.
expect_not_out "churn"

# tree --leaks: the three leaking paths under main, with their lines.
mp tree --leaks a.bin
expect_rc 0 "tree --leaks"
norm
expect_out "── 9.810 KiB (90.81 %) main → make_kept  allocs.c:$(site make_kept "$src")"
expect_out "── 1000 B (9.04 %) main  allocs.c:$(site calloc "$src")"
expect_out "── 17 B (0.15 %) main → copy → "
expect_not_out "churn"

# tree at the peak: the mapping is the biggest branch.
mp tree a.bin
expect_rc 0 "tree"
norm
expect_out "Peak memory: 22.786 KiB in 12 allocations"
expect_out "── 12.000 KiB (52.66 %) main → mapping  allocs.c:$(site mmap "$src")"
exit 0
