#!/bin/bash
# Names from a capture are untrusted: escape sequences never reach the
# terminal, and the JSON stays valid and holds the exact names.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-reports.sh"

mkcap evil.mprof <<'CAP'
HEADER format=1.0 pid=1 main_tid=1 mode=run flags=symbolized argv=["/bin/evil\x1b[2J","a'b"]
THREAD index=0 tid=1 name="t\x1b[31mred"
MODULE id=1 base=0x400000 path="/bin/evil" build_id=- segments=[0x1000+0x1000:r-x]
STRING id=1 "evil\"quote\\back\x1b[31mred\n\xff<script>"
STRING id=2 "/src/\x1b]0;title\x07.c"
SYMBOL ip=0x401010 module=1 offset=0x1010 frames=[#1 #2:5:0]
TRACE node=1 parent=0 ip=0x401010
ALLOC thread=0 kind=malloc addr=0x1000 size=10 stack=1
TRAILER duration_us=10 end=exit exit_code=0
CAP

no_escape_bytes() {
	[ "$(tr -cd '\033\007' < out | wc -c)" -eq 0 ] || fail_ "$1 let control characters through"
}
for c in stats summary tree; do
	mp "$c" evil.mprof
	expect_rc 0 "$c"
	no_escape_bytes "$c"
done
mp stats evil.mprof
expect_out "Command line: '/bin/evil\\x1b[2J' 'a'\\''b'"
expect_out "	- 1 (t\\x1b[31mred): 1 allocation, 10 B, 0 frees"
expect_out "	- evil\"quote\\back\\x1b[31mred\\x0a\\xff<script>:/src/\\x1b]0;title\\x07.c:5 -> 10 B"
mp tree evil.mprof
expect_out "└── 10 B (100.00 %) evil\"quote\\back\\x1b[31mred\\x0a\\xff<script>  /src/\\x1b]0;title\\x07.c:5"

command -v python3 >/dev/null || skip_ "python3 is needed to read the JSON"
mp stats --json evil.mprof
expect_rc 0 "stats --json"
python3 -c '
import json
d = json.load(open("memprof-stats-evil.mprof.json"))
top = d["top_allocations_by_size"][0]
assert top["function"] == "evil\"quote\\back\x1b[31mred\n\ufffd<script>", repr(top["function"])
assert top["file"] == "/src/\x1b]0;title\x07.c", repr(top["file"])
assert d["threads"][0]["name"] == "t\x1b[31mred", repr(d["threads"][0]["name"])
assert d["metadata"]["argv"] == ["/bin/evil\x1b[2J", "a\x27b"], d["metadata"]["argv"]
' || fail_ "the JSON does not hold the exact names"
exit 0
