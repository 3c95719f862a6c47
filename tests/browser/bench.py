#!/usr/bin/env python3
"""Sizes and timings of the HTML reports in headless Chromium (figures, not a test).

    bench.py [--templates DIR] [--out DIR] [--stacks N] [--frames-stacks N] [--rows-stacks N]

Prints, for a flame graph with N unique stacks (all shown: every random stack
leaks, leaks mode): the HTML size, its parts, and load-to-first-draw; for a
flame graph of about 200,000 frames: zoom, search, reset and resize redraw
times measured inside the page; for a table of about 200,000 rows: sort,
filter and scroll times; for a temporal graph: the window recomputation.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import cdp  # noqa: E402
import reportlib as R  # noqa: E402


def gen(out, *args):
    t = time.monotonic()
    subprocess.run([sys.executable, os.path.join(HERE, "gen_data.py"), "-o", out] + list(args), check=True)
    return time.monotonic() - t


def render(templates, report, data, out):
    subprocess.run([sys.executable, os.path.join(HERE, "render.py"), os.path.join(templates, report + ".html"),
                    data, out], check=True)
    return os.path.getsize(out)


def kib(n):
    return "%.0f KiB" % (n / 1024)


def load(browser, path, runs=3):
    """Best of a few loads: (first draw ms, first paint ms) after navigation start."""
    best = None
    for _ in range(runs):
        page = R.open_report(browser, path)
        t = page.evaluate("memprofDebug.timings()")
        fcp = page.evaluate("(performance.getEntriesByName('first-contentful-paint')[0] || {}).startTime || 0")
        res = (t["firstDraw"], t.get("firstFrame", 0), fcp)
        best = res if best is None or res[0] < best[0] else best
        browser.send("Target.closeTarget", {"targetId": page.target})
    return best


def print_rows(rows):
    """(what, figure) pairs as two aligned columns."""
    w = max(len(r[0]) for r in rows)
    for k, v in rows:
        print("%-*s  %s" % (w, k, v))


def timed(page, js):
    return page.evaluate("(function(){var t0=performance.now();%s;return performance.now()-t0;})()" % js)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--templates", default=os.path.join(HERE, "..", "..", "share", "templates"))
    ap.add_argument("--out", default="bench-html")
    ap.add_argument("--stacks", type=int, default=100000)
    ap.add_argument("--frames-stacks", type=int, default=120000, help="stacks for about 200,000 frames")
    ap.add_argument("--rows-stacks", type=int, default=250000, help="stacks for about 200,000 table rows")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    P = lambda n: os.path.abspath(os.path.join(a.out, n))
    rows = []

    src = sum(os.path.getsize(os.path.join(a.templates, f)) for f in os.listdir(a.templates)
              if f.endswith((".js", ".css")))
    rows.append(("templates: JS + CSS, unminified", kib(src)))

    gen(P("fg.json"), "--mode", "leaks", "--bulk-leak", "--stacks", str(a.stacks))
    d = json.load(open(P("fg.json"), encoding="utf-8"))
    size = render(a.templates, "flamegraph", P("fg.json"), P("fg.html"))
    parts = {k: len(json.dumps(d[k], ensure_ascii=False, separators=(",", ":")).encode()) for k in
             ("strings", "locations", "tree", "memory")}
    rows.append(("flame graph, %d unique stacks: nodes" % a.stacks, "{:,}".format(len(d["tree"]["depth"]))))
    rows.append(("  HTML size", "%s (%s bytes)" % (kib(size), "{:,}".format(size))))
    rows.append(("  of which strings / locations / tree / memory",
                 " / ".join(kib(parts[k]) for k in ("strings", "locations", "tree", "memory"))))
    gen(P("tp.json"), "--temporal", "--stacks", str(a.stacks), "--buckets", "1000")
    tsize = render(a.templates, "flamegraph", P("tp.json"), P("tp.html"))
    td = json.load(open(P("tp.json"), encoding="utf-8"))
    rows.append(("temporal flame graph, %d stacks, 1000 buckets: intervals" % a.stacks,
                 "{:,}".format(len(td["timeline"]["intervals"]["node"]))))
    rows.append(("  HTML size", "%s (%s bytes)" % (kib(tsize), "{:,}".format(tsize))))
    gen(P("big.json"), "--mode", "leaks", "--bulk-leak", "--stacks", str(a.frames_stacks))
    bd = json.load(open(P("big.json"), encoding="utf-8"))
    bsize = render(a.templates, "flamegraph", P("big.json"), P("big.html"))
    gen(P("rows.json"), "--report", "table", "--mode", "leaks", "--bulk-leak", "--split-threads",
        "--stacks", str(a.rows_stacks))
    rd = json.load(open(P("rows.json"), encoding="utf-8"))
    rsize = render(a.templates, "table", P("rows.json"), P("rows.html"))

    with cdp.Browser(artifacts=a.out, timeout=120, limit=1200) as b:
        rows.append(("browser", b.version))
        first, frame, fcp = load(b, P("fg.html"))
        rows.append(("  load to first draw / next frame / first contentful paint",
                     "%.0f / %.0f / %.0f ms" % (first, frame, fcp)))

        first, frame, fcp = load(b, P("big.html"))
        rows.append(("flame graph of %s frames (%s): load to first draw" % ("{:,}".format(len(bd["tree"]["depth"])),
                                                                           kib(bsize)), "%.0f ms" % first))
        page = R.open_report(b, P("big.html"))
        page.screenshot("bench-flamegraph")
        rect = page.evaluate("memprofDebug.frameRect('bulk_root')")
        x, y = R.center(rect)
        click = ("document.getElementById('fg-canvas').dispatchEvent(new MouseEvent('click',"
                 "{clientX:%f,clientY:%f,bubbles:true}))" % (x, y))
        rows.append(("  zoom (click to drawn)", "%.1f ms" % timed(page, click)))
        rows.append(("  redraw of the zoomed graph", "%.1f ms" % page.evaluate("memprofDebug.timings().lastDrawMs")))
        rows.append(("  reset zoom (Esc)", "%.1f ms" % timed(page, "document.dispatchEvent(new KeyboardEvent('keydown',{key:'Escape'}))")))
        search = ("var s=document.getElementById('fg-search');s.value='parse';"
                  "s.dispatchEvent(new KeyboardEvent('keydown',{key:'Enter'}))")
        rows.append(("  search 'parse' (match + totals + redraw)", "%.1f ms" % timed(page, search)))
        t = page.evaluate("memprofDebug.timings()")
        st = page.evaluate("memprofDebug.state()")
        rows.append(("    of which matching / drawing", "%.1f / %.1f ms (%s frames match)" %
                     (t["lastSearchMs"], t["lastDrawMs"], "{:,}".format(st["matchFrames"]))))
        page.send("Emulation.setDeviceMetricsOverride", {"width": 1000, "height": 900, "deviceScaleFactor": 1, "mobile": False})
        page.wait_for("document.getElementById('fg-canvas').clientWidth < 1000")
        page.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        rows.append(("  redraw after a resize", "%.1f ms" % page.evaluate("memprofDebug.timings().lastDrawMs")))
        b.send("Target.closeTarget", {"targetId": page.target})

        first, frame, fcp = load(b, P("tp.html"), runs=1)
        page = R.open_report(b, P("tp.html"))
        win = ("var e=document.getElementById('mp-win-end');e.value=400;e.dispatchEvent(new Event('input'))")
        page.evaluate(win)
        page.wait_for("memprofDebug.state().window[1] === 400")
        rows.append(("temporal (%s): load to first draw; recompute a window" % kib(tsize),
                     "%.0f ms; %.1f ms" % (first, page.evaluate("memprofDebug.timings().lastWindowMs"))))
        b.send("Target.closeTarget", {"targetId": page.target})

        first, frame, fcp = load(b, P("rows.html"), runs=1)
        rows.append(("table of %s rows (%s): load to first draw" % ("{:,}".format(len(rd["rows"]["bytes"])), kib(rsize)),
                     "%.0f ms" % first))
        page = R.open_report(b, P("rows.html"))
        for col in ("location", "count", "thread", "allocator", "size"):
            rows.append(("  sort by %s" % col, "%.0f ms" % timed(page, "document.getElementById('tb-sort-%s').click()" % col)))
        rows.append(("  filter 'copy'", "%.0f ms" % timed(page, "var f=document.getElementById('tb-filter');f.value='copy';"
                                                              "f.dispatchEvent(new Event('input'))")))
        page.wait_for("memprofDebug.state().query === 'copy'")
        rows.append(("    (debounced) filtered to", "{:,} rows".format(page.evaluate("memprofDebug.state().rows"))))
        page.evaluate("var f=document.getElementById('tb-filter');f.value='';f.dispatchEvent(new Event('input'))")
        page.wait_for("memprofDebug.state().query === ''")
        rows.append(("  scroll to the middle", "%.1f ms" % timed(
            page, "var s=document.getElementById('tb-scroll');s.scrollTop=s.scrollHeight/2;s.dispatchEvent(new Event('scroll'))")))
        page.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        rows.append(("    render of the visible rows", "%.1f ms" % page.evaluate("memprofDebug.timings().lastRenderMs")))
        page.screenshot("bench-table")
        page.check(allowed_requests=(R.url(P("rows.html")),))

    print_rows(rows)
    return 0


if __name__ == "__main__":
    cdp.run(main)
