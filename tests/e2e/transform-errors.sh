#!/bin/bash
# transform on bad input, bad options and outputs it cannot write: one-line
# errors, exit 1 (failure) or 2 (usage), nothing left behind; a cut capture
# is exported up to the damage with a warning.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-reports.sh"

for f in pprof speedscope folded csv; do
	bad_inputs transform "$f"
	ls memprof-"$f"-* > /dev/null 2>&1 && fail_ "$f left an output for a bad input"
done

app_capture
mp transform xml app.mprof
expect_rc 2 "an unknown format"
expect_err "memprof transform: unknown format 'xml' (formats: pprof, speedscope, folded, csv)"
mp transform folded
expect_rc 2 "no capture"
mp transform
expect_rc 2 "no format"
mp transform folded app.mprof extra
expect_rc 1 "a second capture that is missing"
expect_err "memprof: cannot open 'extra': No such file or directory"
mp transform --leaks --temporary-allocations folded app.mprof
expect_rc 2 "--leaks with --temporary-allocations"
expect_err "memprof transform: options '--leaks' and '--temporary-allocations' cannot be combined"
mp transform --temporary-allocation-threshold x csv app.mprof
expect_rc 2 "a bad threshold"
expect_err "invalid value 'x' for --temporary-allocation-threshold"

# Never over a file without -f; the file stays as it was.
echo precious > memprof-csv-app.csv
mp transform csv app.mprof
expect_rc 1 "over an existing output"
expect_err "memprof: 'memprof-csv-app.csv' already exists (use -f to overwrite it)"
expect_one_line_err
[ "$(cat memprof-csv-app.csv)" = precious ] || fail_ "the existing output was changed"
mp transform -f csv app.mprof
expect_rc 0 "-f"
head -1 memprof-csv-app.csv | grep -q '^allocator,' || fail_ "-f did not overwrite"
mp transform -o no/such/dir/x.folded folded app.mprof
expect_rc 1 "-o in a missing directory"
expect_err "memprof: cannot create 'no/such/dir/x.folded': No such file or directory"
expect_one_line_err

# A full disk: the error names the file; what -f wrote over is not removed.
if [ -w /dev/full ]; then
	for f in pprof speedscope; do
		mp transform -f -o /dev/full "$f" app.mprof
		expect_rc 1 "$f to /dev/full"
		expect_err "memprof: cannot write '/dev/full': No space left on device"
		expect_one_line_err
		[ -c /dev/full ] || framework_failure_ "/dev/full is gone"
	done
fi
# A write error on standard output too.
if [ -w /dev/full ]; then
	keep -o /dev/full "$MEMPROF" transform -o - folded app.mprof
	expect_rc 1 "-o - to a full disk"
	expect_err "memprof: cannot write to standard output: No space left on device"
	expect_one_line_err
fi

# -o - writes to standard output, and says nothing else.
mp transform -o - folded app.mprof
expect_rc 0 "-o -"
expect_no_err "-o -"
[ "$(head -1 out)" = "main;build_index 1048576" ] || fail_ "-o -: $(head -1 out)"
expect_not_out "Wrote"

# A cut capture: exported up to the damage, with the reader's warning.
cut_capture cut.bin
mp transform -o cut.folded folded cut.bin
expect_rc 0 "a truncated capture"
expect_err "memprof: warning: 'cut.bin' is truncated: the last record, at offset"
expect_one_line_err
grep -q '^worker_main 2097152$' cut.folded || fail_ "the cut capture's export lacks worker_main"
exit 0
