#!/bin/bash
# Every reporter and export on a sampled capture (memprof-capture(5), Sampled
# captures): its figures are the estimates, each recorded block weighed by
# 1/p, p = 1 - e^(-(s+1)/N), and it says they are estimates. The capture is
# built by hand (interval 1000: three blocks of 100 bytes at alpha, one of
# 5000 at beta, recorded all; one of alpha's freed), and the expected figures
# are worked out here from the model alone: each small block adds
# round(100 w) bytes, w = 10.409..., and floor(w) blocks, plus one when the
# hash of its key (the blocks its thread allocated before it; the murmur3
# finaliser, lib/util/hash.h) falls below w's fraction; beta's block is itself. The same capture without its
# interval is exact: nothing is scaled, nothing says "estimated".
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-reports.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-html.sh"

capture_text() {
	cat <<EOF
HEADER format=1.0 pid=6000 ppid=1 main_tid=6000 mode=run start_time=2026-11-22T08:00:00.000000Z flags=symbolized exe="/usr/bin/svc" argv=["/usr/bin/svc"] $1
THREAD index=0 tid=6000 name="svc"
MODULE id=1 base=0x555555554000 path="/usr/bin/svc" build_id=- segments=[0x1000+0x4000:r-x]
STRING id=1 "main"
STRING id=2 "/src/svc.c"
STRING id=3 "alpha"
STRING id=4 "beta"
SYMBOL ip=0x555555555100 module=1 offset=0x1100 frames=["main" "/src/svc.c":50:5]
SYMBOL ip=0x555555555200 module=1 offset=0x1200 frames=["alpha" "/src/svc.c":20:3]
SYMBOL ip=0x555555555300 module=1 offset=0x1300 frames=["beta" "/src/svc.c":30:7]
TRACE node=1 parent=0 ip=0x555555555100
TRACE node=2 parent=1 ip=0x555555555200
TRACE node=3 parent=1 ip=0x555555555300
TICK time_us=10000 rss=2000000
ALLOC thread=0 kind=malloc addr=0x1000 size=100 stack=2
ALLOC thread=0 kind=malloc addr=0x1100 size=100 stack=2
ALLOC thread=0 kind=malloc addr=0x1200 size=100 stack=2
ALLOC thread=0 kind=malloc addr=0x2000 size=5000 stack=3
TICK time_us=20000 rss=3000000
FREE thread=0 kind=free addr=0x1000
TICK time_us=30000 rss=3000000
TRAILER end_time=2026-11-22T08:00:00.035000Z duration_us=35000 end=exit exit_code=0
EOF
}
capture_text sampling_interval=1000 | mkcap s.bin
capture_text "" | mkcap e.bin

# The expected figures, one "name value" a line.
python3 - > want <<'PY'
import math
M = (1 << 64) - 1
def mix(x):  # mp_hash_u64
    x ^= x >> 33; x = (x * 0xff51afd7ed558ccd) & M
    x ^= x >> 33; x = (x * 0xc4ceb9fe1a85ec53) & M
    return x ^ (x >> 33)
w = -1 / math.expm1(-101 / 1000)
b = math.floor(100 * w + 0.5)
count, before = [], 0
for _ in range(3):
    count.append(math.floor(w) + ((mix(before ^ 0x5851f42d4c957f2d) >> 11) * 2.0 ** -53 < w - math.floor(w)))
    before += count[-1]
def size(n):  # mp_format_size
    if n < 1024:
        return "%d B" % n
    return "%.3f KiB" % (n / 1024)
var = 100 * 100 * (w * w - w)
print("alpha_bytes", 3 * b)
print("alpha_size", size(3 * b).replace(" ", "_"))
print("alpha_count", sum(count))
print("allocated", 3 * b + 5000)
print("allocations", sum(count) + 1)
print("frees", count[0])
print("leaked", 2 * b + 5000)
print("leaked_blocks", count[1] + count[2] + 1)
print("alpha_leaked", 2 * b)
print("sd_allocated", round(math.sqrt(3 * var)))
print("sd_leaked", round(math.sqrt(2 * var)))
PY
want() { sed -n "s/^$1 //p" want; }
WORDS="estimated from a sample, one allocation per 1000 B allocated"

# stats: the interval, the errors, "(estimated)" on every section, the figures.
mp stats s.bin
expect_rc 0 "stats"
expect_out "Sampling: $WORDS: every figure below is an estimate"
grep -q "^Sampling error (one standard error): ±" out || fail_ "stats: no standard errors"
grep -A1 '^Total allocations (estimated):' out | grep -qx "	$(want allocations)" || fail_ "stats: allocations"
grep -A1 '^Total frees (estimated):' out | grep -qx "	$(want frees)" || fail_ "stats: frees"
grep -q '^Peak memory usage (estimated):' out || fail_ "stats: peak not labelled"
grep -q '^Leaked memory (still allocated at the end) (estimated):' out || fail_ "stats: leaks not labelled"
mp stats --json -o s.json -f s.bin
expect_rc 0 "stats --json"
python3 - s.json want <<'PY' || fail_ "stats --json"
import json, sys
d = json.load(open(sys.argv[1]))
w = dict(l.split() for l in open(sys.argv[2]))
got = {"total_bytes_allocated": d["total_bytes_allocated"], "total_num_allocations": d["total_num_allocations"],
       "total_num_frees": d["total_num_frees"], "peak_memory_bytes": d["peak_memory_bytes"],
       "leaked_bytes": d["leaked_bytes"], "leaked_blocks": d["leaked_blocks"],
       "sampling_interval": d["sampling_interval"], "estimated": d["estimated"],
       "sd_allocated": d["estimate_errors"]["total_bytes_allocated"],
       "sd_peak": d["estimate_errors"]["peak_memory_bytes"], "sd_leaked": d["estimate_errors"]["leaked_bytes"]}
want = {"total_bytes_allocated": int(w["allocated"]), "total_num_allocations": int(w["allocations"]),
        "total_num_frees": int(w["frees"]), "peak_memory_bytes": int(w["allocated"]),
        "leaked_bytes": int(w["leaked"]), "leaked_blocks": int(w["leaked_blocks"]),
        "sampling_interval": 1000, "estimated": True, "sd_allocated": int(w["sd_allocated"]),
        "sd_peak": int(w["sd_allocated"]), "sd_leaked": int(w["sd_leaked"])}
if got != want:
    sys.exit("got %r\nwant %r" % (got, want))
PY

# summary and tree: the title line says it; alpha's row holds its estimate.
mp summary s.bin
expect_rc 0 "summary"
head -1 out | grep -q "^Peak memory: .* ($WORDS)\$" || fail_ "summary's title: $(head -1 out)"
grep -E "alpha at /src/svc.c +│ +$(want alpha_size | tr _ ' ') " out >/dev/null || fail_ "summary: alpha's row"
mp tree --leaks s.bin
expect_rc 0 "tree --leaks"
head -1 out | grep -q "^Leaked memory (still allocated at the end): .* ($WORDS)\$" || fail_ "tree's title: $(head -1 out)"
grep -q "$(want alpha_leaked) B\|alpha" out || fail_ "tree: no alpha"
mp summary --temporary-allocations s.bin
expect_rc 1 "summary --temporary-allocations of a sampled capture"
expect_err "memprof: 's.bin' is a sampled capture (--sampling-interval): temporary allocations need every allocation in its order; profile without --sampling-interval for this report"
expect_one_line_err

# diff: each side says what it is; the JSON too.
mp diff e.bin s.bin
expect_rc 0 "diff"
grep -qx "Base: e.bin (/usr/bin/svc)" out || fail_ "diff: the exact side: $(head -2 out)"
grep -qx "New:  s.bin (/usr/bin/svc), $WORDS" out || fail_ "diff: the sampled side: $(head -2 out)"
mp diff --json -o d.json -f e.bin s.bin
expect_rc 0 "diff --json"
python3 -c 'import json, sys
c = json.load(open("d.json"))["captures"]
assert (c["base"]["estimated"], c["base"]["sampling_interval"]) == (False, 0), c
assert (c["new"]["estimated"], c["new"]["sampling_interval"]) == (True, 1000), c' || fail_ "diff --json"

# Exports: the estimates in every format, and the word where the format has room.
mp transform folded -o s.folded -f s.bin
expect_rc 0 "transform folded"
grep -q "warning: the figures are $WORDS (a sampled capture)" err || fail_ "folded: no warning"
grep -q ";alpha $(want alpha_bytes)\$" s.folded || fail_ "folded: alpha's estimate: $(cat s.folded)"
mp transform csv --leaks -o s.csv -f s.bin
expect_rc 0 "transform csv"
grep -q "warning: the figures are $WORDS" err || fail_ "csv: no warning"
grep -q "^MALLOC,$(($(want leaked_blocks) - 1)),$(want alpha_leaked),.*,alpha;" s.csv || fail_ "csv: alpha's leak: $(cat s.csv)"
mp transform speedscope -o s.speedscope.json -f s.bin
expect_rc 0 "transform speedscope"
expect_no_err "transform speedscope (it says it itself)"
python3 -c 'import json, sys
d = json.load(open("s.speedscope.json"))
assert d["name"] == "/usr/bin/svc (peak memory, '"$WORDS"')", d["name"]
assert [p["name"] for p in d["profiles"]] == ["Memory (estimated)", "Allocations (estimated)"], d["profiles"]
assert sum(d["profiles"][0]["weights"]) == '"$(want allocated)"', d["profiles"][0]["weights"]' || fail_ "speedscope"
mp transform pprof -o s.pb.gz -f s.bin
expect_rc 0 "transform pprof"
expect_no_err "transform pprof (it says it itself)"
if command -v go >/dev/null && HOME=$T GOCACHE=$T/gocache go tool pprof -h >/dev/null 2>&1; then
	HOME=$T GOCACHE=$T/gocache PPROF_TMPDIR=$T go tool pprof -raw s.pb.gz > raw 2>/dev/null || fail_ "go tool pprof -raw"
	grep -qx "PeriodType: space bytes" raw && grep -qx "Period: 1000" raw || fail_ "pprof: the period: $(head -5 raw)"
	grep -q "Comment: memprof .*: peak memory, $WORDS" raw || fail_ "pprof: no comment"
	sums=$(awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 }
		s && $4 ~ /:$/ { a += $1; b += $2 } END { print a, b }' raw)
	[ "$sums" = "$(want allocations) $(want allocated)" ] || fail_ "pprof: the estimates: $sums"
fi

# The HTML pages: the data carries the interval; in a browser, the badge, the panel, the note.
mp flamegraph -o fg.html -f s.bin
expect_rc 0 "flamegraph"
mp table -o tb.html -f s.bin
expect_rc 0 "table"
mp flamegraph -o efg.html -f e.bin
expect_rc 0 "flamegraph (exact)"
for p in fg tb efg; do
	python3 "$BROWSER_DIR/report_data.py" $p.html --json $p.json > /dev/null || fail_ "report_data.py $p.html"
done
python3 -c 'import json
for p, want in (("fg", 1000), ("tb", 1000), ("efg", None)):
    m = json.load(open(p + ".json"))["meta"]
    assert m.get("sampling_interval") == want, (p, m)' || fail_ "the pages' data"
if [ -n "$CHROMIUM" ] && [ -x "$CHROMIUM" ]; then
	check check_sampled.py flamegraph fg.html fg.json
	check check_sampled.py table tb.html tb.json
	check check_sampled.py exact efg.html efg.json
fi

# The exact capture: nothing scaled, nothing said.
mp stats e.bin
expect_rc 0 "stats (exact)"
if grep -q 'estimate\|Sampling' out; then fail_ "an exact capture's stats speak of estimates"; fi
grep -A1 '^Total memory allocated:' out | grep -qx '	5.176 KiB' || fail_ "stats (exact): the bytes"
mp transform folded -o e.folded -f e.bin
expect_rc 0 "transform folded (exact)"
expect_no_err "transform folded (exact)"
grep -q ';alpha 300$' e.folded || fail_ "folded (exact): $(cat e.folded)"
exit 0
