#!/bin/bash
# A capture read from standard input, as '-' or /dev/stdin, from a pipe: parse --stacks reads it
# (twice) as it reads the file, and the reports that name their output after the capture
# write it here as memprof-REPORT-stdin..., never into /dev.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"

cap=$TESTDATA/basic.mprof
"$MEMPROF" parse --stacks "$cap" > want || fail_ "parse --stacks of the file"
for input in - /dev/stdin; do
	mp parse --stacks "$input" < <(cat "$cap")
	expect_rc 0 "parse --stacks $input from a pipe"
	expect_no_err "parse --stacks $input"
	match_diff want out
	mp parse --stacks "$input" < "$cap"
	expect_rc 0 "parse --stacks $input from the file"
	match_diff want out
done

before=$(ls /dev | grep -c '^memprof-')
for input in - /dev/stdin; do
	rm -f memprof-*
	mp flamegraph "$input" < <(cat "$cap")
	expect_rc 0 "flamegraph $input"
	[ "$(cat out)" = "Wrote memprof-flamegraph-stdin.html" ] || fail_ "flamegraph $input: $(cat out)"
	mp table "$input" < <(cat "$cap")
	expect_rc 0 "table $input"
	[ "$(cat out)" = "Wrote memprof-table-stdin.html" ] || fail_ "table $input: $(cat out)"
	mp stats --json "$input" < <(cat "$cap")
	expect_rc 0 "stats $input"
	[ "$(cat out)" = "Wrote memprof-stats-stdin.json" ] || fail_ "stats $input: $(cat out)"
	mp transform folded "$input" < <(cat "$cap")
	expect_rc 0 "transform $input"
	[ "$(cat out)" = "Wrote memprof-folded-stdin.folded" ] || fail_ "transform $input: $(cat out)"
	[ -s memprof-flamegraph-stdin.html ] && [ -s memprof-table-stdin.html ] && [ -s memprof-stats-stdin.json ] &&
		[ -s memprof-folded-stdin.folded ] || fail_ "$input: the reports are not here: $(ls)"
done
after=$(ls /dev | grep -c '^memprof-')
rm -f /dev/memprof-*-stdin.* 2> /dev/null
[ "$after" -eq "$before" ] || fail_ "reports were written into /dev"
exit 0
