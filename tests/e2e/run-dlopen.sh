#!/bin/bash
# A library loaded with dlopen: its module, its symbols, its unload.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
lib=$WORKLOADS/.libs/libdlwork.so

mp run -q -o d.bin "$WORKLOADS/dlopens" "$lib"
expect_rc 0 "run dlopens"
"$MEMPROF" parse --stacks d.bin > p || fail_ "parse"
expect_count 3 '^ALLOC .*size=4444 .*frames=\["dlwork_alloc","main"' p
expect_count 1 '^ALLOC .*size=5555 .*frames=\["main"' p
mod=$(grep -E "^MODULE .*path=\"$lib\"" p)
[ -n "$mod" ] || fail_ "no MODULE record for $lib"
id=$(field id "$mod")
grep -qE '^MODULE .*build_id=[0-9a-f]{40}' <<<"$mod" || fail_ "no build-id: $mod"
expect_count 1 "^MODULE_UNLOAD id=$id\$" p
line=$(site dlwork_alloc "$WORKLOAD_SRC/dlwork.c")
grep -qE "^SYMBOL .*module=$id .*frames=\[\"dlwork_alloc\" \"[^\"]*dlwork.c\":$line:" p ||
	fail_ "dlwork_alloc not symbolized at dlwork.c:$line"
# Only the modules some stack uses are in the capture, each before its first symbol:
# not the tracker's own library, which no stack of the program goes through.
! grep -q '^MODULE .*libmemprof' p || fail_ "the tracker's own library has a MODULE record"
for id in $(grep '^MODULE ' p | sed 's/^MODULE id=\([0-9]*\) .*/\1/'); do
	first=$(grep -n -E "^(MODULE id=$id |SYMBOL .*module=$id )" p | head -1)
	[[ $first == *:MODULE* ]] || fail_ "module $id: no SYMBOL uses it, or one comes before its MODULE"
	grep -q "^SYMBOL .*module=$id " p || fail_ "module $id is in the capture, but no symbol uses it"
done
exit 0
