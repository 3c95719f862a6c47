#!/bin/bash
# summary on bad input and bad options: one-line errors, exit 1 or 2; a cut
# capture works with a warning.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-reports.sh"

bad_inputs summary
bad_inputs summary --temporary-allocations

cut_capture cut.bin
mp summary cut.bin
expect_rc 0 "a truncated capture"
expect_err "memprof: warning: 'cut.bin' is truncated: the last record, at offset"
expect_one_line_err
expect_out "│ worker_main at /src/app.c                      │      3.000 MiB │        74.92 % │  2.000 MiB │      49.95 % │                2 │"

app_capture
for bad in 0 6 x; do
	mp summary -s "$bad" app.mprof
	expect_rc 2 "-s $bad"
	expect_err "memprof summary: invalid value '$bad' for --sort-column: expected an integer from 1 to 5"
done
mp summary --max-rows 0 app.mprof
expect_rc 2 "-r 0"
expect_err "memprof summary: invalid value '0' for --max-rows: expected an integer from 1 to 4294967295"
mp summary --temporary-allocations --leaks app.mprof
expect_rc 2 "--temporary-allocations with --leaks"
expect_err "memprof summary: options '--temporary-allocations' and '--leaks' cannot be combined"
mp summary --temporary-allocations --temporary-allocation-threshold 4 app.mprof
expect_rc 2 "both temporary options"
expect_err "memprof summary: options '--temporary-allocations' and '--temporary-allocation-threshold' cannot be combined"
mp summary --temporary-allocation-threshold=many app.mprof
expect_rc 2 "a threshold that is not a number"
expect_err "invalid value 'many' for --temporary-allocation-threshold"
exit 0
