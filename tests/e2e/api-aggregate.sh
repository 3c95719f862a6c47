#!/bin/bash
# memprof_start with aggregate when the tracker writes the capture itself (direct mode, no
# collector): its fold (lib/format/fold.h) gives the aggregated capture memprof run
# --aggregate's collector gives for the same program. tests/workloads/inproc.c's aggregate
# mode (a fixed mix of heap blocks, a thread, a mapping, a snapshot) runs preloaded and
# paused with a path of its own (direct), and under memprof run --paused without one (the
# collector's): the stats, the stacks at the peak and the leaks of the two captures, and of
# their snapshots, are the same; loaded with dlopen, the aggregated capture gives what the
# full capture of the same program gives, with the exact numbers of the mix; killed before
# its stop, it lacks the totals written at the end, and the reports say so.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"

# The figures that differ from run to run (pid, tids, times) or between a collector's
# capture and the tracker's own (its format, symbols resolved at report time) left out.
stats_figures() {
	"$MEMPROF" stats --json -o - "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
d.pop("peak_time_us")
for k in ("start_time", "end_time", "duration_us", "pid", "main_thread_id", "command_line", "argv",
          "capture_format", "symbolized"):
    d["metadata"].pop(k, None)
for t in d["threads"]: t.pop("tid")
json.dump(d, sys.stdout, indent=1, sort_keys=True)'
}
compare() { # compare A B WHAT
	local v
	stats_figures "$1" > a.json || fail_ "$3: stats of $1"
	stats_figures "$2" > b.json || fail_ "$3: stats of $2"
	diff -u a.json b.json >&2 || fail_ "$3: stats differ between $1 and $2"
	for v in "" --leaks; do
		"$MEMPROF" transform folded $v -f -o a.folded "$1" > /dev/null &&
		"$MEMPROF" transform folded $v -f -o b.folded "$2" > /dev/null || fail_ "$3: transform folded $v"
		[ -s a.folded ] || fail_ "$3: nothing ${v:-at the peak} in $1"
		diff -u a.folded b.folded >&2 || fail_ "$3: the stacks ${v:-at the peak} differ between $1 and $2"
	done
}
aggregated() { # aggregated FILE: no events, no ticks, the analysis's records, a trailer
	"$MEMPROF" parse "$1" > p || fail_ "parse $1"
	grep -q '^HEADER .*flags=[a-z,]*aggregated' p || fail_ "$1: the header does not say aggregated: $(grep ^HEADER p)"
	expect_count 0 '^(ALLOC|FREE|TICK|SWITCH) ' p
	[ "$(count '^AGG_SLOT ' p)" -gt 0 ] || fail_ "$1: no AGG_SLOT records"
	expect_count 1 '^AGG_TOTALS ' p
	expect_count 1 '^TRAILER ' p
}

# Preloaded and paused: the same hooks whoever writes the capture.
env LD_PRELOAD="$TRACKER_LIB" MEMPROF_PAUSED=1 MEMPROF_OUTPUT="$T/env.bin" \
	"$WORKLOADS/inproc" aggregate unused "$T/d.bin" "$T/d.snap" > out 2> err ||
	fail_ "direct: the program failed: $(cat out err)"
[ ! -s out ] && [ ! -s err ] || fail_ "direct: the program said: $(cat out err)"
[ ! -e env.bin ] || fail_ "MEMPROF_OUTPUT's capture was written"
mp run -q --paused -o c.bin "$WORKLOADS/inproc" aggregate unused - "$T/c.snap"
expect_rc 0 "under memprof run --paused: $(cat out err)"
for f in d.bin:detach d.snap:snapshot c.bin:detach c.snap:snapshot; do
	aggregated "${f%:*}"
	[ "$(field end "$(grep ^TRAILER p)")" = "${f#*:}" ] || fail_ "${f%:*}'s trailer: $(grep ^TRAILER p)"
done
"$MEMPROF" parse d.bin > p
[ "$(field mode "$(grep ^HEADER p)")" = preload ] || fail_ "d.bin is not the tracker's own: $(grep ^HEADER p)"
compare c.bin d.bin "the collector's and the tracker's aggregated captures"
compare c.snap d.snap "their snapshots"

# Loaded with dlopen: the aggregated capture and the full one of the same mix.
env -u LD_PRELOAD "$WORKLOADS/inproc" aggregate "$TRACKER_LIB" "$T/g.bin" - > out 2> err ||
	fail_ "dlopen, aggregated: $(cat out err)"
env -u LD_PRELOAD INPROC_FULL=1 "$WORKLOADS/inproc" aggregate "$TRACKER_LIB" "$T/f.bin" - > out 2> err ||
	fail_ "dlopen, full: $(cat out err)"
aggregated g.bin
"$MEMPROF" parse f.bin > p || fail_ "parse f.bin"
! grep -q '^HEADER .*aggregated' p || fail_ "INPROC_FULL gave an aggregated capture"
compare f.bin g.bin "the full and the aggregated captures"

# The mix's numbers: 200 + 10 + 1 + 30 + 1 + 1 allocations; at the peak every small block
# not freed (19488 bytes), the callocs, the realloc'd block, the worker's 20 x 777 and 1 MiB.
"$MEMPROF" stats --json -o - g.bin | python3 -c '
import json, sys
d = json.load(sys.stdin)
got = (d["total_num_allocations"], d["peak_memory_bytes"])
assert d["total_num_allocations"] == 243, got
assert d["peak_memory_bytes"] == 19488 + 20000 + 9000 + 20 * 777 + (1 << 20), got' ||
	fail_ "g.bin's figures: $(stats_figures g.bin | head -c 2000)"
"$MEMPROF" transform folded -f -o g.folded g.bin > /dev/null || fail_ "transform folded g.bin"
peak=$(sed 's/.*;//' g.folded | sort | tr '\n' ' ')
[ "$peak" = "agg_grow 9000 agg_peak 1048576 agg_small 19488 agg_worker 15540 agg_zeroed 20000 " ] ||
	fail_ "g.bin's peak: $peak"

# Killed before the stop: the totals, written at the end, are not there, and the reports say so.
env -u LD_PRELOAD INPROC_KILL=1 "$WORKLOADS/inproc" aggregate "$TRACKER_LIB" "$T/k.bin" - > out 2> err
[ $? = 137 ] || fail_ "the killed program's status: $(cat out err)"
mp stats k.bin
expect_rc 0 "stats of a cut aggregated capture"
expect_one_line_err
expect_err "memprof: warning: 'k.bin' is an aggregated capture cut short before its end, where its totals per stack are written: it shows no allocations"
exit 0
