"""The HTML reports of a big capture (issue 16), for bench/run.py.

Captures `alloc-heavy` with PAIRS malloc/free pairs (the default, 25 million
pairs, makes 50 million events: the most stacks and sizes of the bench set),
has memprof write its flame graph, temporal flame graph (peak and leaks) and
table, and loads each page in headless Chromium with the browser tests'
harness (tests/browser/cdp.py). Reports, for each page: memprof's wall time
and peak memory, the page's size, the time from navigation to the page's
first draw and from asking for a tab to that draw seen from outside (best
of three loads), and the JavaScript heap then.
"""
import os
import subprocess
import sys

REPORTS = [
    ("flamegraph", ["flamegraph"]),
    ("flamegraph --temporal", ["flamegraph", "--temporal"]),
    ("flamegraph --temporal --leaks", ["flamegraph", "--temporal", "--leaks"]),
    ("table", ["table"]),
]


def browser_module(srcdir):
    """tests/browser's harness, or None (with the reason) when Chromium is missing."""
    sys.path.insert(0, os.path.join(srcdir, "tests", "browser"))
    try:
        import cdp  # noqa: F401
    except ImportError as e:
        return None, str(e)
    if not cdp.find_chromium():
        return None, "chromium is not installed"
    return cdp, None


def load(cdp, browser, path, runs=3):
    """Best of a few loads: (first draw ms after navigation start, the same seen from
    outside: ms from asking for a new tab to the page's first draw, JS heap MB then)."""
    import pathlib
    import time
    best = None
    for _ in range(runs):
        t0 = time.monotonic()
        page = browser.open(pathlib.Path(path).as_uri())
        page.wait_for("window.memprofDebug && memprofDebug.timings().firstDraw && "
                      "document.readyState === 'complete'", what="the page to draw", timeout=120)
        opened = (time.monotonic() - t0) * 1e3
        page.check(allowed_requests=(pathlib.Path(path).as_uri(),))
        first = page.evaluate("memprofDebug.timings().firstDraw")
        # performance.memory is rounded unless Chromium runs with precise memory info
        heap = page.send("Runtime.getHeapUsage")["usedSize"] / 1e6
        browser.send("Target.closeTarget", {"targetId": page.target})
        if best is None or opened < best[1]:
            best = (first, opened, heap)
    return best


def run(cfg, launch, log, pairs):
    """Capture, report and load; returns {report: {...}} and the capture's figures."""
    heavy = os.path.join(cfg.builddir, "bench", "alloc-heavy")
    cap = os.path.join(cfg.workdir, "scale.mprof")
    log("html at scale: capturing alloc-heavy -n %d (%d events)" % (pairs, 2 * pairs))
    m = launch(cfg, [cfg.memprof, "run", "-q", "-f", "-o", cap, heavy, "-n", str(pairs), "-t", "1"],
               "scale.capture")
    if m["exit"] != 0:
        raise RuntimeError("memprof run of alloc-heavy failed: %s" % open(m["err"]).read()[-300:])
    info = {"pairs": pairs, "events": 2 * pairs, "capture_bytes": os.path.getsize(cap), "reports": {},
            "capture_wall_s": m["wall_s"]}
    # issue 13: the same run aggregated in the collector, whose size depends on the stacks only
    agg = os.path.join(cfg.workdir, "scale.agg.mprof")
    log("aggregated: capturing alloc-heavy -n %d with --aggregate" % pairs)
    a = launch(cfg, [cfg.memprof, "run", "--aggregate", "-q", "-f", "-o", agg, heavy, "-n", str(pairs),
                     "-t", "1"], "scale.aggregate")
    if a["exit"] != 0:
        raise RuntimeError("memprof run --aggregate failed: %s" % open(a["err"]).read()[-300:])
    info["aggregate_bytes"], info["aggregate_wall_s"] = os.path.getsize(agg), a["wall_s"]
    if not cfg.keep:
        os.unlink(agg)
    pages = []
    for name, args in REPORTS:
        html = os.path.join(cfg.workdir, "scale.%s.html" % "-".join(a.strip("-") for a in args))
        r = launch(cfg, [cfg.memprof] + args + ["-f", "-o", html, cap], "scale." + args[0])
        if r["exit"] != 0:
            raise RuntimeError("memprof %s failed: %s" % (name, open(r["err"]).read()[-300:]))
        info["reports"][name] = {"wall_s": r["wall_s"], "rss_mb": r["tree_rss_mb"],
                                 "html_bytes": os.path.getsize(html)}
        pages.append((name, html))
        log("  %s: %.2f s, %.1f MB of HTML" % (name, r["wall_s"], os.path.getsize(html) / 1e6))
    cdp, why = browser_module(cfg.srcdir)
    if cdp is None:
        info["browser"] = "not measured: %s" % why
    else:
        with cdp.Browser(artifacts=os.path.join(cfg.workdir, "chromium"), timeout=120, limit=1200) as b:
            info["browser"] = b.version
            for name, html in pages:
                first, opened, heap = load(cdp, b, html)
                info["reports"][name].update(load_ms=first, open_ms=opened, js_heap_mb=heap)
    if not cfg.keep:
        for _, html in pages:
            os.unlink(html)
        os.unlink(cap)
    return info


def print_table(info, p):
    p()
    p("HTML reports of a %d-event capture (alloc-heavy -n %d, %.1f MB; %s)"
      % (info["events"], info["pairs"], info["capture_bytes"] / 1e6, info.get("browser", "?")))
    if "aggregate_bytes" in info:
        p("The same program with --aggregate: a %d-byte capture (%.3f MB), %.2f s against %.2f s for the full one"
          % (info["aggregate_bytes"], info["aggregate_bytes"] / 1e6, info["aggregate_wall_s"],
             info["capture_wall_s"]))
    row = "%-30s %8s %9s %10s %13s %9s %12s"
    p(row % ("report", "wall s", "peak MB", "HTML MB", "first draw ms", "open ms", "JS heap MB"))
    p("-" * len(row % ("", "", "", "", "", "", "")))
    for name, r in info["reports"].items():
        p(row % (name, "%.2f" % r["wall_s"], "%.1f" % r["rss_mb"], "%.2f" % (r["html_bytes"] / 1e6),
                 "%.0f" % r["load_ms"] if "load_ms" in r else "-",
                 "%.0f" % r["open_ms"] if "open_ms" in r else "-",
                 "%.1f" % r["js_heap_mb"] if "js_heap_mb" in r else "-"))
    p("(first draw: from navigation start to the page's first draw, by the page's clock; open: from")
    p("asking Chromium for a new tab to seeing that draw done, from outside; each the best of 3 loads)")
