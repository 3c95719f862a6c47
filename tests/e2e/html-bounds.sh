#!/bin/bash
# The HTML reports stay within their bounds whatever the capture's size: on
# a capture of 100,000 unique stacks (about 170,000 call tree nodes, 33,000
# allocation sites), the flame graph merges its smallest frames, the
# temporal one too, the table its smallest rows; every page is under 2 MB,
# every total exact, and the pages load and draw in the browser.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-html.sh"

python3 -c "import sys; sys.path.insert(0, '$BROWSER_DIR'); import bench_capture; \
bench_capture.capture_text(100000, 1, 'big.txt')" || framework_failure_ "capture text"
"$MKCAPTURE" -f -o big.bin big.txt || framework_failure_ "mkcapture"
mp stats --json -o stats.json big.bin
expect_rc 0 "stats --json"
leaked=$(python3 -c "import json; d = json.load(open('stats.json')); print('%d/%d' % (d['leaked_bytes'], d['leaked_blocks']))") ||
	fail_ "no leaks in stats.json"

size_ok() {
	n=$(stat -c %s "$1")
	[ "$n" -le 2000000 ] || fail_ "$1 is $n bytes, over 2 MB"
}

# The flame graph of the leaks: every stack leaked one block.
mp flamegraph --leaks -o fg.html big.bin
expect_rc 0 "flamegraph --leaks"
size_ok fg.html
facts fg.html
fact "bounds frames_merged=[0-9]+" fg.html
total=$(sed -n 's/^node <root> total=\([0-9]*\/[0-9]*\)$/\1/p' fg.html.facts)
[ "$total" = "$leaked" ] || fail_ "flame graph total $total, stats says $leaked"
grep -q ';\[smaller frames\] ' fg.html.facts || fail_ "no merged frames in the flame graph"

# Temporal: fewer nodes, the same totals over the full range.
mp flamegraph --temporal --leaks -o tp.html big.bin
expect_rc 0 "flamegraph --temporal --leaks"
size_ok tp.html
facts tp.html
fact "bounds frames_merged=[0-9]+" tp.html
fact "node <root> total=$total" tp.html
fact "window leaks 0 [0-9]+ bytes=${total%/*}" tp.html

# The table: the smallest sites merged by allocator.
mp table --leaks -o tb.html big.bin
expect_rc 0 "table --leaks"
size_ok tb.html
facts tb.html
fact "bounds rows_merged=[0-9]+" tb.html
fact "row - malloc \[smaller locations\] bytes=[0-9]+ count=[0-9]+" tb.html
sum=$(awk '/^row / { split($(NF-1), b, "="); split($NF, c, "="); B += b[2]; C += c[2] } END { printf "%d/%d", B, C }' tb.html.facts)
[ "$sum" = "$total" ] || fail_ "the table's rows add up to $sum, not $total"

check check_capture.py flamegraph --shot bounds-flamegraph fg.html
check check_capture.py temporal --shot bounds-temporal tp.html
check check_capture.py table --shot bounds-table tb.html
exit 0
