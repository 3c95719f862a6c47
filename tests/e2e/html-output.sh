#!/bin/bash
# Where memprof flamegraph and memprof table write: memprof-<report>-<name>.html
# next to the capture (name: the file name without its last suffix and a
# leading "memprof-"), -o to choose, never over a file without -f.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-reports.sh"

app_capture
mkdir -p sub/dir
cp app.mprof out.bin
cp app.mprof sub/dir/memprof-prog.123.bin
cp app.mprof sub/noext
cp app.mprof memprof-x
cp app.mprof a.b.c.bin
# capture -> report, for both reporters.
while read -r cap want; do
	for r in flamegraph table; do
		rm -f -- "${want/REPORT/$r}"
		mp $r "$cap"
		expect_rc 0 "$r $cap"
		expect_no_err "$r $cap"
		[ "$(cat out)" = "Wrote ${want/REPORT/$r}" ] || fail_ "$r $cap: $(cat out)"
		[ -s "${want/REPORT/$r}" ] || fail_ "$r $cap: ${want/REPORT/$r} not written"
	done
done <<'LIST'
out.bin memprof-REPORT-out.html
app.mprof memprof-REPORT-app.html
sub/dir/memprof-prog.123.bin sub/dir/memprof-REPORT-prog.123.html
sub/noext sub/memprof-REPORT-noext.html
memprof-x memprof-REPORT-x.html
a.b.c.bin memprof-REPORT-a.b.c.html
LIST

# Never over an existing file without -f; the file stays as it was.
echo precious > memprof-flamegraph-out.html
mp flamegraph out.bin
expect_rc 1 "flamegraph over an existing report"
expect_err "memprof: 'memprof-flamegraph-out.html' already exists (use -f to overwrite it)"
expect_one_line_err
[ "$(cat memprof-flamegraph-out.html)" = precious ] || fail_ "the existing report was changed"
mp flamegraph -f out.bin
expect_rc 0 "flamegraph -f"
grep -q '<script type="application/json" id="memprof-data">' memprof-flamegraph-out.html ||
	fail_ "-f did not overwrite the report"

# -o: anywhere, under the same rule.
mp table -o sub/mine.html out.bin
expect_rc 0 "table -o"
[ "$(cat out)" = "Wrote sub/mine.html" ] || fail_ "-o: $(cat out)"
grep -q '"report":"table"' sub/mine.html || fail_ "-o: not a table report"
mp table --output sub/mine.html out.bin
expect_rc 1 "table -o over a file"
expect_err "memprof: 'sub/mine.html' already exists (use -f to overwrite it)"
mp table --output=sub/mine.html --force --leaks out.bin
expect_rc 0 "table -o -f"
grep -q '"mode":"leaks"' sub/mine.html || fail_ "-o -f did not overwrite"
mp flamegraph -o no/such/dir/x.html out.bin
expect_rc 1 "-o in a missing directory"
expect_err "memprof: cannot create 'no/such/dir/x.html': No such file or directory"
expect_one_line_err

# The same capture and options give the same bytes.
mp flamegraph -o again.html out.bin
cmp -s again.html memprof-flamegraph-out.html || fail_ "two reports of one capture differ"
exit 0
