#!/bin/bash
# memprof flamegraph --temporal on a capture of tests/workloads/phases: the
# timeline gives the peak (or the leaks) of any time window; in the browser
# the full range shows phase B and a window over phase A shows phase A.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-html.sh"

mp run -q --memory-interval-ms 5 -o ph.bin "$WORKLOADS/phases"
expect_rc 0 "run phases"
# A moment between the phases, from the capture's own clock (the ticks): the first tick after
# phase A's last free, and the last one before phase B's first allocation, are 100 ms and
# 300 ms after the program's start, which a loaded machine can put well after the capture's.
read -r a_done b_start < <("$MEMPROF" parse ph.bin | awk '
	/^TICK / { sub(/time_us=/, "", $2); t = $2; if (a_freed && a_done == "") a_done = t }
	/^ALLOC .* size=1000 / { a[$4] = 1; live++ }
	/^FREE / && ($4 in a) { delete a[$4]; if (--live == 0) a_freed = 1 }
	/^ALLOC .* size=4000 / && b_start == "" { b_start = t }
	END { print a_done, b_start }')
[ -n "$a_done" ] && [ -n "$b_start" ] && [ "$a_done" -le "$b_start" ] ||
	framework_failure_ "no quiet time between the phases in the capture (phase A done at '$a_done' us, B at '$b_start')"
between=$(( (a_done + b_start) / 2 ))

# Peak: phase B's 50 blocks and keep, 200777 bytes; phase A is listed (the
# timeline refers to it) with nothing at the peak.
mp flamegraph --temporal ph.bin
expect_rc 0 "flamegraph --temporal"
p=memprof-flamegraph-ph.html
facts $p
fact 'report flamegraph mode=peak inverted=0 split=0 temporal=1 threshold=0' $p
fact 'node <root> total=200777/51' $p
fact '.*;main;phase_b total=200000/50 self=200000/50' $p
fact '.*;main;keep total=777/1 self=777/1' $p
fact '.*;main;phase_a total=0/0 self=0/0' $p
fact 'window peak 0 [0-9]+ bytes=200777' $p
fact 'timeline buckets=([2-9]|[1-9][0-9]+) intervals=3' $p
# A window ending between the phases.
check check_capture.py temporal --shot temporal-peak --names phase_b,keep \
	--until-us $between --window-names phase_a --window-bytes 100000 $p

# Leaks: keep's 777 bytes; a window over phase A leaks nothing from it.
mp flamegraph --temporal --leaks -o leaks.html ph.bin
expect_rc 0 "flamegraph --temporal --leaks"
facts leaks.html
fact 'report flamegraph mode=leaks inverted=0 split=0 temporal=1 threshold=0' leaks.html
fact 'node <root> total=777/1' leaks.html
fact 'window leaks 0 [0-9]+ bytes=777' leaks.html
check check_capture.py temporal --shot temporal-leaks --names keep \
	--until-us $between --window-bytes 0 leaks.html

# Inverted and split threads go with it; --max-memory-records bounds the buckets.
mp flamegraph --temporal --inverted --split-threads --max-memory-records 8 -o inv.html ph.bin
expect_rc 0 "flamegraph --temporal --inverted --split-threads --max-memory-records 8"
facts inv.html
fact 'report flamegraph mode=peak inverted=1 split=1 temporal=1 threshold=0' inv.html
fact 'timeline buckets=[2-7] intervals=[0-9]+' inv.html
fact 'node phases \(tid [0-9]+\);phase_b total=200000/50 self=0/0' inv.html
fact 'window peak 0 [0-9]+ bytes=200777' inv.html
n=$(python3 -c "import sys; sys.path.insert(0, sys.argv[1]); import report_data as r; print(len(r.page_data(sys.argv[2])['memory']['time_us']))" "$BROWSER_DIR" inv.html)
[ "$n" -ge 2 ] && [ "$n" -le 8 ] || fail_ "$n memory points with --max-memory-records 8"
check check_capture.py temporal --shot temporal-inverted --names phase_b inv.html

# Temporal reports are of the peak or the leaks (as in memray).
mp flamegraph --temporal --temporary-allocations ph.bin
expect_rc 2 "--temporal --temporary-allocations"
expect_err "memprof flamegraph: options '--temporal' and '--temporary-allocations' cannot be combined"
mp flamegraph --temporary-allocation-threshold 3 --temporal ph.bin
expect_rc 2 "--temporary-allocation-threshold 3 --temporal"
expect_err "options '--temporal' and '--temporary-allocation-threshold' cannot be combined"
exit 0
