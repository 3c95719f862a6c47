"""Sampled tracking (issue 27): what it costs and how far its estimates are.

Cost: heavy-1t, heavy-4t, sqlite3 and python3 also run under `memprof run
--sampling-interval 512k` (mode "sampled", interleaved with the others by
bench/run.py); the table gives the wall time and the program's own CPU
against the untracked run, the capture's size and the collector's CPU (the
run's CPU less the program's). A synthetic workload's estimates are checked
against what it did: its bytes within 5 standard errors (the capture's own,
from memprof stats --json), else the benchmark is void.

Accuracy: tests/workloads/sampled.c (built as bench/sampled) under 20 seeds
at the same interval: for each site, the relative error of its estimate
(bytes allocated, leaked, the peak), its mean and standard deviation over the
seeds, against the standard deviation the Poisson model predicts
(sum of s^2 (1 - p) / p over the site's blocks, p = 1 - e^(-(s+1)/N)).
"""
import csv
import json
import math
import os
import statistics
import subprocess

INTERVAL = "512k"
INTERVAL_BYTES = 512 * 1024
MODE = "sampled"
LABEL = "sampled " + INTERVAL
# The programs of one thread run sampled with --no-control too: no thread of the tracker's in them.
MODE_NC = "sampled-nc"
LABEL_NC = LABEL + " --no-control"
WORKLOADS_NC = {"heavy-1t": "1t", "sqlite3": "sqlite3", "python3": "python3"}
# The workloads run sampled too, and the last line's key of each.
WORKLOADS = {"heavy-1t": "1t", "heavy-4t": "4t", "sqlite3": "sqlite3", "python3": "python3"}


def argv(memprof, cap, memprof_args, program, no_control=False):
    return ([memprof, "run", "-q", "-f", "--sampling-interval", INTERVAL] + (["--no-control"] if no_control else [])
            + list(memprof_args) + ["-o", cap] + program)


def check_capture(w, d, native, expected_counts, error):
    """A sampled capture of a synthetic workload: its estimates near what it did."""
    if d.get("lost_events") or d.get("truncated") or not d.get("estimated"):
        raise error("%s sampled: lost %s events, truncated %s, estimated %s"
                    % (w.name, d.get("lost_events"), d.get("truncated"), d.get("estimated")))
    if d.get("exit_status") != native["exit"]:
        raise error("%s sampled: the capture records exit status %s, the program exited %d"
                    % (w.name, d.get("exit_status"), native["exit"]))
    if not w.expect_counts:
        return
    want = sum(c["bytes"] for c in expected_counts(native["out"]).values())
    got = sum(t["total_bytes"] for t in d["threads"] if t["name"].startswith("bench-"))
    sd = d["estimate_errors"]["total_bytes_allocated"]
    if abs(got - want) > 5 * sd + 1:
        raise error("%s sampled: %d bytes estimated, the workload allocated %d (standard error %d)"
                    % (w.name, got, want, sd))


def collector_cpu(m):
    return max(m["cpu_s"] - m["target_cpu_s"], 0.0) if m.get("target_cpu_s") is not None else None


def _med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def _ratios(a, b, key):
    return [x[key] / y[key] for x, y in zip(a, b) if x.get(key) and y.get(key)]


def add_summary(results, s):
    for wname, key in WORKLOADS.items():
        runs = results.get(wname, ({}, {}, []))[0]
        smp, native = runs.get(MODE), runs.get("native")
        if not smp or not native:
            continue
        s["sampled_overhead_" + key] = _med(_ratios(smp, native, "wall_s"))
        s["sampled_prog_cpu_" + key] = _med(_ratios(smp, native, "target_cpu_s"))
        s["sampled_cap_mb_" + key] = _med([m["capture_bytes"] / 1e6 for m in smp if m.get("capture_bytes")])
        s["sampled_collector_cpu_s_" + key] = _med([collector_cpu(m) for m in smp])
    for wname, key in WORKLOADS_NC.items():
        runs = results.get(wname, ({}, {}, []))[0]
        smp, native = runs.get(MODE_NC), runs.get("native")
        if smp and native:
            s["sampled_nc_overhead_" + key] = _med(_ratios(smp, native, "wall_s"))
            s["sampled_nc_prog_cpu_" + key] = _med(_ratios(smp, native, "target_cpu_s"))


def print_table(results, p):
    rows = [(w, results[w][0], MODE) for w in WORKLOADS if w in results and results[w][0].get(MODE)]
    rows += [(w + " (nc)", results[w][0], MODE_NC) for w in WORKLOADS_NC
             if w in results and results[w][0].get(MODE_NC)]
    if not rows:
        return
    row = "%-13s %-22s %-22s %-22s %9s %9s %10s %9s"
    p()
    p("Sampled tracking (memprof run --sampling-interval %s; medians [min-max] of per-repetition ratios)" % INTERVAL)
    p(row % ("workload", "wall vs untracked", "prog cpu vs untr.", "wall vs memprof run", "cap MB",
             "events", "coll. cpu s", "vs full"))
    for w, runs, mode in rows:
        smp, native, full = runs[mode], runs["native"], runs.get("memprof")
        fr = lambda xs: "-" if not xs else "%.3f [%.3f-%.3f]" % (_med(xs), min(xs), max(xs))
        cap = _med([m["capture_bytes"] / 1e6 for m in smp if m.get("capture_bytes")])
        full_cap = _med([m["capture_bytes"] / 1e6 for m in full if m.get("capture_bytes")]) if full else None
        coll = _med([collector_cpu(m) for m in smp])
        p(row % (w, fr(_ratios(smp, native, "wall_s")), fr(_ratios(smp, native, "target_cpu_s")),
                 fr(_ratios(smp, full, "wall_s")) if full else "-", "%.3f" % cap if cap is not None else "-",
                 "%d" % _med([m.get("events") for m in smp]), "%.3f" % coll if coll is not None else "-",
                 "%.4f" % (cap / full_cap) if cap and full_cap else "-"))
    p("  (cap MB: the capture; coll. cpu s: the run's CPU less the program's own; vs full: the capture "
      "against memprof run's; (nc): with --no-control, no thread of the tracker's in the program)")


# ---- accuracy ------------------------------------------------------------------

def _pi(s, n):
    return 1.0 if s >= n else -math.expm1(-(s + 1) / n)


def _var(blocks, n):
    return sum(k * s * s * (1 - _pi(s, n)) / _pi(s, n) for s, k in blocks)


def accuracy(cfg, log, seeds=20):
    """Estimates of bench/sampled under `seeds` seeds; rows of per-site figures."""
    exe = os.path.join(cfg.builddir, "bench", "sampled")
    na, nb = (1000000, 30000) if cfg.quick else (10000000, 100000)
    if cfg.quick:
        seeds = min(seeds, 5)
    n = INTERVAL_BYTES
    got = {}
    truth = None
    for seed in range(1, seeds + 1):
        cap = os.path.join(cfg.workdir, "accuracy.mprof")
        env = dict(os.environ, MEMPROF_SAMPLING_SEED=str(seed))
        r = subprocess.run(argv(cfg.memprof, cap, [], [exe, "-a", str(na), "-b", str(nb)]),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=cfg.workdir)
        if r.returncode:
            raise RuntimeError("memprof run bench/sampled (seed %d): %s" % (seed, r.stderr.decode()[-300:]))
        truth = dict((k, int(v)) for k, v in (l.split() for l in r.stdout.decode().splitlines()))
        d = json.loads(subprocess.run([cfg.memprof, "stats", "--json", "-n", "20", "-o", "-", cap],
                                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True).stdout)
        leaks = subprocess.run([cfg.memprof, "transform", "csv", "--leaks", "-o", "-", cap],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True).stdout.decode()
        os.unlink(cap)

        def site(prefix):
            return sum(e["size"] for e in d["top_allocations_by_size"] if e["function"] == prefix)
        leaked = {}
        for row in csv.DictReader(leaks.splitlines()):
            fn = row["stack_trace"].split(";", 1)[0]
            leaked[fn] = leaked.get(fn, 0) + int(row["size"])
        values = {"site_small_a bytes": site("site_small_a"), "site_small_b bytes": site("site_small_b"),
                  "site_large bytes": site("site_large"), "site_realloc bytes": site("site_realloc"),
                  "site_map bytes": site("site_map"), "site_small_a leaked": leaked.get("site_small_a", 0),
                  "leaked": d["leaked_bytes"], "peak": d["peak_memory_bytes"]}
        for k, v in values.items():
            got.setdefault(k, []).append(v)
        log("  accuracy: seed %d of %d" % (seed, seeds))
    a_blocks = [(48, truth["small_a_count"])]
    b_blocks = [(s, truth["small_b_count"] // 5) for s in (24, 100, 400, 1000, 3000)]
    kept = [(48, truth["small_a_leaked_count"])]
    want = {"site_small_a bytes": (truth["small_a_allocated"], _var(a_blocks, n)),
            "site_small_b bytes": (truth["small_b_allocated"], _var(b_blocks, n)),
            "site_large bytes": (truth["large_allocated"], 0.0),
            "site_realloc bytes": (truth["realloc_allocated"],
                                   _var([(16, na // 10), (64, na // 10), (256, na // 10)], n)),
            "site_map bytes": (truth["map_allocated"],
                               _var([(4096, 3 * (na // 500)), (12288, na // 500), (8192, na // 500)], n)),
            "site_small_a leaked": (truth["small_a_leaked"], _var(kept, n)),
            "leaked": (truth["leaked"], _var(kept, n)),
            "peak": (truth["peak"], _var(kept + b_blocks, n))}
    rows = []
    for k, (t, var) in want.items():
        errs = [(v - t) / t for v in got[k]]
        rows.append({"figure": k, "truth": t, "seeds": len(errs), "mean_error": statistics.mean(errs),
                     "sd_error": statistics.stdev(errs) if len(errs) > 1 else 0.0,
                     "predicted_sd": math.sqrt(var) / t,
                     "max_abs_z": max(abs(v - t) for v in got[k]) / math.sqrt(var) if var else
                     max(abs(v - t) for v in got[k])})
    return {"interval": INTERVAL_BYTES, "a": na, "b": nb, "rows": rows}


def print_accuracy(acc, p):
    if not acc:
        return
    row = "%-22s %14s %12s %10s %14s %10s"
    p()
    p("Sampling accuracy (bench/sampled -a %d -b %d, --sampling-interval %s, %d seeds): relative errors of"
      % (acc["a"], acc["b"], INTERVAL, acc["rows"][0]["seeds"]))
    p("the estimates; 'predicted' is the Poisson model's standard deviation; max |z| the worst error over it")
    p(row % ("figure", "truth (bytes)", "mean error", "SD", "predicted SD", "max |z|"))
    for r in acc["rows"]:
        p(row % (r["figure"], "{:,}".format(r["truth"]), "%+.2f%%" % (100 * r["mean_error"]),
                 "%.2f%%" % (100 * r["sd_error"]), "%.2f%%" % (100 * r["predicted_sd"]),
                 "%.2f" % r["max_abs_z"] if r["predicted_sd"] else ("exact" if r["max_abs_z"] == 0 else
                                                                    "off by %d" % r["max_abs_z"])))


def add_accuracy_summary(acc, s):
    if not acc:
        return
    zs = [r["max_abs_z"] for r in acc["rows"] if r["predicted_sd"]]
    s["sampling_max_z"] = max(zs) if zs else None
    s["sampling_exact_off"] = sum(r["max_abs_z"] for r in acc["rows"] if not r["predicted_sd"])
