#!/bin/bash
# tree on bad input and bad options: one-line errors, exit 1 or 2; a cut
# capture works with a warning.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-reports.sh"

bad_inputs tree
bad_inputs tree --leaks

cut_capture cut.bin
mp tree cut.bin
expect_rc 0 "a truncated capture"
expect_err "memprof: warning: 'cut.bin' is truncated: the last record, at offset"
expect_one_line_err
expect_out "├── 3.000 MiB (74.92 %) worker_main  /src/app.c:70"

app_capture
mp tree -b 0 app.mprof
expect_rc 2 "-b 0"
expect_err "memprof tree: invalid value '0' for --biggest-allocs: expected an integer from 1 to 4294967295"
mp tree --biggest-allocs ten app.mprof
expect_rc 2 "-b ten"
expect_err "invalid value 'ten' for --biggest-allocs"
mp tree --leaks --temporary-allocations app.mprof
expect_rc 2 "--leaks with --temporary-allocations"
expect_err "memprof tree: options '--leaks' and '--temporary-allocations' cannot be combined"
mp tree --temporary-allocation-threshold 2 --leaks app.mprof
expect_rc 2 "a threshold with --leaks"
expect_err "memprof tree: options '--temporary-allocation-threshold' and '--leaks' cannot be combined"
mp tree --temporary-allocation-threshold -1 app.mprof
expect_rc 2 "a negative threshold"
expect_err "memprof tree: invalid value '-1' for --temporary-allocation-threshold"
mp tree -b
expect_rc 2 "-b without a value"
expect_err "memprof tree: option '-b' needs an argument"
exit 0
