#!/bin/bash
# exec: the new program is not tracked unless followed; the user's own LD_PRELOAD stays.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
userlib=$WORKLOADS/.libs/libdlwork.so

# Without --follow-fork: the capture ends at the exec, with a note; env sees a clean environment.
run env LD_PRELOAD="$userlib" "$MEMPROF" run -o e.bin "$WORKLOADS/execs" env
expect_rc 0 "run execs env"
grep -qx "LD_PRELOAD=$userlib" out || fail_ "the user's LD_PRELOAD did not reach the exec'd program: $(grep LD_PRELOAD out)"
grep -qE '^MEMPROF_(SOCKET|OUTPUT|FORCE|FOLLOW_FORK|INTERVAL_MS|MAX_DEPTH)=' out && fail_ "the tracker's variables leaked to the exec'd program"
grep -q libmemprof out && fail_ "libmemprof leaked to the exec'd program"
expect_err "replaced itself with another program (exec), which was not tracked"
"$MEMPROF" parse --stacks e.bin > p || fail_ "parse"
expect_count 1 '^ALLOC .*size=123 .*frames=\["before_exec","main"' p
ls e.bin.* 2>/dev/null && fail_ "a capture for the exec'd program without --follow-fork"

# With --follow-fork: the exec'd program (same pid) gets e.bin.<pid>.
mp run -q -f --follow-fork -o e.bin "$WORKLOADS/execs" "$WORKLOADS/allocs"
expect_rc 0 "run --follow-fork execs allocs"
expect_out "allocs done"
pid=$(field pid "$("$MEMPROF" parse e.bin | grep ^HEADER)")
[ -f "e.bin.$pid" ] || fail_ "no capture e.bin.$pid for the exec'd program"
"$MEMPROF" parse "e.bin.$pid" > c || fail_ "parse"
expect_count 1023 '^ALLOC ' c
grep -q "exe=\"$WORKLOADS/allocs\"" c || fail_ "the exec'd capture is not allocs'"

# A forked child that execs, followed: its capture, and the parent's.
mp run -q -f --follow-fork -o e.bin "$WORKLOADS/execs" fork "$WORKLOADS/allocs"
expect_rc 0 "run --follow-fork execs fork allocs"
[ "$(ls e.bin.* | wc -l)" -ge 2 ] || fail_ "expected captures for the child and the program it runs: $(ls e.bin.*)"
grep -l '1023' <(for f in e.bin.*; do "$MEMPROF" parse "$f" | grep -c '^ALLOC '; done) >/dev/null || fail_ "no capture with allocs' 1023 allocations"
exit 0
