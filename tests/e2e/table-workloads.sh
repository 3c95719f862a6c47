#!/bin/bash
# memprof table on captures of the allocs and threads workloads: one row
# per (thread, allocator, site) with the exact sizes and counts, and the page
# in headless Chromium (rows drawn, every column sorted both ways, filter).
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-html.sh"
src=$WORKLOAD_SRC/allocs.c

mp run -q -o a.bin "$WORKLOADS/allocs"
expect_rc 0 "run allocs"
at() { echo "$1 at [^ ]*allocs.c:$(site "$2" "$src")"; }

# Peak: the mapping, make_kept, the calloc.
mp table a.bin
expect_rc 0 "table"
[ "$(cat out)" = "Wrote memprof-table-a.html" ] || fail_ "stdout: $(cat out)"
p=memprof-table-a.html
facts $p
fact 'report table mode=peak inverted=0 split=0 temporal=0 threshold=0' $p
fact "row - mmap $(at mapping mmap) bytes=12288 count=1" $p
fact "row - malloc $(at make_kept make_kept) bytes=10045 count=10" $p
fact "row - calloc $(at main calloc) bytes=1000 count=1" $p
[ "$(grep -c '^row ' $p.facts)" -eq 3 ] || fail_ "$(grep -c '^row ' $p.facts) rows at the peak, expected 3"
# Rows come by decreasing size.
[ "$(grep '^row ' $p.facts | sed 's/.* bytes=\([0-9]*\) .*/\1/' | tr '\n' ' ')" = "12288 10045 1000 " ] ||
	fail_ "rows not by decreasing size"
check check_capture.py table --shot allocs-peak --names mapping,make_kept,main $p

# Leaks: strdup's block is attributed to its caller, copy.
mp table --leaks -o leaks.html a.bin
expect_rc 0 "table --leaks"
facts leaks.html
fact "row - malloc $(at make_kept make_kept) bytes=10045 count=10" leaks.html
fact "row - calloc $(at main calloc) bytes=1000 count=1" leaks.html
fact "row - malloc $(at copy strdup) bytes=17 count=1" leaks.html
fact 'kinds malloc calloc' leaks.html
check check_capture.py table --shot allocs-leaks --names copy,make_kept leaks.html

# Temporary: every allocator kind of the workload, each at its site.
mp table --temporary-allocations -o temp.html a.bin
expect_rc 0 "table --temporary-allocations"
facts temp.html
fact "row - malloc $(at churn churn) bytes=32000 count=1000" temp.html
for k in posix_memalign:4096 aligned_alloc:128 memalign:256 valloc:4096 pvalloc:4096; do
	fact "row - ${k%:*} $(at aligned "${k%:*}") bytes=${k#*:} count=1" temp.html
done
fact "row - reallocarray $(at array reallocarray) bytes=200 count=1" temp.html
fact "row - malloc $(at grow_chain chain_malloc) bytes=10 count=1" temp.html
fact "row - realloc $(at grow_chain chain_realloc1) bytes=100 count=1" temp.html
fact "row - realloc $(at grow_chain chain_realloc2) bytes=1000 count=1" temp.html
fact "row - mmap $(at mapping mmap) bytes=12288 count=1" temp.html
fact "row - malloc $(at zero_realloc zero_malloc) bytes=64 count=1" temp.html
[ "$(grep -c '^row ' temp.html.facts)" -eq 12 ] || fail_ "temporary rows"
check check_capture.py table --shot allocs-temporary --names churn,aligned,grow_chain temp.html

# Split threads: a thread column; each worker's row of 250 x 64 bytes.
mp run -q -o t.bin "$WORKLOADS/threads"
expect_rc 0 "run threads"
mp table --split-threads -o threads.html t.bin
expect_rc 0 "table --split-threads"
facts threads.html
fact 'report table mode=peak inverted=0 split=1 .*' threads.html
line=$(site worker_alloc "$WORKLOAD_SRC/threads.c")
for i in 0 1 2 3; do
	fact "row worker-$i \\(tid [0-9]+\\) malloc worker_alloc at [^ ]*threads.c:$line bytes=16000 count=250" threads.html
done
fact "row threads \\(tid [0-9]+\\) malloc main at [^ ]*threads.c:$(site main_kept "$WORKLOAD_SRC/threads.c") bytes=4321 count=1" threads.html
check check_capture.py table --shot threads-split --names worker_alloc,main threads.html
exit 0
