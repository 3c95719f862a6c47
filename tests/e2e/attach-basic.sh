#!/bin/bash
# attach to a multi-threaded process, run known allocations, detach: exact counts and
# stacks since attach; the process runs on with its own output and status.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-attach.sh"

start_target
attach_bg a.bin $TARGET_PID
send_cmd "alloc 100 1000"
send_cmd "free"
keep -n detach "$MEMPROF" detach $TARGET_PID
expect_rc 0 "detach"
grep -qx "memprof: detached from process $TARGET_PID; capture in '$PWD/a.bin'" detach.err ||
	fail_ "detach said: $(cat detach.err)"
reap $ATTACH_PID
expect_rc 0 "attach"
grep -q "^memprof: wrote 'a.bin': [0-9]* allocations and [0-9]* frees since attach" attach.err ||
	fail_ "no summary: $(cat attach.err)"
running $TARGET_PID
# Untracked again: the process works on; its output and status are its own.
send_cmd "alloc 5 4321"
send_cmd "exit 5"
wait $TARGET_PID; st=$?
[ "$st" -eq 5 ] || fail_ "the target exited $st, expected 5"
printf 'ok started\nok alloc 100 1000\nok free\nok alloc 5 4321\nok exit 5\n' | cmp -s - target.out ||
	fail_ "the target's output changed: $(cat target.out)"
[ ! -s target.err ] || fail_ "the target wrote on stderr: $(cat target.err)"

"$MEMPROF" parse --stacks a.bin > p || fail_ "parse"
h=$(grep ^HEADER p)
[ "$(field mode "$h")" = attach ] && [ "$(field pid "$h")" = "$TARGET_PID" ] || fail_ "header: $h"
expect_count 1 '^ATTACH .*rss=[1-9][0-9]* heap_arena=[0-9]+ heap_in_use=[0-9]+' p
expect_count 1 '^DETACH ' p
[ "$(field end "$(grep ^TRAILER p)")" = detach ] || fail_ "trailer: $(grep ^TRAILER p)"
# Exactly the commanded allocations, in the reader thread, from command_alloc.
expect_count 100 '^ALLOC .*size=1000 .*frames=\["command_alloc","main",' p
expect_count 0 '^ALLOC .*size=4321 ' p
reader=$(field index "$(grep -E '^THREAD .*name="reader"' p | head -1)")
[ -n "$reader" ] || fail_ "no thread named reader"
expect_count 100 "^ALLOC thread=$reader .*size=1000 " p
grep -qE "^SYMBOL .*frames=\[\"command_alloc\" \"[^\"]*attachee.c\":$(site command_alloc "$WORKLOAD_SRC/attachee.c"):" p ||
	fail_ "command_alloc's line is not in the symbols"
# The churning threads were seen, by name, in churn_alloc.
for t in churn-1 churn-2; do
	grep -qE "^THREAD .*name=\"$t\"" p || fail_ "no thread named $t"
done
[ "$(grep -cE '^ALLOC .*size=64 .*frames=\["churn_alloc","churn","start_thread"' p)" -gt 0 ] ||
	fail_ "no allocations from the churning threads"
# Blocks allocated before the attach and freed after are unknown frees (the 5 early ones at least).
"$MEMPROF" stats --json -o s.json a.bin > /dev/null || fail_ "stats --json"
python3 - <<'PY' || fail_ "stats: $(cat s.json | head -c 400)"
import json
d = json.load(open("s.json"))
assert d["unknown_frees"] >= 5, d["unknown_frees"]
assert d["leaked_blocks"] <= 2, d["leaked_blocks"]   # at most a churn block in flight per thread
PY
"$MEMPROF" stats a.bin | grep -q "since attach" || fail_ "stats does not say 'since attach'"
exit 0
