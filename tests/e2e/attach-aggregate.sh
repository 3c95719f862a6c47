#!/bin/bash
# memprof attach --aggregate: an aggregated capture of what happened between attach and detach,
# with the commanded allocations exactly, and the process runs on untouched.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-attach.sh"

start_target
attach_bg a.bin --aggregate $TARGET_PID
send_cmd "alloc 100 1000"
send_cmd "free"
send_cmd "alloc 5 4321"
keep -n detach "$MEMPROF" detach $TARGET_PID
expect_rc 0 "detach"
reap $ATTACH_PID
expect_rc 0 "attach"
running $TARGET_PID
send_cmd "alloc 7 777"
send_cmd "exit 3"
wait $TARGET_PID; st=$?
[ "$st" -eq 3 ] || fail_ "the target exited $st"

"$MEMPROF" parse a.bin > p || fail_ "parse"
grep -q '^HEADER .*mode=attach .*flags=[a-z,]*aggregated' p || fail_ "header: $(grep ^HEADER p)"
expect_count 0 '^(ALLOC|FREE|TICK) ' p
expect_count 1 '^ATTACH ' p
expect_count 1 '^DETACH ' p
[ "$(field end "$(grep ^TRAILER p)")" = detach ] || fail_ "trailer: $(grep ^TRAILER p)"
"$MEMPROF" stats --json -o - a.bin > s.json || fail_ "stats"
python3 - <<'PY' || fail_ "stats: $(head -c 600 s.json)"
import json
d = json.load(open("s.json"))
top = [t for t in d["top_allocations_by_count"] if t["function"] == "command_alloc"]
assert top and top[0]["count"] == 105 and top[0]["size"] == 100 * 1000 + 5 * 4321, top
assert d["since_attach"] is True
assert d["unknown_frees"] >= 5, d["unknown_frees"]
PY
# Leaks since the attach: the 5 blocks of 4321 bytes (the 777 came after the detach).
leak=$("$MEMPROF" transform folded --leaks -o - a.bin | awk '/;command_alloc /{n += $NF} END {print n + 0}')
[ "$leak" = 21605 ] || fail_ "leaked from command_alloc: $leak"
exit 0
