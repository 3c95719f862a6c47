#!/bin/bash
# The tracker preloaded by hand with MEMPROF_OUTPUT writes a capture itself.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"

run env MEMPROF_OUTPUT="$T/cap.%p.bin" LD_PRELOAD="$TRACKER_LIB" "$WORKLOADS/allocs"
expect_rc 0 "preloaded allocs"
expect_out "allocs done"
expect_no_err "preloaded allocs"
f=$(ls cap.*.bin) || fail_ "no cap.<pid>.bin"
"$MEMPROF" parse --stacks "$f" > p || fail_ "parse"
h=$(grep ^HEADER p)
[ "$f" = "cap.$(field pid "$h").bin" ] || fail_ "%p was not the pid: $f"
[ "$(field mode "$h")" = preload ] || fail_ "mode: $h"
grep -q 'flags=raw' <<<"$h" || fail_ "flags: $h"
expect_count 1023 '^ALLOC ' p
expect_count 1013 '^FREE ' p
expect_count 0 '^SYMBOL ' p
t=$(grep ^TRAILER p)
[ "$(field exit_code "$t")" = 0 ] && [ "$(field allocs "$t")" = 1023 ] || fail_ "trailer: $t"

# An existing file is not overwritten: one line on stderr, the program runs untracked.
run env MEMPROF_OUTPUT="$T/$f" LD_PRELOAD="$TRACKER_LIB" "$WORKLOADS/io" 3 < /dev/null
expect_rc 3 "preload onto an existing file"
grep -q "memprof: cannot create the capture '$T/$f': it exists (set MEMPROF_FORCE=1 to overwrite); the program runs untracked" err ||
	fail_ "message: $(cat err)"
cmp -s "$f" <(cat "$f") && "$MEMPROF" parse "$f" | grep -q 'exe=".*allocs"' || fail_ "the old capture was changed"
run env MEMPROF_FORCE=1 MEMPROF_OUTPUT="$T/$f" LD_PRELOAD="$TRACKER_LIB" "$WORKLOADS/io" 3 < /dev/null
expect_rc 3 "MEMPROF_FORCE"
"$MEMPROF" parse "$f" | grep -q 'exe=".*io"' || fail_ "MEMPROF_FORCE did not overwrite"
[ "$(field exit_code "$("$MEMPROF" parse "$f" | grep ^TRAILER)")" = 3 ] || fail_ "exit code 3 not in the trailer"

# Children are not tracked unless MEMPROF_FOLLOW_FORK is set.
rm -f cap.*
run env MEMPROF_OUTPUT="$T/cap.%p.bin" LD_PRELOAD="$TRACKER_LIB" "$WORKLOADS/forks"
[ "$(ls cap.* | wc -l)" -eq 1 ] || fail_ "children tracked without MEMPROF_FOLLOW_FORK: $(ls cap.*)"
rm -f cap.*
run env MEMPROF_FOLLOW_FORK=1 MEMPROF_OUTPUT="$T/cap.%p.bin" LD_PRELOAD="$TRACKER_LIB" "$WORKLOADS/forks"
[ "$(ls cap.* | wc -l)" -eq 2 ] || fail_ "expected the parent's and the child's capture: $(ls cap.*)"
# Without the variable the preloaded tracker does nothing at all.
run env LD_PRELOAD="$TRACKER_LIB" "$WORKLOADS/allocs"
expect_rc 0 "preloaded without MEMPROF_OUTPUT"
expect_no_err "preloaded without MEMPROF_OUTPUT"
exit 0
