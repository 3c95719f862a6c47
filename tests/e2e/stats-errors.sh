#!/bin/bash
# stats on bad input: one-line errors and exit 1; a cut or damaged capture
# is reported up to the damage with a one-line warning; usage errors exit 2.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-reports.sh"

bad_inputs stats
bad_inputs stats --json
ls memprof-stats-* 2>/dev/null && fail_ "a JSON file was written for a bad input"

# Cut inside the trailer: every event is there, the exit status is not.
cut_capture cut.bin
mp stats cut.bin
expect_rc 0 "a truncated capture"
expect_err "memprof: warning: 'cut.bin' is truncated: the last record, at offset"
expect_one_line_err
expect_out "Exit status: unknown: the capture has no trailer (it was cut short)"
expect_out "	4.004 MiB in 7 blocks, at 10.000 ms"
expect_out "	1.500 MiB in 4 blocks"

# Damaged in the middle: the records before the damage.
"$MKCAPTURE" -r -f -o bad.bin "$TESTDATA/app.txt" || framework_failure_ "mkcapture"
# The THREAD record of "worker" (the last "worker" in the file) starts 6
# bytes before the name: tag, length, index, tid (2 bytes), name length.
off=$(grep -boa 'worker' bad.bin | tail -1 | cut -d: -f1)
[ -n "$off" ] || framework_failure_ "no thread record to damage"
printf '\000' | dd of=bad.bin bs=1 seek=$((off - 6)) conv=notrunc status=none
mp stats bad.bin
expect_rc 0 "a damaged capture"
expect_err "memprof: warning: 'bad.bin' is corrupt at offset $((off - 6)): unknown record type 0x00"
expect_one_line_err
grep -A1 '^Total allocations:' out | grep -qx '	5' || fail_ "not the 5 allocations before the damage"

# Usage errors name the option.
app_capture
mp stats -n 0 app.mprof
expect_rc 2 "-n 0"
expect_err "memprof stats: invalid value '0' for --num-largest: expected an integer from 1 to 1000000"
mp stats --num-largest=lots app.mprof
expect_rc 2 "-n lots"
expect_err "invalid value 'lots' for --num-largest"
mp stats
expect_rc 2 "no capture"
expect_err "memprof stats: missing argument"
mp stats app.mprof other.bin
expect_rc 1 "two captures, one missing"
expect_err "memprof: cannot open 'other.bin': No such file or directory"
mp stats --leaks app.mprof
expect_rc 2 "an option of other reporters"
expect_err "memprof stats: unknown option '--leaks'"
exit 0
