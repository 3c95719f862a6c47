#!/bin/bash
# Bad input to parse: one-line errors, exit 1; truncation reads a prefix with a warning.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"

mp parse nope.bin
expect_rc 1 "a missing file"
expect_err "memprof: cannot open 'nope.bin': No such file or directory"
expect_one_line_err

mkdir adir
mp parse adir
expect_rc 1 "a directory"
expect_err "memprof: 'adir' is a directory, not a capture file"
expect_one_line_err

: > empty.bin
mp parse empty.bin
expect_rc 1 "an empty file"
expect_err "memprof: 'empty.bin' is empty, not a memprof capture"
expect_one_line_err

head -c 3000 /dev/urandom | tr -d '\211' > garbage.bin
mp parse garbage.bin
expect_rc 1 "garbage"
expect_err "memprof: 'garbage.bin' is not a memprof capture"
expect_one_line_err

cp "$TESTDATA/raw.mprof" future.bin
printf '\005\007' | dd of=future.bin bs=1 seek=8 conv=notrunc status=none
mp parse future.bin
expect_rc 1 "a future major version"
expect_err "capture format 5.7 is not readable by this memprof, which reads formats 1.x to 4.x; upgrade memprof"
expect_one_line_err

head -c 6 "$TESTDATA/raw.mprof" > short.bin
mp parse short.bin
expect_rc 1 "a cut preamble"
expect_err "'short.bin' is truncated inside its header"
expect_one_line_err

# Truncated after the header: the records before the cut, then a warning.
size=$(stat -c %s "$TESTDATA/raw.mprof")
head -c $((size - 7)) "$TESTDATA/raw.mprof" > cut.bin
mp parse cut.bin
expect_rc 0 "a truncated capture"
expect_err "memprof: warning: 'cut.bin' is truncated: the last record, at offset"
expect_one_line_err
n=$(wc -l < out)
[ "$n" -gt 40 ] || fail_ "only $n records before the cut"
head -n "$n" "$TESTDATA/raw.expected" | cmp -s - out || fail_ "the records before the cut differ"
grep -q '^TRAILER' out && fail_ "the trailer survived the cut"

# Corrupt in the middle: the records before, then the error, exit 1.
off=$(grep -c '' "$TESTDATA/raw.expected")
cp "$TESTDATA/raw.mprof" corrupt.bin
printf '\005' | dd of=corrupt.bin bs=1 seek=$((size - 200)) conv=notrunc status=none
mp parse corrupt.bin
expect_rc 1 "a corrupt capture"
expect_err "memprof: 'corrupt.bin' is corrupt at offset"
expect_one_line_err
[ "$(wc -l < out)" -lt "$off" ] || fail_ "corruption went unnoticed"
[ "$(wc -l < out)" -gt 10 ] || fail_ "the records before the corruption were not printed"
exit 0
