"""The figures of a benchmark run, by name, against the last accepted ones
(bench/baseline.json) and against the targets of the open issues.

Every figure here is better lower. A figure more than 10% worse than the
baseline's is printed by name; `bench/run.py --save-baseline` writes the
figures of the run as the new baseline, for when its results are accepted
(and committed). Standard library only.
"""

import json
import os
import statistics
import subprocess
import time

# How much worse a figure may be before it is printed: the noise of a quiet machine.
WORSE = 0.10
# Figures of the heaptrack runs alone: not ours to keep from getting worse.
NOT_OURS = ("heaptrack_overhead", "heaptrack_overhead_4t", "heaptrack_bytes_per_event")
# Per-workload figures whose workload has fewer events are noise (or meaningless, e.g. gzip's).
MIN_EVENTS = 100000
# The collector's per-event CPU of a smaller workload is mostly its fixed costs (symbols).
COLLECTOR_MIN_EVENTS = 1000000

# Issue 28's targets: (figure, most it may be, what it says).
TARGETS = [
    ("map.vs_heaptrack_raw", 0.6, "map, memprof run / heaptrack --raw"),
    ("map.wall_vs_untracked", 2.0, "map, memprof run / untracked"),
    ("heavy-1t.vs_heaptrack_raw", 0.35, "heavy-1t, memprof run / heaptrack --raw"),
    ("heavy-4t.vs_heaptrack_raw", 0.40, "heavy-4t, memprof run / heaptrack --raw"),
    ("sqlite3.vs_heaptrack_raw", 0.5, "sqlite3, memprof run / heaptrack --raw"),
    ("python3.vs_heaptrack_raw", 0.9, "python3, memprof run / heaptrack --raw"),
    ("heavy-1t.prog_cpu_vs_untracked", 1.6, "heavy-1t, the program's own CPU / untracked"),
    ("heavy-2t.prog_cpu_vs_untracked", 1.6, "heavy-2t, the program's own CPU / untracked"),
    ("heavy-4t.prog_cpu_vs_untracked", 1.6, "heavy-4t, the program's own CPU / untracked"),
    ("collector_ns_per_event_max", 60, "the collector's CPU per event, ns (worst workload)"),
    # Issue 27: sampled tracking at the recommended interval (512 KiB).
    ("sampled_overhead_1t", 1.05, "heavy-1t, --sampling-interval 512k / untracked"),
    ("sampled_overhead_sqlite3", 1.05, "sqlite3, --sampling-interval 512k / untracked"),
    ("sampled_overhead_python3", 1.05, "python3, --sampling-interval 512k / untracked"),
    ("sampled_overhead_4t", 1.10, "heavy-4t, --sampling-interval 512k / untracked"),
]


def _med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def _ratios(a, b, key):
    return [x[key] / y[key] for x, y in zip(a, b) if x.get(key) and y.get(key)]


def collector_ns(m):
    """The CPU of a memprof run outside the program (its collector) per event, in ns."""
    if m.get("target_cpu_s") is None or not m.get("events"):
        return None
    return max(m["cpu_s"] - m["target_cpu_s"], 0.0) / m["events"] * 1e9


def figures(results, summary):
    """Every figure of a run by name: NAME.FIGURE per workload, and the last line's keys."""
    f = {}
    for name, (runs, analysis, _) in results.items():
        mem, native = runs.get("memprof"), runs.get("native")
        if not mem or not native:
            continue
        events = _med([m.get("events") for m in mem])
        f[name + ".wall_vs_untracked"] = _med(_ratios(mem, native, "wall_s"))
        f[name + ".cpu_vs_untracked"] = _med(_ratios(mem, native, "cpu_s"))
        f[name + ".prog_cpu_vs_untracked"] = _med(_ratios(mem, native, "target_cpu_s"))
        f[name + ".rss_vs_untracked"] = _med(_ratios(mem, native, "target_rss_mb"))
        if runs.get("heaptrack-raw"):
            f[name + ".vs_heaptrack_raw"] = _med(_ratios(mem, runs["heaptrack-raw"], "wall_s"))
            f[name + ".cpu_vs_heaptrack_raw"] = _med(_ratios(mem, runs["heaptrack-raw"], "cpu_s"))
        if events and events >= COLLECTOR_MIN_EVENTS:
            f[name + ".collector_ns_per_event"] = _med([collector_ns(m) for m in mem])
        if events and events >= MIN_EVENTS:
            f[name + ".bytes_per_event"] = _med([m["capture_bytes"] / m["events"] for m in mem
                                                 if m.get("capture_bytes") and m.get("events")])
            for rep in ("stats", "flamegraph", "table", "pprof"):
                rs = analysis.get(rep)
                if rs:
                    f["%s.%s_s_per_mevent" % (name, rep)] = _med([m["wall_s"] / m["events"] * 1e6
                                                                  for m in rs if m.get("events")])
                    if rep != "pprof" and analysis.get("heaptrack_print"):
                        f["%s.%s_vs_heaptrack_print" % (name, rep)] = _med(
                            _ratios(rs, analysis["heaptrack_print"], "wall_s"))
    for k, v in summary.items():
        if k not in NOT_OURS:
            f[k] = v
    return {k: v for k, v in f.items() if v is not None and v > 0}


def add_summary(results, s):
    """The last line's figures of issue 28 (its targets and the collector's CPU)."""
    def modes(wname):
        runs = results.get(wname, ({}, {}, []))[0]
        return runs.get("memprof"), runs.get("native"), runs.get("heaptrack-raw")
    mem, native, _ = modes("map")
    if mem and native:
        s["overhead_map"] = _med(_ratios(mem, native, "wall_s"))
    for wname, key in (("map", "vs_heaptrack_map"), ("sqlite3", "vs_heaptrack_sqlite3"),
                       ("python3", "vs_heaptrack_python3")):
        mem, _, raw = modes(wname)
        if mem and raw:
            s[key] = _med(_ratios(mem, raw, "wall_s"))
    mem, _, _ = modes("heavy-1t")
    if mem:
        s["collector_ns_per_event"] = _med([collector_ns(m) for m in mem])
    worst = []
    for name, (runs, _, _) in results.items():
        mem = runs.get("memprof")
        if mem and (_med([m.get("events") for m in mem]) or 0) >= COLLECTOR_MIN_EVENTS:
            worst.append(_med([collector_ns(m) for m in mem]))
    worst = [x for x in worst if x is not None]
    s["collector_ns_per_event_max"] = max(worst) if worst else None


def print_collector(results, p):
    """The collector's CPU per event, workload by workload."""
    p()
    p("The collector's CPU per event (cpu s of the run less the program's own, over its events; "
      "medians [min-max], ns; below a million events, its fixed costs show: not in the targets)")
    for name, (runs, _, _) in results.items():
        mem = runs.get("memprof")
        if not mem:
            continue
        xs = [x for x in (collector_ns(m) for m in mem) if x is not None]
        events = _med([m.get("events") for m in mem]) or 0
        if xs and events >= MIN_EVENTS:
            p("  %-20s %7.1f [%.1f-%.1f]  (%d events)" % (name, _med(xs), min(xs), max(xs), events))


def print_targets(figs, p):
    p()
    p("Targets (issues 28 and 27):")
    for key, most, what in TARGETS:
        v = figs.get(key)
        p("  %-58s %8s  at most %-5g %s" % (what, "-" if v is None else "%.3g" % v, most,
                                            "" if v is None else "met" if v <= most else "NOT MET"))


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        return None


def print_comparison(figs, quick, path, p):
    """Every figure more than WORSE worse than the baseline's, by name."""
    base = load(path)
    p()
    if base is None:
        p("No baseline to compare with ('%s' does not exist: --save-baseline writes one)." % path)
        return
    if bool(base.get("quick")) != bool(quick):
        p("The baseline '%s' is of a %s run: this %s run is not compared with it."
          % (path, "--quick" if base.get("quick") else "full", "--quick" if quick else "full"))
        return
    old = base["figures"]
    worse, compared = [], 0
    for k in sorted(figs):
        if k in old and old[k]:
            compared += 1
            change = figs[k] / old[k] - 1
            if change > WORSE:
                worse.append((k, old[k], figs[k], change))
    src = "'%s' (%s, %s, load %s)" % (path, base.get("commit", "?"), base.get("date", "?"),
                                      (base.get("machine") or {}).get("load_at_start", "?"))
    if not worse:
        p("No figure is more than %d%% worse than the baseline %s: %d compared."
          % (WORSE * 100, src, compared))
        return
    p("%d of %d figures are more than %d%% worse than the baseline %s:"
      % (len(worse), compared, WORSE * 100, src))
    for k, a, b, change in worse:
        p("  WORSE %-44s %10.4g -> %-10.4g (+%.0f%%)" % (k, a, b, change * 100))


def save(figs, quick, info, commit, path):
    with open(path, "w") as f:
        json.dump({"date": info.get("date", time.strftime("%Y-%m-%d %H:%M:%S")), "commit": commit,
                   "machine": {k: info.get(k) for k in ("cpu", "nproc", "kernel", "load_at_start",
                                                         "load_at_end")},
                   "quick": bool(quick), "figures": dict(sorted(figs.items()))}, f, indent=1)
        f.write("\n")


def git_commit(srcdir):
    """The source tree's commit, '?' when it is not a git checkout."""
    try:
        r = subprocess.run(["git", "-C", srcdir, "rev-parse", "--short", "HEAD"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "?"
    return r.stdout.decode().strip() if r.returncode == 0 else "?"
