#!/bin/bash
# Sampled tracking's estimates (memprof run --sampling-interval): each site of
# tests/workloads/sampled.c, its bytes and blocks allocated and leaked, the
# peak and the leaks, against the true figures the workload prints.
#
# The tolerances come from the Poisson model, not from what one run gave: a
# block of s bytes is recorded with probability pi = 1 - e^(-(s+1)/N) and
# weighed 1/pi, so the estimate of a site's bytes is unbiased with variance
# sum(s^2 (1 - pi) / pi) over the site's blocks (and its count, sum((1 - pi)
# / pi)). Each estimate must lie within 4 standard errors of the truth (a
# correct tracker fails that once in 16,000 seeds); blocks of N bytes and up
# are recorded all, so their sites are exact, and what was freed (every block
# of site_small_b, the reallocations, the mappings, whole or in pieces)
# leaves exactly nothing. The seed is fixed (MEMPROF_SAMPLING_SEED), so the
# run is the same each time; a second seed checks it is not one lucky draw.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
command -v python3 >/dev/null || skip_ "python3 is needed for the statistics"

check() {
	local seed=$1 interval=$2
	MEMPROF_SAMPLING_SEED=$seed mp run -q -f -o s.bin --sampling-interval "$interval" "$WORKLOADS/sampled"
	expect_rc 0 "run --sampling-interval $interval (seed $seed)"
	cp out truth
	mp stats --json -n 20 -o stats.json -f s.bin
	expect_rc 0 "stats --json"
	mp transform csv --leaks -f -o leaks.csv s.bin
	expect_rc 0 "transform csv --leaks"
	grep -q 'warning: the figures are estimated from a sample' err || fail_ "csv: no word that the figures are estimates"
	python3 - "$interval" truth stats.json leaks.csv <<'PY' || fail_ "seed $seed, interval $interval: an estimate out of its tolerance"
import csv, json, math, sys
n = int(sys.argv[1].rstrip("k")) * 1024
truth = dict((k, int(v)) for k, v in (l.split() for l in open(sys.argv[2])))
stats = json.load(open(sys.argv[3]))
leaks = list(csv.DictReader(open(sys.argv[4])))

def pi(s):
    return 1.0 if s >= n else -math.expm1(-(s + 1) / n)

def var_bytes(blocks):  # blocks: (size, how many)
    return sum(k * s * s * (1 - pi(s)) / pi(s) for s, k in blocks)

def var_count(blocks):
    return sum(k * (1 - pi(s)) / pi(s) for s, k in blocks)

bad = []
def within(what, got, want, var):
    sd = math.sqrt(var)
    ok = abs(got - want) <= 4 * sd if sd else got == want
    print(f"{what}: {got} estimated, {want} true, {(got - want) / sd if sd else 0:+.2f} sd (sd {sd:.0f})")
    if not ok:
        bad.append(what)

def site(prefix, key):
    return sum(e[key] for e in stats["top_allocations_by_size"] if e["location"].startswith(prefix + ":"))

na = truth["small_a_count"]
nb = truth["small_b_count"]
a_blocks = [(48, na)]
b_blocks = [(s, nb // 5) for s in (24, 100, 400, 1000, 3000)]
within("site_small_a bytes", site("site_small_a", "size"), truth["small_a_allocated"], var_bytes(a_blocks))
within("site_small_a allocations", site("site_small_a", "count"), na, var_count(a_blocks))
within("site_small_b bytes", site("site_small_b", "size"), truth["small_b_allocated"], var_bytes(b_blocks))
within("site_small_b allocations", site("site_small_b", "count"), nb, var_count(b_blocks))
within("site_large bytes", site("site_large", "size"), truth["large_allocated"], 0)
within("site_large allocations", site("site_large", "count"), 8, 0)
r_blocks = [(16, na // 10), (64, na // 10), (256, na // 10)]
within("site_realloc bytes", site("site_realloc", "size"), truth["realloc_allocated"], var_bytes(r_blocks))
m_blocks = [(4096, 3 * (na // 500)), (12288, na // 500), (8192, na // 500)]
within("site_map bytes", site("site_map", "size"), truth["map_allocated"], var_bytes(m_blocks))

# Leaks, by site: what was all freed leaves exactly nothing.
leaked = {}
for r in leaks:
    fn = r["stack_trace"].split(";", 1)[0]
    b, c = leaked.get(fn, (0, 0))
    leaked[fn] = (b + int(r["size"]), c + int(r["num_allocations"]))
kept = [(48, truth["small_a_leaked_count"])]
within("site_small_a leaked bytes", leaked.get("site_small_a", (0, 0))[0], truth["small_a_leaked"], var_bytes(kept))
within("site_small_a leaked blocks", leaked.get("site_small_a", (0, 0))[1], truth["small_a_leaked_count"], var_count(kept))
within("site_large leaked bytes", leaked.get("site_large", (0, 0))[0], truth["large_leaked"], 0)
for fn in ("site_small_b", "site_realloc", "site_map", "main"):
    within(fn + " leaked bytes", leaked.get(fn, (0, 0))[0], 0, 0)
within("leaked bytes", stats["leaked_bytes"], truth["leaked"], var_bytes(kept))
# The peak: site_small_a's kept blocks, all of site_small_b's, the rest exact.
within("peak bytes", stats["peak_memory_bytes"], truth["peak"], var_bytes(kept + b_blocks))
# The labels, and the standard errors stats reports: the same variances, from the sample.
if not (stats["estimated"] is True and stats["sampling_interval"] == n):
    bad.append("stats JSON keys")
e = stats["estimate_errors"]
for key, var in (("leaked_bytes", var_bytes(kept)), ("peak_memory_bytes", var_bytes(kept + b_blocks))):
    if not 0.7 * math.sqrt(var) <= e[key] <= 1.3 * math.sqrt(var):
        print(f"estimate_errors.{key}: {e[key]}, expected about {math.sqrt(var):.0f}")
        bad.append("estimate_errors." + key)
if bad:
    sys.exit("out of tolerance: " + ", ".join(bad))
PY
}

check 12345 16k
check 777 64k

# Seeds 1 to 12 give independent samples: the number of blocks recorded is Poisson, its
# variance over the seeds its mean (within what 11 degrees of freedom allow: a chi-square of
# 11 lies between a quarter and 2.5 times its mean but once in 200 sets of seeds, and these
# are fixed). Seeds that gave one sequence shifted by a draw would vary by a block or two.
for seed in $(seq 12); do
	MEMPROF_SAMPLING_SEED=$seed "$MEMPROF" run -q -f -o n.bin --sampling-interval 16k \
		"$WORKLOADS/sampled" -a 200000 -b 6000 > /dev/null || fail_ "run, seed $seed"
	"$MEMPROF" parse n.bin | grep -c '^ALLOC'
done > counts
python3 - counts <<'PY' || fail_ "the seeds' samples are not independent: $(tr '\n' ' ' < counts)"
import statistics, sys
n = [int(l) for l in open(sys.argv[1])]
m, v = statistics.mean(n), statistics.variance(n)
print("blocks recorded: mean %.1f, variance %.1f over 12 seeds" % (m, v))
assert 0.25 * m <= v <= 2.5 * m, (m, v)
PY

# The same program tracked exactly: every figure is the truth, and nothing says "estimated".
mp run -q -f -o e.bin "$WORKLOADS/sampled"
expect_rc 0 "run (exact)"
cp out truth
mp stats --json -o e.json -f e.bin
expect_rc 0 "stats --json (exact)"
python3 - truth e.json <<'PY' || fail_ "the exact capture's figures"
import json, sys
truth = dict((k, int(v)) for k, v in (l.split() for l in open(sys.argv[1])))
d = json.load(open(sys.argv[2]))
assert d["leaked_bytes"] == truth["leaked"], d["leaked_bytes"]
assert d["peak_memory_bytes"] == truth["peak"], d["peak_memory_bytes"]
assert d["estimated"] is False and d["sampling_interval"] == 0, d
assert "estimate_errors" not in d
PY
mp stats e.bin
expect_rc 0 "stats (exact)"
if grep -q 'estimate\|Sampling' out; then fail_ "an exact capture's stats speak of estimates"; fi
exit 0
