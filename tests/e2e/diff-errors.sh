#!/bin/bash
# diff on bad input and bad options: one-line errors naming the capture, exit
# 1 or 2; nothing written for --json then.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-reports.sh"

app_capture
# A bad capture as BASE or as NEW, with the other one good.
bad_inputs diff app.mprof
mkdir -p b
for bad in nope.bin b; do
	mp diff "$bad" app.mprof
	expect_rc 1 "diff with a bad base"
	expect_one_line_err
	expect_err "'$bad'"
done
mp diff --json nope.bin app.mprof
expect_rc 1 "diff --json with a bad base"
[ ! -e memprof-diff-app.json ] || fail_ "--json wrote a file for a bad base"

mp diff app.mprof
expect_rc 2 "one capture"
expect_err "usage: memprof diff"
mp diff a b c
expect_rc 2 "three captures"
mp diff -o x.json app.mprof app.mprof
expect_rc 2 "-o without --json"
expect_err "memprof diff: option '--output' needs --json"
mp diff --json -r 3 app.mprof app.mprof
expect_rc 2 "-r with --json"
expect_err "memprof diff: option '--max-rows' is for the table, not --json"
mp diff -r 0 app.mprof app.mprof
expect_rc 2 "-r 0"
expect_err "memprof diff: invalid value '0' for --max-rows: expected an integer from 1 to 4294967295"
mp diff --leaks app.mprof app.mprof
expect_rc 2 "a view option"

echo precious > memprof-diff-app.json
mp diff --json app.mprof app.mprof
expect_rc 1 "--json over a file"
expect_err "memprof: 'memprof-diff-app.json' already exists (use -f to overwrite it)"
expect_one_line_err
[ "$(cat memprof-diff-app.json)" = precious ] || fail_ "the existing file was changed"
mp diff --json -f app.mprof app.mprof
expect_rc 0 "--json -f"

# --no-mmap leaves the mapping out of both.
sed 's/size=1048576 stack=7/size=2097152 stack=7/' "$TESTDATA/app.txt" > bigger-map.txt
mkcap bigger.mprof bigger-map.txt
mp diff app.mprof bigger.mprof
expect_out "libparse.so.1+0x2000 at /usr/lib/libparse.so.1"
mp diff --no-mmap app.mprof bigger.mprof
expect_out "No allocation site changed its peak, leaked memory or allocations."
exit 0
