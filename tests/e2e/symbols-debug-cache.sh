#!/bin/bash
# Debug files whose DWARF is compressed (as distributions ship them): the
# first run keeps a decompressed copy in MEMPROF_CACHE_DIR, by build-id, and
# later runs read it (lib/symbols/debugcache.h); the reports are the same.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-debuginfod.sh"

stripped_prog zprog plain.debug
mkdir -p "debug/.build-id/${BUILD_ID:0:2}"
z="debug/.build-id/${BUILD_ID:0:2}/${BUILD_ID:2}.debug"
objcopy --compress-debug-sections=zlib-gabi plain.debug "$z" ||
	framework_failure_ "objcopy --compress-debug-sections"
readelf -SW "$z" 2>/dev/null | grep -q ' \.debug_info .* C ' || framework_failure_ "'$z' is not compressed"
export MEMPROF_DEBUGINFO_PATH=$T/debug MEMPROF_CACHE_DIR=$T/cache
copy=$T/cache/debug/$BUILD_ID.debug

# The first run writes the copy: nothing in it compressed, the same build-id.
mp run -q -o first.bin ./zprog
expect_rc 0 "the first run"
expect_no_err "the first run"
[ -f "$copy" ] || fail_ "no copy in the cache"
readelf -SW "$copy" 2>/dev/null | grep -q ' \.debug_info ' || fail_ "the copy has no .debug_info"
readelf -SW "$copy" 2>/dev/null | grep -E ' \.debug_[a-z_]+ ' | grep -q ' C ' && fail_ "the copy is still compressed"
[ "$(readelf -n "$copy" 2>/dev/null | sed -n 's/.*Build ID: *//p')" = "$BUILD_ID" ] || fail_ "the copy's build-id"
expect_kept_named first.bin
inode=$(stat -c %i "$copy")

# The second reads it (not written again), and names the same frames.
mp run -q -o second.bin ./zprog
expect_rc 0 "the second run"
expect_no_err "the second run"
[ "$(stat -c %i "$copy")" = "$inode" ] || fail_ "the copy was written again"
expect_kept_named second.bin
mp transform -o first.csv csv first.bin && mp transform -o second.csv csv second.bin ||
	fail_ "transform"
cmp first.csv second.csv || fail_ "the two runs' reports differ"

# At report time too, for a capture without symbols, with the cache or without it.
mp run -q --no-symbols -o raw.bin "$PWD/zprog"
expect_kept_named raw.bin
MEMPROF_CACHE_DIR= expect_kept_named raw.bin

# A copy cut short is not used: it is written again.
truncate -s 1000 "$copy"
expect_kept_named raw.bin
[ "$(stat -c %s "$copy")" -gt 1000 ] || fail_ "the cut copy was not written again"

# Found by .gnu_debuglink (next to the program) rather than by build-id: the same.
stripped_prog linked linked.debug
objcopy --add-gnu-debuglink=linked.debug linked &&
	objcopy --compress-debug-sections=zlib-gabi linked.debug linked.z && mv linked.z linked.debug ||
	framework_failure_ "objcopy"
MEMPROF_DEBUGINFO_PATH= MEMPROF_CACHE_DIR=$T/cache2 mp run -q -o linked.bin ./linked
expect_rc 0 "a run with a debuglink"
expect_no_err "a run with a debuglink"
[ -f "$T/cache2/debug/$BUILD_ID.debug" ] || fail_ "no copy of the debuglink's file"
MEMPROF_DEBUGINFO_PATH= MEMPROF_CACHE_DIR=$T/cache2 expect_kept_named linked.bin

# No cache that can be written (a read-only home): the same names, no complaint.
rm -rf cache
MEMPROF_CACHE_DIR=/proc/memprof-no-cache mp run -q -o ro.bin ./zprog
expect_rc 0 "a run without a cache"
expect_no_err "a run without a cache"
expect_kept_named ro.bin
exit 0
