#!/bin/bash
# memprof run --aggregate: a capture of totals per stack, with no events, from which every
# reporter that can answer gives exactly what it gives from the full capture of the same
# deterministic program; the reports that need events say so in one line.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"

# The figures of a run that differ from run to run (pid, tids, times) left out.
stats_figures() {
	"$MEMPROF" stats --json -o - "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
for k in ("peak_time_us",): d.pop(k)
for k in ("start_time", "end_time", "duration_us", "pid", "main_thread_id", "command_line", "argv"):
    d["metadata"].pop(k, None)
for t in d["threads"]: t.pop("tid")
json.dump(d, sys.stdout, indent=1, sort_keys=True)'
}
compare() { # compare FULL AGG NAME
	local full=$1 agg=$2 name=$3 v
	stats_figures "$full" > full.json || fail_ "stats of $name's full capture"
	stats_figures "$agg" > agg.json || fail_ "stats of $name's aggregated capture"
	diff -u full.json agg.json >&2 || fail_ "$name: stats differ between the full and the aggregated capture"
	for v in "" --leaks; do
		"$MEMPROF" transform folded $v -o full.folded "$full" > /dev/null &&
		"$MEMPROF" transform folded $v -o agg.folded "$agg" > /dev/null || fail_ "$name: transform folded $v"
		[ -s full.folded ] || [ "$v" = --leaks ] || fail_ "$name: nothing at the peak"
		diff -u full.folded agg.folded >&2 || fail_ "$name: the stacks ${v:-at the peak} differ"
		rm -f full.folded agg.folded
		# The tree and the summary; their first line has the peak's time.
		"$MEMPROF" tree $v "$full" | tail -n +2 > full.tree && "$MEMPROF" tree $v "$agg" | tail -n +2 > agg.tree ||
			fail_ "$name: tree $v"
		diff -u full.tree agg.tree >&2 || fail_ "$name: tree $v differs"
		"$MEMPROF" summary $v "$full" | tail -n +2 > full.sum && "$MEMPROF" summary $v "$agg" | tail -n +2 > agg.sum ||
			fail_ "$name: summary $v"
		diff -u full.sum agg.sum >&2 || fail_ "$name: summary $v differs"
	done
	"$MEMPROF" transform csv --split-threads -o full.csv "$full" > /dev/null &&
	"$MEMPROF" transform csv --split-threads -o agg.csv "$agg" > /dev/null || fail_ "$name: csv --split-threads"
	# (thread ids differ from run to run: the rest must not)
	diff -u <(sed -E 's/,[0-9]+,[0-9]+ \(/,(/' full.csv) <(sed -E 's/,[0-9]+,[0-9]+ \(/,(/' agg.csv) >&2 ||
		fail_ "$name: the peak by thread differs"
	rm -f full.csv agg.csv
}

for w in "allocs" "oracle 20000" "deep 50" "cxx" "phases"; do
	name=${w%% *}
	# shellcheck disable=SC2086
	mp run -q -o "full.$name.bin" "$WORKLOADS"/$w
	expect_rc 0 "$name, full"
	# shellcheck disable=SC2086
	mp run -q --aggregate -o "agg.$name.bin" "$WORKLOADS"/$w
	expect_rc 0 "$name, aggregated"
	"$MEMPROF" parse "agg.$name.bin" > p || fail_ "parse the aggregated capture of $name"
	grep -q '^HEADER .*flags=[a-z,]*aggregated' p || fail_ "$name: the header does not say aggregated"
	expect_count 0 '^(ALLOC|FREE|TICK|SWITCH) ' p
	[ "$(count '^AGG_SLOT ' p)" -gt 0 ] || fail_ "$name: no AGG_SLOT records"
	expect_count 1 '^AGG_TOTALS ' p
	grep -q '^TRAILER .*end=exit exit_code=0 ' p || fail_ "$name: trailer: $(grep ^TRAILER p)"
	compare "full.$name.bin" "agg.$name.bin" "$name"
done

# The HTML reports, the diff and the exports read it.
a=agg.allocs.bin
for r in flamegraph table; do
	mp $r -o $r.html "$a"
	expect_rc 0 "$r of an aggregated capture"
	grep -q make_kept $r.html || fail_ "$r: no make_kept in the page"
done
mp flamegraph --leaks -o leaks.html "$a"
expect_rc 0 "flamegraph --leaks"
mp diff full.allocs.bin "$a"
expect_rc 0 "diff full aggregated"
expect_out "Peak memory: 22.786 KiB in 12 allocations -> 22.786 KiB in 12 allocations (0 B, 0)"
mp transform pprof -o a.pb "$a"
expect_rc 0 "transform pprof"

# What it cannot answer: one line each, exit 1, no report.
for args in "tree --temporary-allocations" "summary --temporary-allocation-threshold 3" \
	"flamegraph --temporal -o t.html" "transform --temporary-allocations folded -o t.txt" \
	"stats --no-mmap"; do
	# shellcheck disable=SC2086
	mp $args "$a"
	expect_rc 1 "$args of an aggregated capture"
	expect_one_line_err "$args"
	expect_err "'$a' is an aggregated capture (--aggregate), with totals per stack and no events"
	[ ! -e t.html ] && [ ! -e t.txt ] || fail_ "$args wrote a report"
done
# Checked before the program runs under --reporter.
mp run --aggregate -o r.bin --reporter flamegraph --reporter-arg --temporal "$WORKLOADS/allocs"
expect_rc 2 "--aggregate with a temporal report"
expect_err "--reporter-arg --temporal needs every event"
[ ! -e r.bin ] || fail_ "the program ran"
# Known by the reporter's own parse, as it would read them: abbreviated, or as FILE of -o.
mp run --aggregate -o r.bin --reporter table --reporter-arg --no-mm "$WORKLOADS/allocs"
expect_rc 2 "--aggregate with an abbreviated --no-mmap"
expect_err "--reporter-arg --no-mmap needs every event"
[ ! -e r.bin ] || fail_ "the program ran"
mp run -q --aggregate -o r.bin --reporter table --reporter-arg -o --reporter-arg --no-mmap \
	"$WORKLOADS/allocs"
expect_rc 0 "--aggregate --reporter table -o --no-mmap"
[ -s ./--no-mmap ] || fail_ "no report in './--no-mmap'"
rm -f r.bin
mp run -q --aggregate -o r.bin --reporter flamegraph --reporter-arg --leaks "$WORKLOADS/allocs"
expect_rc 0 "--aggregate --reporter flamegraph --leaks"
[ -s memprof-flamegraph-r.html ] || fail_ "no report"

# Followed children are aggregated too.
mp run -q --aggregate --follow-fork -o f.bin "$WORKLOADS/forks"
expect_rc 0 "--aggregate --follow-fork"
for f in f.bin*; do
	"$MEMPROF" parse "$f" | grep -q '^HEADER .*aggregated' || fail_ "'$f' is not aggregated"
	"$MEMPROF" stats "$f" > /dev/null || fail_ "stats '$f'"
done
[ "$(ls f.bin* | wc -l)" -gt 1 ] || fail_ "no child capture"
exit 0
