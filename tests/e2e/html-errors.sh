#!/bin/bash
# memprof flamegraph and memprof table on bad input: unreadable captures
# (one-line errors, exit 1, no report), a cut capture (a report, with a
# warning), missing templates (the path tried), usage errors (exit 2).
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-reports.sh"

for r in flamegraph table; do
	bad_inputs $r
	bad_inputs $r --leaks
done
ls memprof-*.html 2>/dev/null && fail_ "a report was written for a bad input"

# Cut inside the trailer: a report of everything, without an exit status.
cut_capture cut.bin
for r in flamegraph table; do
	mp $r cut.bin
	expect_rc 0 "$r: a truncated capture"
	expect_err "memprof: warning: 'cut.bin' is truncated: the last record, at offset"
	expect_one_line_err
	grep -qF '"exit":"unknown: the capture has no trailer (it was cut short)"' memprof-$r-cut.html ||
		fail_ "$r: the exit status of a cut capture"
	grep -qF '"peak_bytes":4198700,' memprof-$r-cut.html || fail_ "$r: the peak of a cut capture"
done

# Templates: $MEMPROF_DATADIR/templates, the path tried named when missing.
app_capture
mkdir empty
MEMPROF_DATADIR=$T/empty mp flamegraph app.mprof
expect_rc 1 "no templates"
expect_err "memprof: cannot read template '$T/empty/templates/flamegraph.html': No such file or directory"
expect_one_line_err
mkdir -p partial/templates
cp "$MEMPROF_SRCDIR"/share/templates/* partial/templates/
rm partial/templates/table.js
MEMPROF_DATADIR=$T/partial mp table app.mprof
expect_rc 1 "a missing include"
expect_err "memprof: cannot read include '$T/partial/templates/table.js': No such file or directory"
expect_one_line_err
echo '<!--memprof:oops-->' >> partial/templates/flamegraph.html
MEMPROF_DATADIR=$T/partial mp flamegraph app.mprof
expect_rc 1 "a bad directive"
expect_err "memprof: $T/partial/templates/flamegraph.html:$(wc -l < partial/templates/flamegraph.html): bad directive"
ls memprof-*-app.html 2>/dev/null && fail_ "a report was written without its templates"
MEMPROF_DATADIR=$MEMPROF_SRCDIR/share mp flamegraph app.mprof
expect_rc 0 "MEMPROF_DATADIR=share"

# Usage errors name what is wrong.
mp flamegraph --max-memory-records 1 app.mprof
expect_rc 2 "--max-memory-records 1"
expect_err "memprof flamegraph: invalid value '1' for --max-memory-records: expected an integer from 2 to 4294967295"
mp flamegraph --leaks --temporary-allocations app.mprof
expect_rc 2 "--leaks --temporary-allocations"
expect_err "memprof flamegraph: options '--leaks' and '--temporary-allocations' cannot be combined"
mp table --inverted app.mprof
expect_rc 2 "table --inverted"
expect_err "memprof table: unknown option '--inverted'"
mp table --temporal app.mprof
expect_rc 2 "table --temporal"
expect_err "memprof table: unknown option '--temporal'"
mp flamegraph -f app.mprof other.bin
expect_rc 1 "two captures, one not readable"
expect_err "other.bin"
mp table
expect_rc 2 "no capture"
expect_err "memprof table: missing argument"
mp flamegraph -o
expect_rc 2 "-o without a file"
expect_err "memprof flamegraph: option '-o' needs an argument"
exit 0
