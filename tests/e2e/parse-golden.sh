#!/bin/bash
# memprof parse on the golden captures; the writer reproduces them.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"

# basic-v3.mprof and raw-v3.mprof are format 3.0, basic-v2.mprof and
# raw-v2.mprof format 2.0, basic-v1.mprof format 1.0 (addresses, one zstd
# frame per block): still read.
for f in basic raw basic-v3 raw-v3 basic-v2 raw-v2 basic-v1; do
	mp parse "$TESTDATA/$f.mprof"
	expect_rc 0 "parse $f.mprof"
	expect_no_err "parse $f.mprof"
	match_diff "$TESTDATA/$f.expected" out
done
# The uncompressed golden file pins the encoder byte for byte.
"$MKCAPTURE" -r -s -o raw.mprof "$TESTDATA/basic.txt" || fail_ "mkcapture"
cmp raw.mprof "$TESTDATA/raw.mprof" || fail_ "the writer no longer produces tests/data/raw.mprof"
# ...and, asked for format 3.0, the 3.0 golden file.
"$MKCAPTURE" -3 -r -s -o raw-v3.mprof "$TESTDATA/basic.txt" || fail_ "mkcapture -3"
cmp raw-v3.mprof "$TESTDATA/raw-v3.mprof" || fail_ "mkcapture -3 no longer produces tests/data/raw-v3.mprof"
# Standard input.
mp parse - < "$TESTDATA/basic.mprof"
expect_rc 0 "parse -"
match_diff "$TESTDATA/basic.expected" out
# The text form is complete: compiling it back gives the same records.
"$MKCAPTURE" -o again.mprof out || fail_ "mkcapture of parse output"
mp parse again.mprof
expect_rc 0 "parse of the round trip"
match_diff "$TESTDATA/basic.expected" out
exit 0
