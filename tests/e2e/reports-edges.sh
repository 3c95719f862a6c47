#!/bin/bash
# Every reporter at the edges of what a capture may hold: no events at all
# (tests/data/noevents.txt) and an allocation of 2^63 bytes (tests/data/huge.txt).
# The sanitized build (./configure --enable-sanitizers) found undefined behaviour
# in both: qsort() and memcpy() of NULL with no elements, INT64_MIN negated when
# the 2^63 bytes were freed, a signed overflow in the temporal flame graph; and
# the HTML data and pprof wrote sizes of 2^63 bytes and more as negative numbers.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-reports.sh"

mkcap noevents.mprof "$TESTDATA/noevents.txt"
mkcap huge.mprof "$TESTDATA/huge.txt"
app_capture

for cap in noevents.mprof huge.mprof; do
	for args in "stats $cap" "stats --json -o - $cap" "stats --no-mmap $cap" "summary $cap" \
		"summary --leaks -s 5 $cap" "tree $cap" "tree --temporary-allocations $cap" \
		"diff $cap app.mprof" "diff app.mprof $cap" "diff --json -o - $cap $cap"; do
		# shellcheck disable=SC2086
		mp $args
		expect_rc 0 "$args"
		expect_no_err "$args"
	done
	for args in "flamegraph" "flamegraph --temporal" "flamegraph --leaks --temporal" \
		"flamegraph --inverted --split-threads" "flamegraph --temporary-allocations" \
		"flamegraph --diff app.mprof" "table" "table --leaks --split-threads"; do
		# shellcheck disable=SC2086
		mp $args -f -o page.html $cap
		expect_rc 0 "$args ($cap)"
		expect_no_err "$args ($cap)"
		# Sizes are unsigned: never a negative number in the report data.
		! grep -q -- '-9223372036854775' page.html || fail_ "$args ($cap): a negative size in the page"
	done
	for format in pprof speedscope folded csv; do
		mp transform -f -o "out.$format" $format $cap
		expect_rc 0 "transform $format ($cap)"
		expect_no_err "transform $format ($cap)"
	done
done

# No events: zeros, said as such.
mp stats noevents.mprof
expect_out "$(printf 'Total allocations:\n\t0')"
grep -A1 '^Peak memory usage:' out | grep -qx "$(printf '\t0 B in 0 blocks, before the first sample')" ||
	fail_ "stats: no peak of 0 B"
grep -A1 '^Histogram of allocation size:' out | grep -qx "$(printf '\t(no allocations)')" ||
	fail_ "stats: a histogram without allocations"
mp summary noevents.mprof
expect_out "Peak memory: 0 B in 0 allocations, before the first sample"

# 2^63 + 16 B at the peak, 2^62 - 4096 + 16 B leaked, 2^63 + 2^62 + 16 B allocated.
mp stats huge.mprof
grep -A1 '^Total memory allocated:' out | grep -qx "$(printf '\t12.000 EiB')" || fail_ "stats: total"
grep -A1 '^Peak memory usage:' out | grep -qx "$(printf '\t8.000 EiB in 2 blocks, at 5.000 ms')" ||
	fail_ "stats: peak"
grep -A1 '^Leaked memory' out | grep -qx "$(printf '\t4.000 EiB in 2 blocks')" || fail_ "stats: leaks"
mp stats --json -o - huge.mprof
expect_out '"total_bytes_allocated": 13835058055282163728,'
expect_out '"peak_memory_bytes": 9223372036854775824,'
expect_out '"leaked_bytes": 4611686018427383824,'
mp summary huge.mprof
expect_out "│ reserve at /src/huge.c │      8.000 EiB │       100.00 % │  8.000 EiB │     100.00 % │                1 │"
# pprof carries signed numbers: 2^63 bytes saturate at 2^63 - 1 instead of turning negative.
if command -v go > /dev/null; then
	mp transform -f -o huge.pb.gz pprof huge.mprof
	expect_rc 0 "transform pprof"
	run go tool pprof -raw huge.pb.gz
	expect_rc 0 "go tool pprof -raw"
	expect_out "          1 9223372036854775807          1 9223372036854775807: 1 2 "
	expect_not_out "-9223372036854775"
fi
exit 0
