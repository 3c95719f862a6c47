#!/usr/bin/env python3
"""Browser checks of reports written by memprof itself (memprof flamegraph / table).

    check_capture.py SCENARIO [--artifacts DIR] [--shot NAME] [--names A,B] [--zoom NAME]
                     [--search QUERY] [--thread N] [--thread-names A,B] PAGE.html

The expected picture comes from the data embedded in the page (read here
with Python, independently of the page's code), so any capture works:

flamegraph: no console error; the frames drawn are those the data gives
            for the canvas width; every --names entry is drawn; clicking
            --zoom zooms (the frames drawn change to that subtree, the URL
            fragment names it, history goes back); --search totals the
            matches and colours them; --thread N shows one thread's tree;
            the thread selector offers each --thread-names entry, as the
            data names the thread ("NAME (tid N)"), and choosing it draws
            that thread's tree.
table:      no console error; the rows drawn in the default order (size,
            descending); every --names entry is listed; every column sorts
            both ways (checked through the whole order); filtering by the
            first --names entry.
temporal:   the full window gives the tree and draws --names; the window of
            the buckets that end by --until-us gives the peak (or leaks)
            the data says, --window-bytes in all, draws --window-names
            and none of --names but those.
hostile:    the hostile name </script><script>alert(1)</script> is drawn
            (flame graph, and in the tooltip) or listed (table, found by
            filtering) and in the page as text, as is every --names entry;
            nothing was injected, no dialog opened.
A screenshot of each page is kept (--shot NAME).
"""
import argparse
import json
import os

import cdp
import check_flamegraph as CF
import check_table as CT
import expect as X
import report_data
import reportlib as R
from reportlib import equal, expect


def names_of(a):
    return [n for n in (a.names or "").split(",") if n]


def shown_tree(rep):
    """The tree the page shows at load: a Python program's folded, unless --all-frames."""
    tree = X.Tree.of(rep)
    fold = rep.d.get("fold")
    return tree.folded() if fold and not fold["all_frames"] else tree


def flamegraph(browser, a, page, d):
    rep = X.Report(d)
    tree = shown_tree(rep)
    expect("flame graph" in page.evaluate("document.title"), "title %r" % page.evaluate("document.title"))
    if a.thread is not None:
        page.evaluate("(function(s){s.value='%d';s.dispatchEvent(new Event('change'));})"
                      "(document.getElementById('fg-thread'))" % a.thread)
        page.wait_for("memprofDebug.state().thread === %d" % a.thread, what="thread %d" % a.thread)
        tree = tree.only(a.thread)
    elif tree.thread:
        tree = tree.merged()
    if a.thread_names:
        threads(page, rep, a.thread_names.split(","), a.shot)
    initial = CF.frames(page)
    CF.expect_drawn(page, tree, 0, "at load")
    # The chart's time axis ends at the last sample, not at the end of the process.
    ts = d["memory"]["time_us"] + (d["base_memory"]["time_us"][-1:] if d.get("base_memory") else [])
    if ts and not d.get("temporal"):
        equal(page.evaluate("memprofDebug.chart()")["xmax"], max(max(ts), d["meta"].get("peak_time_us", 0)),
              "the end of the chart's time axis")
    for name in names_of(a):
        expect(CF.drawn_as(name, initial), "%r is not drawn; drawn: %s" % (name, sorted(set(initial))))
    page.screenshot(a.shot)
    if a.zoom:
        CF.click_frame(page, a.zoom)
        page.wait_for("memprofDebug.state().zoom > 0", what="zoom into %r" % a.zoom)
        z = CF.state(page)["zoom"]
        expect(z in tree.find(a.zoom), "zoomed into node %d, not a %r node" % (z, a.zoom))
        CF.expect_drawn(page, tree, z, "zoomed into %r" % a.zoom)
        expect(sorted(CF.frames(page)) != sorted(initial), "zooming into %r changed nothing" % a.zoom)
        expect(page.evaluate("location.hash").endswith("zoom=%d" % z), "fragment after zoom")
        page.screenshot(a.shot + "-zoomed")
        page.evaluate("history.back()")
        CF.wait_zoom(page, 0)
        equal(CF.frames(page), initial, "frames after history.back()")
    if a.search:
        hit = sorted(n for n in set(CF.frames(page)) if a.search.lower() in n.lower())
        expect(hit, "no frame drawn matches %r" % a.search)
        # The widest match, whose colour is sampled inside its box.
        rects = [page.evaluate("memprofDebug.frameRect(%s)" % json.dumps(n)) for n in hit[:200]]
        name = hit[max(range(len(rects)), key=lambda i: rects[i]["width"] if rects[i] else -1)]
        r = CF.frame_rect(page, name)
        before = CF.pixel(page, r["x"] + 1, r["y"] + 2)
        got = CF.search(page, tree, a.search)
        expect(got[0] > 0, "search %r matched nothing" % a.search)
        equal(CF.pixel(page, r["x"] + 1, r["y"] + 2), CF.css_rgb(page, "--match"), "colour of a match")
        expect(before != CF.css_rgb(page, "--match"), "%r had the match colour before the search" % a.search)
        page.screenshot(a.shot + "-search")
        page.key("Escape")
        page.wait_for("memprofDebug.state().query === ''", what="Esc to clear the search")


def threads(page, rep, names, shot):
    opts = page.evaluate("Array.from(document.querySelectorAll('#fg-thread option'))"
                         ".map(o => [o.value, o.textContent])")
    labels = [t for _, t in opts]
    for name in names:
        t = [i for i in range(len(rep.tids)) if rep.tnames[i] == name]
        equal(len(t), 1, "threads named %r in the data" % name)
        expect(rep.thread_label(t[0]) in labels, "%r is not a choice of the thread selector: %r" % (name, labels))
        expect(labels[[v for v, _ in opts].index(str(t[0]))].startswith(name + " (tid "),
               "the choice of thread %d is not named %r: %r" % (t[0], name, labels))
        page.evaluate("(function(s){s.value='%d';s.dispatchEvent(new Event('change'));})"
                      "(document.getElementById('fg-thread'))" % t[0])
        page.wait_for("memprofDebug.state().thread === %d" % t[0], what="thread %r" % name)
        CF.expect_drawn(page, shown_tree(rep).only(t[0]), 0, "thread %r" % name)
    page.screenshot(shot + "-thread")
    page.evaluate("(function(s){s.value='all';s.dispatchEvent(new Event('change'));})"
                  "(document.getElementById('fg-thread'))")
    page.wait_for("memprofDebug.state().thread === -1", what="all threads again")


def table(browser, a, page, d):
    t = X.Table(X.Report(d))
    expect("table" in page.evaluate("document.title"), "title")
    order = t.order("size", True)
    CT.expect_rows(page, t, order, "default order")
    listed = [t.text("location", i) for i in range(t.n)]
    for name in names_of(a):
        expect(any(l.startswith(name + " at ") or l == name for l in listed), "%r is not listed" % name)
    page.screenshot(a.shot)
    for col in t.cols:
        st = CT.sort_by(page, col)
        CT.expect_rows(page, t, t.order(col, st["desc"]), "sorted by " + col)
        st = CT.sort_by(page, col)
        CT.expect_rows(page, t, t.order(col, st["desc"]), "sorted by %s again" % col)
    expect(t.order("location", False) != t.order("size", True) or t.n < 2, "the data: sorting changes nothing")
    page.screenshot(a.shot + "-sorted")
    if names_of(a):
        st = CT.sort_by(page, "size")
        q = names_of(a)[0]
        CT.filter_rows(page, q)
        CT.expect_rows(page, t, t.order("size", st["desc"], t.filter(q)), "filter %r" % q)


def temporal(browser, a, page, d):
    rep = X.Report(d)
    nb = len(d["timeline"]["hwm_bytes"])
    equal(CF.state(page)["window"], [0, nb - 1], "initial window")
    full = CF.expect_window(page, d, rep, [0, nb - 1], "full range")
    equal(full.bytes, X.Tree.of(rep).bytes, "the data: the intervals over the full range give the tree")
    for name in names_of(a):
        expect(CF.drawn_as(name, CF.frames(page)), "%r is not drawn for the full range" % name)
    page.screenshot(a.shot)
    if a.until_us is not None:
        bu = d["timeline"]["bucket_us"]
        last = max([b for b in range(nb) if bu[b + 1] <= a.until_us] or [0])
        win = CF.expect_window(page, d, rep, CF.set_window(page, 0, last)["window"], "window until %d us" % a.until_us)
        drawn = CF.frames(page)
        for name in (a.window_names or "").split(","):
            expect(not name or CF.drawn_as(name, drawn), "%r is not drawn in the window; drawn: %s" % (name, sorted(set(drawn))))
        for name in names_of(a):
            expect(not CF.drawn_as(name, drawn) or name in (a.window_names or "").split(","),
                   "%r is still drawn in the window" % name)
        if a.window_bytes is not None:
            equal(win.bytes[0], a.window_bytes, "the window's total")
        page.screenshot(a.shot + "-window")


def hostile(browser, a, page, d):
    rep = X.Report(d)
    if d["report"] == "table":
        t = X.Table(rep)
        CT.expect_rows(page, t, t.order("size", True), "default order")
        CT.filter_rows(page, "<script>")
        rows = t.order("size", True, t.filter("<script>"))
        expect(rows, "the data: no row matches '<script>'")
        CT.expect_rows(page, t, rows, "filter '<script>'")
        cells = page.evaluate("Array.from(document.querySelectorAll('#tb-scroll [role=row]:not([hidden]) "
                              "[role=cell]:last-child')).map(c => c.textContent)")
        expect(any(c.startswith(X.HOSTILE + " at ") for c in cells), "hostile location cells %r" % cells)
    else:
        expect(X.HOSTILE in CF.frames(page), "the hostile name is not drawn")
        CF.expect_drawn(page, X.Tree.of(rep), 0, "at load")
        page.mouse("mouseMoved", *R.center(CF.frame_rect(page, X.HOSTILE)))
        tip = page.wait_for("memprofDebug.tooltip()", what="the tooltip of the hostile frame")
        node = max(X.Tree.of(rep).find(X.HOSTILE), key=lambda i: X.Tree.of(rep).bytes[i])
        loc = X.Tree.of(rep).loc[node]
        expect(tip.startswith(X.HOSTILE + rep.file_line(loc) + "\n" + rep.module[loc] + "\n"), "tooltip %r" % tip)
        equal(page.evaluate("document.getElementById('mp-tooltip').children.length"), 1, "tooltip elements")
    for name in names_of(a):
        expect(name in page.evaluate("document.body.textContent") or CF.drawn_as(name, CF.frames(page)),
               "%r is not in the page" % name)
    R.hostile_is_text(page)
    page.screenshot(a.shot)


SCENARIOS = {"flamegraph": flamegraph, "table": table, "temporal": temporal, "hostile": hostile}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("scenario", choices=sorted(SCENARIOS))
    ap.add_argument("--artifacts", default="artifacts")
    ap.add_argument("--shot", default="page")
    ap.add_argument("--names")
    ap.add_argument("--zoom")
    ap.add_argument("--search")
    ap.add_argument("--thread", type=int)
    ap.add_argument("--thread-names", help="flamegraph: choices of the thread selector")
    ap.add_argument("--until-us", type=int, help="temporal: a window of the buckets ending by then")
    ap.add_argument("--window-names", help="temporal: drawn in that window")
    ap.add_argument("--window-bytes", type=int, help="temporal: that window's total")
    ap.add_argument("page")
    a = ap.parse_args()
    path = os.path.abspath(a.page)
    d = report_data.page_data(path)

    def run():
        with cdp.Browser(artifacts=a.artifacts) as browser:
            page = R.open_report(browser, path)
            SCENARIOS[a.scenario](browser, a, page, d)
            page.check(allowed_requests=(R.url(path),))
    cdp.run(run)


if __name__ == "__main__":
    main()
