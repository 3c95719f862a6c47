#!/bin/bash
# Two hand-built captures of a process tree, their clocks 25 ms apart: the
# heap is the sum of the processes' at each moment, worked out by hand.
#   parent (starts at 0):   a = 1000 B  made in the interval ending at 20 ms, held;
#                           b = 3000 B  at 50 ms; a and b freed at 60 ms
#   child  (starts at 25 ms): c = 3500 B at 35 ms (its tick at 10 ms);
#                           c freed, d = 500 B at 45 ms; d never freed; ends then
# Summed: 20 ms 1000, 35 ms 4500 (a + c), 45 ms 1500, then the child's end
# takes d off the heap (its leak), 50 ms 4000 (a + b), 60 ms 0. The peak is
# 4500 B in 2 blocks, after the tick at 26 ms (the child's first); each
# process alone peaks at 4000 and 3500 (their sum, 7500, is not the peak),
# and one after the other they would peak at 4000.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-reports.sh"
command -v python3 >/dev/null || skip_ "python3 is needed to read the JSON"

cat > p.txt <<'TXT'
HEADER format=1.0 pid=100 ppid=1 main_tid=100 mode=run start_time=2026-11-22T08:00:00.000000Z flags=symbolized,follow-fork family=00000000000000ab exe="/usr/bin/app" argv=["/usr/bin/app","serve"]
THREAD index=0 tid=100 name="app"
MODULE id=1 base=0x555555554000 path="/usr/bin/app" build_id=- segments=[0x1000+0x4000:r-x]
STRING id=1 "main"
STRING id=2 "/src/app.c"
STRING id=3 "keep_a"
STRING id=4 "make_b"
SYMBOL ip=0x555555555100 module=1 offset=0x1100 frames=["main" "/src/app.c":50:5]
SYMBOL ip=0x555555555200 module=1 offset=0x1200 frames=["keep_a" "/src/app.c":20:3]
SYMBOL ip=0x555555555300 module=1 offset=0x1300 frames=["make_b" "/src/app.c":30:7]
TRACE node=1 parent=0 ip=0x555555555100
TRACE node=2 parent=1 ip=0x555555555200
TRACE node=3 parent=1 ip=0x555555555300
TICK time_us=10000 rss=1000000
ALLOC thread=0 kind=malloc addr=0x1000 size=1000 stack=2
TICK time_us=20000 rss=1000000
FORK time_us=22000 child_pid=101
ALLOC thread=0 kind=malloc addr=0x2000 size=3000 stack=3
TICK time_us=50000 rss=1000000
FREE thread=0 kind=free addr=0x1000
FREE thread=0 kind=free addr=0x2000
TICK time_us=60000 rss=1000000
TRAILER end_time=2026-11-22T08:00:00.070000Z duration_us=70000 end=exit exit_code=0
TXT
cat > q.txt <<'TXT'
HEADER format=1.0 pid=101 ppid=100 main_tid=101 mode=run start_time=2026-11-22T08:00:00.025000Z flags=symbolized,follow-fork,fork-child forked_from=100 family=00000000000000ab exe="/usr/bin/app" argv=["/usr/bin/app","serve"]
THREAD index=0 tid=101 name="app"
MODULE id=1 base=0x555555554000 path="/usr/bin/app" build_id=- segments=[0x1000+0x4000:r-x]
STRING id=1 "main"
STRING id=2 "/src/app.c"
STRING id=3 "child_c"
STRING id=4 "child_d"
SYMBOL ip=0x555555555100 module=1 offset=0x1100 frames=["main" "/src/app.c":50:5]
SYMBOL ip=0x555555555400 module=1 offset=0x1400 frames=["child_c" "/src/app.c":40:3]
SYMBOL ip=0x555555555500 module=1 offset=0x1500 frames=["child_d" "/src/app.c":45:3]
TRACE node=1 parent=0 ip=0x555555555100
TRACE node=2 parent=1 ip=0x555555555400
TRACE node=3 parent=1 ip=0x555555555500
TICK time_us=1000 rss=500000
ALLOC thread=0 kind=malloc addr=0x1000 size=3500 stack=2
TICK time_us=10000 rss=800000
FREE thread=0 kind=free addr=0x1000
ALLOC thread=0 kind=malloc addr=0x1000 size=500 stack=3
TICK time_us=20000 rss=800000
TRAILER end_time=2026-11-22T08:00:00.050000Z duration_us=25000 end=exit exit_code=0
TXT
mkcap app.bin p.txt
mkcap app.bin.101 q.txt

mp stats --json -o - --children app.bin
expect_rc 0 "stats --children"
python3 - out <<'PY' || fail_ "the figures of the tree"
import json, sys
d = json.load(open(sys.argv[1]))
want = {"total_num_allocations": 4, "total_bytes_allocated": 8000, "total_num_frees": 3,
        "peak_memory_bytes": 4500, "peak_memory_blocks": 2, "peak_time_us": 26000,
        "leaked_bytes": 500, "leaked_blocks": 1}
got = {k: d[k] for k in want}
if got != want:
    sys.exit("%r, expected %r" % (got, want))
p = [(x["pid"], x["command"], x["parent"], x["start_us"], x["leaked_bytes"]) for x in d["processes"]]
if p != [(100, "app", None, 0, 0), (101, "app", 0, 25000, 500)]:
    sys.exit("processes: %r" % p)
PY
# What the peak holds, by process: a and c.
mp transform --children --split-processes -o - folded app.bin
expect_rc 0 "transform --split-processes"
printf 'app (pid 100);main;keep_a 1000\napp (pid 101);main;child_c 3500\n' > want.folded
match_diff want.folded out
# Merged, main is one frame of both processes.
mp transform --children -o - folded app.bin
printf 'main;child_c 3500\nmain;keep_a 1000\n' > want.folded
sort out | match_diff want.folded -
# The summed series: the processes' ticks on one axis, the heap and the RSS of both.
mp flamegraph -o fg.html app.bin app.bin.101
expect_rc 0 "flamegraph of both captures"
python3 - fg.html <<'PY' || fail_ "the summed series"
import json, re, sys
d = json.loads(re.search(r'id="memprof-data">(.*?)</script>', open(sys.argv[1]).read(), re.S).group(1))
m = d["memory"]
want = {"time_us": [10000, 20000, 26000, 35000, 45000, 50000, 60000],
        "heap": [0, 1000, 1000, 4500, 1500, 4000, 0],
        "rss": [1000000, 1000000, 1500000, 1800000, 1800000, 1000000, 1000000]}
got = {k: m[k] for k in want}
if got != want:
    sys.exit("%r, expected %r" % (got, want))
PY
# Leaks are each process's: the child's d.
mp summary --leaks -r 5 --children app.bin
expect_rc 0 "summary --leaks"
grep -q "child_d at /src/app.c" out || fail_ "no child_d among the leaks: $(cat out)"
exit 0
