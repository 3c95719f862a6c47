#!/bin/bash
# Debug files in directories laid out like /usr/lib/debug (where Debian's
# -dbgsym packages put them), named by MEMPROF_DEBUGINFO_PATH: found by
# build-id (DIR/.build-id/xx/yyyy.debug) and by .gnu_debuglink
# (DIR/<the program's directory>/<its debuglink>), at collection time and
# at report time, for a program that is there and for one that is gone.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-debuginfod.sh"

# By build-id: the directory holds .build-id/xx/yyyy.debug.
stripped_prog byid tmp.debug
mkdir -p "debug/.build-id/${BUILD_ID:0:2}"
mv tmp.debug "debug/.build-id/${BUILD_ID:0:2}/${BUILD_ID:2}.debug"
mp run -o plain.bin ./byid
expect_err "no debug information for 1 module (byid)"
MEMPROF_DEBUGINFO_PATH=$T/nowhere:$T/debug mp run -o byid.bin ./byid
expect_rc 0 "run with a debug directory"
grep -q "debug information" err && fail_ "a note about debug information"
expect_kept_named byid.bin
mp run -q --no-symbols -o raw.bin "$PWD/byid"
MEMPROF_DEBUGINFO_PATH=$T/debug expect_kept_named raw.bin
mv byid byid.kept
MEMPROF_DEBUGINFO_PATH=$T/debug expect_kept_named raw.bin

# By .gnu_debuglink: the directory mirrors the program's path.
stripped_prog linked linked.debug
objcopy --add-gnu-debuglink=linked.debug linked || framework_failure_ "objcopy --add-gnu-debuglink"
mkdir -p "debug2$T"
mv linked.debug "debug2$T/"
MEMPROF_DEBUGINFO_PATH=$T/debug2 mp run -q -o linked.bin ./linked
expect_rc 0 "run with a debuglink"
expect_no_err "run with a debuglink"
expect_kept_named linked.bin
exit 0
