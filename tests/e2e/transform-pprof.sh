#!/bin/bash
# transform pprof, read by a real consumer: go tool pprof (Debian's golang-go)
# finds the figures of memprof stats in it (totals of every sample type, the
# top function), its functions with files and lines, its mappings with
# build-ids, inlined frames as lines of one location, and threads as labels.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-reports.sh"

command -v go >/dev/null || skip_ "go is not installed (apt-get install golang-go)"
go tool pprof -h >/dev/null 2>&1 || skip_ "'go tool pprof' does not run"
export PPROF_TMPDIR=$T HOME=$T GOCACHE=$T/gocache GOFLAGS=-mod=mod
pprof() { keep -o - -e pprof.err go tool pprof "$@"; expect_rc 0 "go tool pprof $*"; }
# sums FILE: the sums of the four value columns of pprof -raw's samples.
sums() {
	pprof -raw "$1" | awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 }
		s && $4 ~ /:$/ { a += $1; b += $2; c += $3; d += $4 + 0 } END { printf "%.0f %.0f %.0f %.0f\n", a, b, c, d }'
}
# top FILE [OPTIONS]: "TOTAL FUNCTION", the total and the first function of pprof -top.
top() {
	local f=$1
	shift
	pprof -top -unit=B "$@" "$f" | awk '/^Showing nodes accounting for/ { t = $NF == "total" ? $(NF-1) : "" }
		/flat%/ { getline; print t, $NF; exit }'
}
# stat FILE KEY...: figures of memprof stats --json.
stat() {
	local f=$1
	shift
	"$MEMPROF" stats --json -f -o stats.json "$f" >/dev/null || fail_ "stats --json $f"
	python3 -c 'import json, sys
d = json.load(open("stats.json"))
print(" ".join(str(d[k]) if k in d else d["top_allocations_by_size"][0]["function"] for k in sys.argv[1:]))' "$@"
}

# The hand-built capture: 8 allocations of 4198764 B; the peak 4198700 B in 7.
app_capture
mp transform pprof app.mprof
expect_rc 0 "transform pprof"
[ "$(sums memprof-pprof-app.pb.gz)" = "8 4198764 7 4198700" ] || fail_ "app sums: $(sums memprof-pprof-app.pb.gz)"
[ "$(sums memprof-pprof-app.pb.gz)" = "$(stat app.mprof total_num_allocations total_bytes_allocated peak_memory_blocks peak_memory_bytes)" ] ||
	fail_ "app: pprof's sums are not memprof stats' figures"
[ "$(top memprof-pprof-app.pb.gz)" = "4198700B worker_main" ] || fail_ "app top: $(top memprof-pprof-app.pb.gz)"
pprof -raw memprof-pprof-app.pb.gz > raw
grep -q '^alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes\[dflt\]$' raw ||
	fail_ "sample types: $(grep count raw)"
grep -q 'M=1 build_index /src/app.c:30 s=0$' raw || fail_ "no build_index at /src/app.c:30"
# Each sample ends at its allocation site, as memprof stats names it: strdup,
# libc's, is left out (and libc's mapping, unused, from pprof's list).
grep -q 'M=2 libparse.so.1+0x2000 :0 s=0$' raw || fail_ "no unsymbolized frame in its mapping"
grep -q ' strdup ' raw && fail_ "libc's strdup is a sample's leaf: $(grep strdup raw)"
# --raw-leaf: the innermost frame as recorded.
mp transform --raw-leaf -o raw-leaf.pb.gz pprof app.mprof
pprof -raw raw-leaf.pb.gz | grep -q 'M=2 strdup :0 s=0$' || fail_ "--raw-leaf: no strdup"
[ "$(sums raw-leaf.pb.gz)" = "8 4198764 7 4198700" ] || fail_ "--raw-leaf sums: $(sums raw-leaf.pb.gz)"
pprof -raw memprof-pprof-app.pb.gz > raw
grep -q '^1: 0x555555555000/0x555555559000/0x0 /usr/bin/app  \[FN\]\[FL\]\[LN\]\[IN\]$' raw ||
	fail_ "mapping 1: $(grep '^1: ' raw)"
grep -q 'allocator:\[mmap\]' raw || fail_ "no allocator label"
grep -q '^Comment: memprof .*: peak memory$' raw || fail_ "no comment"
grep -q '^Duration: 35ms$' raw || fail_ "duration: $(grep Duration raw)"

# --leaks: inuse_* are the leaks; temporary allocations get their own names.
mp transform --leaks -o leaks.pb.gz pprof app.mprof
[ "$(sums leaks.pb.gz)" = "8 4198764 4 1573064" ] || fail_ "--leaks sums: $(sums leaks.pb.gz)"
[ "$(top leaks.pb.gz)" = "1573064B build_index" ] || fail_ "--leaks top: $(top leaks.pb.gz)"
mp transform --temporary-allocations -o temp.pb.gz pprof app.mprof
pprof -raw temp.pb.gz > raw
grep -q '^alloc_objects/count alloc_space/bytes temporary_objects/count temporary_space/bytes\[dflt\]$' raw ||
	fail_ "temporary sample types: $(grep count raw)"
[ "$(sums temp.pb.gz)" = "8 4198764 2 2097216" ] || fail_ "temporary sums: $(sums temp.pb.gz)"
mp transform --split-threads -o split.pb.gz pprof app.mprof
pprof -raw split.pb.gz > raw
grep -q 'thread:\[5001 (worker)\]' raw || fail_ "no thread label: $(grep thread raw)"
pprof -top -unit=B -tagfocus=thread=worker split.pb.gz | grep -q '^Showing nodes accounting for 3145728B, 74.92% of 4198700B total$' ||
	fail_ "-tagfocus on the worker thread"

# A real program: the same figures as memprof stats, build-ids, inlining.
"$MEMPROF" run -q -o allocs.mprof "$WORKLOADS/allocs" > /dev/null || framework_failure_ "run allocs"
mp transform -o allocs.pb.gz pprof allocs.mprof
expect_rc 0 "transform pprof allocs"
[ "$(sums allocs.pb.gz)" = "$(stat allocs.mprof total_num_allocations total_bytes_allocated peak_memory_blocks peak_memory_bytes)" ] ||
	fail_ "allocs: pprof's sums $(sums allocs.pb.gz) are not memprof stats' figures"
[ "$(top allocs.pb.gz | cut -d' ' -f1)" = "$(stat allocs.mprof peak_memory_bytes)B" ] ||
	fail_ "allocs peak total: $(top allocs.pb.gz)"
# The top function of everything allocated is memprof stats' top location by size.
[ "$(top allocs.pb.gz -sample_index=alloc_space | cut -d' ' -f2)" = "$(stat allocs.mprof top)" ] ||
	fail_ "allocs top function: pprof $(top allocs.pb.gz -sample_index=alloc_space), stats $(stat allocs.mprof top)"
mp transform --leaks -o allocs-leaks.pb.gz pprof allocs.mprof
[ "$(sums allocs-leaks.pb.gz | cut -d' ' -f3-)" = "$(stat allocs.mprof leaked_blocks leaked_bytes)" ] ||
	fail_ "allocs --leaks: $(sums allocs-leaks.pb.gz)"
pprof -raw allocs.pb.gz > raw
id=$(readelf -n "$WORKLOADS/allocs" | sed -n 's/.*Build ID: //p')
grep -q " $WORKLOADS/allocs $id " raw || fail_ "no mapping of allocs with build-id $id: $(grep allocs raw | tail -3)"
line=$(site churn "$WORKLOAD_SRC/allocs.c")
grep -qE " churn ([^ ]*/)?allocs\.c:$line s=0$" raw || fail_ "no churn at allocs.c:$line"
# pprof's source view finds the line: the file and line numbers are right. (A
# build out of the source tree records paths relative to the build tree.)
pprof -list=churn -sample_index=alloc_space -unit=B -source_path="$MEMPROF_BUILDDIR" allocs.pb.gz |
	grep -q "^ *32000B *32000B *$line:.*SITE:churn" || fail_ "pprof -list does not show churn's malloc line"

# Inlined frames are lines of one location (the innermost first).
"$MEMPROF" run -q -o cxx.mprof "$WORKLOADS/cxx" > /dev/null || framework_failure_ "run cxx"
mp transform -o cxx.pb.gz pprof cxx.mprof
pprof -raw cxx.pb.gz > raw
awk '/^Locations/ { l = 1; next } /^Mappings/ { l = 0 } l && /^ +[0-9]+:/ { n = 0 } l && !/^ +[0-9]+:/ { n++ } n >= 1 { found = 1 } END { exit !found }' raw ||
	{ sed -n '/^Locations/,/^Mappings/p' raw | head -30 >&2; fail_ "no location with an inlined frame in cxx"; }

# 4 threads: one label each, and the totals of memprof stats.
"$MEMPROF" run -q -o threads.mprof "$WORKLOADS/threads" > /dev/null || framework_failure_ "run threads"
mp transform --split-threads -o threads.pb.gz pprof threads.mprof
[ "$(sums threads.pb.gz)" = "$(stat threads.mprof total_num_allocations total_bytes_allocated peak_memory_blocks peak_memory_bytes)" ] ||
	fail_ "threads: pprof's sums $(sums threads.pb.gz) are not memprof stats' figures"
[ "$(pprof -raw threads.pb.gz | grep -o 'thread:\[[0-9]* (worker-[0-3])\]' | sort -u | wc -l)" = 4 ] ||
	fail_ "threads: not 4 worker labels"

# An empty capture gives an empty profile, which pprof reads.
"$MKCAPTURE" -f -o empty.mprof <<'CAP' || framework_failure_ "mkcapture"
HEADER format=1.0 pid=1 ppid=0 main_tid=1 mode=run start_time=2026-11-22T08:00:00.000000Z flags=symbolized exe="/bin/true" argv=["/bin/true"]
TRAILER end_time=2026-11-22T08:00:00.001000Z duration_us=1000 end=exit exit_code=0
CAP
mp transform -o empty.pb.gz pprof empty.mprof
[ "$(sums empty.pb.gz)" = "0 0 0 0" ] || fail_ "empty: $(sums empty.pb.gz)"
exit 0
