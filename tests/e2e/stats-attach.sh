#!/bin/bash
# A capture made by attaching: every report says "since attach", and frees of
# blocks allocated before the attach are counted as unknown.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-reports.sh"

mkcap attach.mprof <<'CAP'
HEADER format=1.0 pid=700 main_tid=700 mode=attach start_time=2026-11-22T09:00:00.000000Z flags=symbolized argv=["/usr/sbin/srv"]
ATTACH time_us=0 rss=5000000 heap_arena=3000000 heap_in_use=2000000
THREAD index=0 tid=700 name="srv"
MODULE id=1 base=0x400000 path="/usr/sbin/srv" build_id=- segments=[0x1000+0x1000:r-x]
STRING id=1 "serve"
STRING id=2 "/src/srv.c"
SYMBOL ip=0x401010 module=1 offset=0x1010 frames=["serve" "/src/srv.c":10:1]
TRACE node=1 parent=0 ip=0x401010
FREE thread=0 kind=free addr=0x5000
FREE thread=0 kind=free addr=0x5100
ALLOC thread=0 kind=malloc addr=0x6000 size=100 stack=1
ALLOC thread=0 kind=malloc addr=0x6100 size=200 stack=1
FREE thread=0 kind=free addr=0x6000
TICK time_us=1000 rss=5001000
DETACH time_us=5000
TRAILER end_time=2026-11-22T09:00:00.005000Z duration_us=5000 end=detach
CAP

mp stats attach.mprof
expect_rc 0 "stats"
expect_no_err "stats"
expect_out "Exit status: unknown: tracking stopped before the process ended (detach or stop)"
expect_out "Tracking: since attach (allocations made before are not seen)"
grep -A1 '^Total allocations since attach:' out | grep -qx '	2' || fail_ "no 'Total allocations since attach: 2'"
grep -A1 '^Total frees since attach:' out | grep -qx '	1' || fail_ "no 'Total frees since attach: 1'"
grep -A1 '^Unknown frees:' out | grep -q '^	2 (of memory allocated before tracking started' || fail_ "no 2 unknown frees"
expect_out "	300 B in 2 blocks, before the first sample"
expect_out "	200 B in 1 block"

mp summary attach.mprof
expect_rc 0 "summary"
[ "$(head -1 out)" = "Peak memory: 300 B in 2 allocations, before the first sample (since attach)" ] ||
	fail_ "summary title: $(head -1 out)"
mp tree --leaks attach.mprof
expect_rc 0 "tree"
cat > expected <<'OUT'
Leaked memory (still allocated at the end): 200 B in 1 allocation (since attach)
200 B (100.00 %) <ROOT>
└── 200 B (100.00 %) serve  /src/srv.c:10
OUT
match_diff expected out

if command -v python3 >/dev/null; then
	mp stats --json attach.mprof
	expect_rc 0 "stats --json"
	python3 -c '
import json
d = json.load(open("memprof-stats-attach.mprof.json"))
assert d["since_attach"] is True, d["since_attach"]
assert d["unknown_frees"] == 2, d["unknown_frees"]
assert d["exit_status"] is None, d["exit_status"]
assert d["total_num_allocations"] == 2
assert d["peak_time_us"] is None, d["peak_time_us"]
' || fail_ "JSON of an attached capture"
fi
exit 0
