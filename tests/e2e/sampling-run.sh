#!/bin/bash
# Sampled tracking, the ways to ask for it and what it goes with: the option's
# values (k, M, 0) and its errors; MEMPROF_SAMPLING_INTERVAL for a tracker
# preloaded by hand; threads freeing each other's blocks (all matched: nothing
# is left); every kind of allocation placed where its free is found;
# --aggregate; --follow-fork (each process sampled, read as one); several
# captures of different intervals read as one, each weighed by its own;
# Python frames; memprof ctl PID start --sampling-interval.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
command -v python3 >/dev/null || skip_ "python3 is needed to read the JSON"

interval_of() { "$MEMPROF" parse "$1" | sed -n 's/^HEADER .* sampling_interval=\([0-9]*\) .*/\1/p'; }
json() { "$MEMPROF" stats --json -o - "$@" 2>/dev/null; }
key() { python3 -c 'import json, sys; d = json.load(sys.stdin)
for k in sys.argv[1:]: d = d[k]
print(d)' "$@"; }

# The option: bytes, with k or M; 0 is every event; anything else a usage error naming it.
for v in 4k:4096 1M:1048576 65536:65536 1024K:1048576; do
	mp run -q -f -o o.bin --sampling-interval "${v%%:*}" "$WORKLOADS/allocs"
	expect_rc 0 "run --sampling-interval ${v%%:*}"
	[ "$(interval_of o.bin)" = "${v#*:}" ] || fail_ "--sampling-interval ${v%%:*}: the header says '$(interval_of o.bin)'"
done
mp run -q -f -o o.bin --sampling-interval 0 "$WORKLOADS/allocs"
expect_rc 0 "run --sampling-interval 0"
[ -z "$(interval_of o.bin)" ] || fail_ "--sampling-interval 0 is not every event"
[ "$(json o.bin | key total_num_allocations)" = 1023 ] || fail_ "--sampling-interval 0: not every allocation"
for bad in abc 4kb 1.5k -1 2G 1025M "" 99999999999999999999; do
	mp run -q -o o2.bin --sampling-interval "$bad" "$WORKLOADS/allocs"
	expect_rc 2 "run --sampling-interval '$bad'"
	expect_err "memprof run: invalid value '$bad' for --sampling-interval: expected a number of bytes from 0 to 1073741824 (k and M for KiB and MiB)"
	[ ! -e o2.bin ] || fail_ "a capture for a usage error"
done

# A tracker preloaded by hand reads MEMPROF_SAMPLING_INTERVAL (k too).
LD_PRELOAD=$TRACKER_LIB MEMPROF_OUTPUT=$PWD/pre.bin MEMPROF_SAMPLING_INTERVAL=16k \
	MEMPROF_SAMPLING_SEED=3 "$WORKLOADS/sampled" -a 200000 -b 6000 > truth || fail_ "the preloaded run"
[ "$(interval_of pre.bin)" = 16384 ] || fail_ "MEMPROF_SAMPLING_INTERVAL: the header says '$(interval_of pre.bin)'"
[ "$(json pre.bin | key estimated)" = True ] || fail_ "the preloaded capture is not estimated"
# (Its leaks: site_small_a's kept blocks, estimated, and site_large's 2 MiB, exact.)
python3 - truth <(json pre.bin) <<'PY' || fail_ "the preloaded capture's leaks"
import json, math, sys
t = dict((k, int(v)) for k, v in (l.split() for l in open(sys.argv[1])))
d = json.load(open(sys.argv[2]))
p = -math.expm1(-49 / 16384)
sd = math.sqrt(t["small_a_leaked_count"] * 48 * 48 * (1 - p) / p)
assert abs(d["leaked_bytes"] - t["leaked"]) <= 4 * sd, (d["leaked_bytes"], t["leaked"], sd)
PY

# Threads freeing each other's blocks: every free matched, nothing left; the totals estimated.
MEMPROF_SAMPLING_SEED=5 mp run -q -f -o x.bin --sampling-interval 64k "$WORKLOADS/sampled" -t 4 -r 10 -n 2000
expect_rc 0 "run -t 4"
cp out truth
json x.bin > x.json
python3 - truth x.json <<'PY' || fail_ "threads: the estimates"
import json, math, sys
t = dict((k, int(v)) for k, v in (l.split() for l in open(sys.argv[1])))
d = json.load(open(sys.argv[2]))
n = 65536
def pi(s): return 1.0 if s >= n else -math.expm1(-(s + 1) / n)
per = t["xfer_count"] // 4   # of each size
var = sum(per * s * s * (1 - pi(s)) / pi(s) for s in (32, 200, 3000, 70000))
assert (d["leaked_bytes"], d["leaked_blocks"]) == (0, 0), "leaked %r" % d["leaked_bytes"]
assert d["total_num_frees"] == d["total_num_allocations"], (d["total_num_frees"], d["total_num_allocations"])
got = sum(e["size"] for e in d["top_allocations_by_size"] if e["function"] == "site_xfer")
assert abs(got - t["xfer_allocated"]) <= 4 * math.sqrt(var), (got, t["xfer_allocated"], math.sqrt(var))
assert sorted(th["name"] for th in d["threads"] if th["name"].startswith("xfer")) == ["xfer-%d" % i for i in range(4)]
PY

# Every kind of allocation (malloc, calloc small and large, realloc moving and not, the
# aligned ones): a sampled block is put where its free is found from its address
# (lib/tracker/sample.h). The program's blocks stay as the C library promises (zeroed,
# contents kept, aligned: the workload checks), and every free is matched; at an interval
# of 1 byte every block is recorded, as in exact tracking.
for iv in 1 4k 512k; do
	MEMPROF_SAMPLING_SEED=7 mp run -q -f -o k.bin --sampling-interval $iv "$WORKLOADS/sampled" -k 300
	expect_rc 0 "run -k 300 at $iv (the workload's checks)"
	expect_out "kinds 300"
	json k.bin > k.json
	python3 - k.json $iv <<'PY' || fail_ "every kind at $iv: frees not matched"
import json, sys
d = json.load(open(sys.argv[1]))
assert (d["leaked_blocks"], d["leaked_bytes"], d["unknown_frees"]) == (0, 0, 0), d["leaked_blocks"]
assert d["total_num_frees"] == d["total_num_allocations"], (d["total_num_frees"], d["total_num_allocations"])
# 16 allocations a round, and main's two arrays
assert sys.argv[2] != "1" or d["total_num_allocations"] == 16 * 300 + 2, d["total_num_allocations"]
PY
done

# --aggregate: the estimates and their errors, written by the collector; one thread and a
# seed make the same sample as a full capture's, whose figures they are.
MEMPROF_SAMPLING_SEED=5 mp run -q -f -o ag.bin --aggregate --sampling-interval 64k "$WORKLOADS/sampled" -a 200000 -b 6000
expect_rc 0 "run --aggregate --sampling-interval"
MEMPROF_SAMPLING_SEED=5 mp run -q -f -o full.bin --sampling-interval 64k "$WORKLOADS/sampled" -a 200000 -b 6000
expect_rc 0 "run --sampling-interval (the same)"
json full.bin > x.json
"$MEMPROF" parse ag.bin | grep -qE '^AGG_TOTALS .* sd_allocated=[1-9][0-9]* sd_peak=[1-9][0-9]* sd_leaked=[1-9][0-9]*$' ||
	fail_ "no standard errors in AGG_TOTALS: $("$MEMPROF" parse ag.bin | grep AGG_TOTALS)"
python3 - x.json <(json ag.bin) <<'PY' || fail_ "--aggregate: the figures differ from the full capture's"
import json, sys
x, a = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
for k in ("total_num_allocations", "total_bytes_allocated", "peak_memory_bytes", "leaked_bytes",
          "sampling_interval", "estimated", "estimate_errors"):
    assert x[k] == a[k], (k, x[k], a[k])
PY
mp stats ag.bin
expect_rc 0 "stats of an aggregated sampled capture"
expect_out "Sampling: estimated from a sample, one allocation per 64.000 KiB allocated"

# --follow-fork: each process sampled, read as one.
mp run -q -f -o f.bin --follow-fork --sampling-interval 4k "$WORKLOADS/forks"
expect_rc 0 "run --follow-fork --sampling-interval"
child=$(ls f.bin.* | head -1)
[ -n "$child" ] && [ "$(interval_of "$child")" = 4096 ] || fail_ "the child's capture is not sampled: '$child'"
[ "$(json --children f.bin | key sampling_interval)" = 4096 ] || fail_ "stats --children: not sampled"

# Several captures of different intervals read as one: each weighed by its own.
MEMPROF_SAMPLING_SEED=1 mp run -q -f -o m1.bin --sampling-interval 4k "$WORKLOADS/sampled" -a 100000 -b 3000
expect_rc 0 "run 4k"
MEMPROF_SAMPLING_SEED=2 mp run -q -f -o m2.bin --sampling-interval 64k "$WORKLOADS/sampled" -a 100000 -b 3000
expect_rc 0 "run 64k"
mp run -q -f -o m3.bin "$WORKLOADS/sampled" -a 100000 -b 3000
expect_rc 0 "run exact"
python3 - <(json m1.bin) <(json m2.bin) <(json m3.bin) <(json --merge m1.bin m2.bin m3.bin) <<'PY' || fail_ "several captures"
import json, sys
one = [json.load(open(p)) for p in sys.argv[1:4]]
m = json.load(open(sys.argv[4]))
for k in ("total_bytes_allocated", "total_num_allocations", "leaked_bytes", "leaked_blocks"):
    assert m[k] == sum(d[k] for d in one), (k, m[k], [d[k] for d in one])
assert (m["sampling_interval"], m["estimated"], m["sampling_intervals_differ"]) == (65536, True, True), m
assert [p["sampling_interval"] for p in m["processes"]] == [4096, 65536, 0], m["processes"]
PY
mp summary --merge m1.bin m3.bin
expect_rc 0 "summary --merge"
head -1 out | grep -q "(estimated from a sample, one allocation per up to 4.000 KiB allocated, each capture by its own)$" ||
	fail_ "summary of a sampled and an exact capture: $(head -1 out)"

# Python frames: the sampled allocations' stacks have the program's functions.
pyexe=/usr/bin/python3 # (Debian's: a PATH python3 may be a shim script)
if [ -x "$pyexe" ] && "$pyexe" -c 'import sys; sys.exit(not (3, 11) <= sys.version_info[:2] <= (3, 13))' 2>/dev/null; then
	cat > job.py <<'EOF'
def build_rows(n):
    return [("row %d" % i) * 8 for i in range(n)]

def main():
    keep = []
    for _ in range(20):
        keep.append(build_rows(20000))
    print(len(keep))

main()
EOF
	MEMPROF_SAMPLING_SEED=9 mp run -q -f -o py.bin --sampling-interval 64k "$pyexe" -s job.py
	expect_rc 0 "run python3 --sampling-interval"
	"$MEMPROF" parse py.bin | grep -q '^HEADER .*flags=[a-z,-]*python-frames.* sampling_interval=65536 ' ||
		fail_ "python: the header"
	mp stats -n 10 py.bin
	expect_rc 0 "stats of the python capture"
	grep -qE '^	- build_rows[.:].*job.py:2 -> ' out || fail_ "python: build_rows is not a top location: $(grep -A11 'by size' out)"
	expect_out "Sampling: estimated from a sample"
fi
exit 0
