#!/usr/bin/env python3
"""Browser checks of the flame graph page.

    check_flamegraph.py basic|threads|temporal [--artifacts DIR] PAGE.html DATA.json ...

basic:    one peak report: frames drawn, zoom by click and by keyboard, history,
          Esc and reset, search totals and highlight, tooltip, orientation,
          theme, statistics, the hostile name, memory CSV (hook and download).
threads:  a --split-threads report (thread filter, merged view) and an
          --inverted one.
temporal: a temporal peak report and a temporal leaks report: time windows
          set by keyboard, by the sliders and by dragging on the chart.
"""
import json
import os
import re

import expect as X
import reportlib as R
from reportlib import equal, expect


def frames(page):
    return page.evaluate("memprofDebug.visibleFrames()")


def drawn_as(name, labels):
    """Whether a frame of function name is among the labels drawn (X.is_label)."""
    return any(X.is_label(label, name) for label in labels)


def state(page):
    return page.evaluate("memprofDebug.state()")


def width(page):
    return page.evaluate("document.getElementById('fg-canvas').clientWidth")


def frame_rect(page, name):
    r = page.evaluate("memprofDebug.frameRect(%s)" % json.dumps(name))
    expect(r, "frame %r is not drawn" % name)
    if r["y"] < 0 or r["y"] + r["height"] > page.b.height:
        page.evaluate("window.scrollBy(0, %d)" % (r["y"] - page.b.height / 2))
        r = page.evaluate("memprofDebug.frameRect(%s)" % json.dumps(name))
    return r


def click_frame(page, name):
    page.click(*R.center(frame_rect(page, name)))


def pixel(page, x, y):
    return page.evaluate(
        "(function(){var c=document.getElementById('fg-canvas'),r=c.getBoundingClientRect(),s=devicePixelRatio;"
        "var d=c.getContext('2d').getImageData(Math.round((%f-r.left)*s),Math.round((%f-r.top)*s),1,1).data;"
        "return [d[0],d[1],d[2]];})()" % (x, y))


def css_rgb(page, var):
    h = page.evaluate("getComputedStyle(document.documentElement).getPropertyValue('%s').trim()" % var)
    return [int(h[i:i + 2], 16) for i in (1, 3, 5)]


def expect_drawn(page, tree, z, what):
    equal(sorted(frames(page)), tree.drawn(z, width(page)), "frames drawn " + what)


def wait_zoom(page, z):
    page.wait_for("memprofDebug.state().zoom === %d" % z, what="zoom on node %d" % z)


def search(page, tree, query):
    page.evaluate("document.getElementById('fg-search').focus()")
    page.evaluate("document.getElementById('fg-search').select()")
    page.type_text(query)
    page.wait_for("memprofDebug.state().query === %s" % json.dumps(query.strip().lower()), what="search %r" % query)
    info = page.evaluate("document.getElementById('fg-search-info').textContent")
    m = re.match(r"^([\d,]+) matching frames? \u00b7 .* = ([\d,]+) B \u00b7 ", info)
    expect(m, "search info %r" % info)
    got = (int(m.group(1).replace(",", "")), int(m.group(2).replace(",", "")))
    equal(got, tree.search(query), "search %r: (frames, bytes)" % query)
    return got


def basic(browser, a):
    path, data = a.pairs[0]
    d = X.load(data)
    rep = X.Report(d)
    tree = X.Tree.of(rep)
    page = R.open_report(browser, path)
    expect("flame graph: peak memory" in page.evaluate("document.title"), "title")
    equal(tree.bytes[0], d["meta"]["peak_bytes"], "the data: root is the peak")
    initial = frames(page)
    expect_drawn(page, tree, 0, "at load")
    for name in ("main", "worker_loop", "cache_insert", X.HOSTILE, "run_server", "init_config"):
        expect(name in initial, "%r is not drawn" % name)
    page.screenshot("flamegraph")

    # Zoom by click; the fragment names the node; back and forward.
    wl = tree.find("worker_loop")[0]
    click_frame(page, "worker_loop")
    wait_zoom(page, wl)
    equal(page.evaluate("location.hash"), "#zoom=%d" % wl, "fragment after zoom")
    expect_drawn(page, tree, wl, "zoomed into worker_loop")
    expect("init_config" not in frames(page), "init_config still drawn after zooming into worker_loop")
    page.screenshot("flamegraph-zoomed")
    page.evaluate("history.back()")
    wait_zoom(page, 0)
    equal(frames(page), initial, "frames after history.back()")
    page.evaluate("history.forward()")
    wait_zoom(page, wl)
    expect_drawn(page, tree, wl, "after history.forward()")
    page.key("Escape")
    wait_zoom(page, 0)
    click_frame(page, "cache_insert")
    wait_zoom(page, tree.find("cache_insert")[0])
    R.click_element(page, "#fg-reset")
    wait_zoom(page, 0)
    equal(frames(page), initial, "frames after reset")

    # Keyboard: focus the graph, walk down twice and right once, Enter zooms.
    page.evaluate("document.getElementById('fg-canvas').focus()")
    node = tree.children[tree.children[0][0]][0]
    node = tree.children[tree.parent[node]][1]
    for k in ("Home", "ArrowDown", "ArrowDown", "ArrowRight"):
        page.key(k)
    said = page.evaluate("document.getElementById('mp-announce').textContent")
    expect(said.startswith(rep.name(tree.loc[node]) + ", "), "keyboard focus announced %r" % said)
    page.key("Enter")
    wait_zoom(page, node)
    page.key("Escape")
    wait_zoom(page, 0)

    # Search: exact totals (each matching subtree once) and the highlight colour.
    r = frame_rect(page, "cache_insert")
    before = pixel(page, r["x"] + 1, r["y"] + 2)
    search(page, tree, "cache")
    equal(pixel(page, r["x"] + 1, r["y"] + 2), css_rgb(page, "--match"), "colour of a search match")
    expect(before != css_rgb(page, "--match"), "cache_insert had the match colour before the search")
    page.screenshot("flamegraph-search")
    got = search(page, tree, "app/")
    expect(got[0] > 1 and got[1] == tree.bytes[tree.find("main")[0]], "nested matches are counted once")
    for q in ("WORKER", "größe", "</script>", "hyperlink", "json.c:4", "no such function"):
        search(page, tree, q)
    page.key("Escape")
    page.wait_for("memprofDebug.state().query === ''", what="Esc to clear the search")
    equal(page.evaluate("document.getElementById('fg-search-info').textContent"), "", "search info after Esc")

    # Tooltips, the hostile one included.
    ci = tree.find("cache_insert")[0]
    for name, node in (("cache_insert", ci), (X.HOSTILE, tree.find(X.HOSTILE)[0])):
        page.mouse("mouseMoved", *R.center(frame_rect(page, name)))
        tip = page.wait_for("memprofDebug.tooltip()", what="the tooltip of %r" % name)
        loc = tree.loc[node]
        want = [rep.name(loc), rep.file_line(loc), rep.module[loc], X.exact(tree.bytes[node]),
                "%.1f%% of the total, %.1f%% of its parent" % (100 * tree.bytes[node] / tree.bytes[0],
                                                                100 * tree.bytes[node] / tree.bytes[tree.parent[node]]),
                "%s allocation%s" % (X.num(tree.count[node]), "" if tree.count[node] == 1 else "s")]
        equal(tip, want[0] + "\n".join(want[1:]), "tooltip of %r" % name)
    equal(page.evaluate("document.getElementById('mp-tooltip').children.length"), 1, "tooltip elements")
    R.hostile_is_text(page)

    # Orientation: the root goes to the bottom.
    R.click_element(page, "#fg-orient")
    page.wait_for("memprofDebug.state().flame", what="flame orientation")
    expect(frame_rect(page, "total")["y"] > frame_rect(page, "main")["y"], "flame: root not below its child")
    page.screenshot("flamegraph-flame")
    R.click_element(page, "#fg-orient")
    page.wait_for("!memprofDebug.state().flame", what="icicle orientation")
    expect(frame_rect(page, "total")["y"] < frame_rect(page, "main")["y"], "icicle: root not above its child")

    # Frames too small to draw are aggregated, with a tooltip of their own.
    aggs = page.evaluate("memprofDebug.aggregates()")
    equal(sorted((g["parent"], g["n"], g["bytes"]) for g in aggs), tree.aggregates(0, width(page)), "aggregated boxes")
    expect(aggs, "the data: no frames too small to draw")
    g = max(aggs, key=lambda g: g["width"])
    page.mouse("mouseMoved", *R.center(g))
    tip = page.wait_for("memprofDebug.tooltip()", what="the tooltip of an aggregate")
    expect(tip.startswith("%d frames too small to draw%s" % (g["n"], X.exact(g["bytes"]))), "aggregate tooltip %r" % tip)

    # The chart's hover readout names the nearest sample.
    c = R.element_rect(page, "#mp-chart")
    mem = d["memory"]
    xmax = max(d["meta"]["duration_us"], mem["time_us"][-1])
    k = len(mem["time_us"]) * 3 // 4
    page.mouse("mouseMoved", c["x"] + 70 + mem["time_us"][k] / xmax * (c["width"] - 84), c["y"] + 80)
    page.wait_for("document.getElementById('mp-chart-readout').textContent.indexOf('RSS ') > 0", what="the readout")
    equal(page.evaluate("document.getElementById('mp-chart-readout').textContent"),
          "%s \u00b7 RSS %s \u00b7 heap %s (max %s since the previous sample)" % (
              X.seconds(mem["time_us"][k]), X.human(mem["rss"][k]), X.human(mem["heap"][k]), X.human(mem["heap_max"][k])),
          "chart readout")

    # The canvas follows the theme (the root's box has the ancestor colour).
    r = frame_rect(page, "total")
    equal(pixel(page, r["x"] + 1, r["y"] + 2), css_rgb(page, "--ancestor"), "root colour, light")

    def dark(page):
        equal(pixel(page, r["x"] + 1, r["y"] + 2), css_rgb(page, "--ancestor"), "root colour, dark")
    R.theme_toggle(page, "flamegraph-dark", dark)
    R.check_stats(page, d)

    # Memory CSV: what the hook builds, and what the button downloads.
    csv = X.memory_csv(d)
    equal(page.evaluate("memprofDebug.memoryCsv()"), csv, "memory CSV")
    name, text = R.download(browser, page, "#mp-chart-csv", os.path.join(a.artifacts, "downloads"))
    equal(name, "memprof-memory-out.bin.csv", "CSV file name")
    equal(text, csv, "downloaded memory CSV")

    # A resize redraws to the new width.
    page.send("Emulation.setDeviceMetricsOverride", {"width": 900, "height": 900, "deviceScaleFactor": 1, "mobile": False})
    page.wait_for("document.getElementById('fg-canvas').clientWidth < 900", what="a narrower canvas")
    page.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    expect_drawn(page, tree, 0, "after a resize")
    page.check(allowed_requests=(R.url(path),))


def threads(browser, a):
    (path, data), (ipath, idata) = a.pairs
    d = X.load(data)
    rep = X.Report(d)
    tree = X.Tree.of(rep)
    page = R.open_report(browser, path)
    opts = page.evaluate("Array.from(document.querySelectorAll('#fg-thread option')).map(o => o.textContent)")
    equal(opts, ["all threads"] + [rep.thread_label(t) for t in range(len(rep.tids))], "thread choices")
    merged = tree.merged()
    expect_drawn(page, merged, 0, "for all threads")
    equal(state(page)["rootBytes"], d["meta"]["peak_bytes"], "all threads: total")
    equal(frames(page).count("cache_insert"), 1, "cache_insert frames for all threads")
    equal(len(tree.find("cache_insert")), 2, "the data: cache_insert in two threads")
    page.screenshot("flamegraph-threads-all")
    for t in (1, 0):
        page.evaluate("(function(s){s.value='%d';s.dispatchEvent(new Event('change'));})"
                      "(document.getElementById('fg-thread'))" % t)
        page.wait_for("memprofDebug.state().thread === %d" % t, what="thread %d" % t)
        equal(page.evaluate("location.hash"), "#thread=%d" % t, "fragment for thread %d" % t)
        one = tree.only(t)
        equal(state(page)["rootBytes"], tree.thread_total(t), "thread %d: total" % t)
        expect_drawn(page, one, 0, "for thread %d" % t)
    page.evaluate("history.back()")
    page.wait_for("memprofDebug.state().thread === 1", what="history.back() to thread 1")
    expect(X.HOSTILE in frames(page) and "init_config" not in frames(page), "thread 1 frames")
    page.mouse("mouseMoved", *R.center(frame_rect(page, "cache_insert")))
    tip = page.wait_for("memprofDebug.tooltip()", what="a tooltip")
    expect(tip.endswith("\nthread: " + rep.thread_label(1)), "tooltip thread line: %r" % tip)
    page.screenshot("flamegraph-threads-one")
    click_frame(page, "worker_loop")
    page.wait_for("/^#thread=1&zoom=\\d+$/.test(location.hash)", what="zoom inside a thread view")
    page.evaluate("history.back()")
    page.wait_for("location.hash === '#thread=1' && memprofDebug.state().zoom === 0", what="back to the thread view")
    page.check(allowed_requests=(R.url(path),))

    d = X.load(idata)
    rep = X.Report(d)
    tree = X.Tree.of(rep)
    page = R.open_report(browser, ipath)
    expect(page.evaluate("document.title").startswith("memprof \u2013 inverted flame graph"), "inverted title")
    expect("Inverted" in page.evaluate("document.getElementById('fg-note').textContent"), "inverted note")
    expect_drawn(page, tree, 0, "inverted")
    expect(frame_rect(page, "cache_insert")["y"] < frame_rect(page, "main")["y"], "inverted: allocation site not on top")
    equal(rep.label(tree.loc[tree.children[tree.find("cache_insert")[0]][0]]), "worker_loop", "the data: inverted")
    page.screenshot("flamegraph-inverted")
    page.check(allowed_requests=(R.url(ipath),))


def set_window(page, b0, b1):
    n = state(page)["windows"]
    page.evaluate("(function(a,b){var s=document.getElementById('mp-win-start'),e=document.getElementById('mp-win-end');"
                  "s.value=a;s.dispatchEvent(new Event('input'));e.value=b;e.dispatchEvent(new Event('input'));})(%d,%d)"
                  % (b0, b1))
    return wait_window(page, n, [b0, b1])


def wait_window(page, n, want=None):
    page.wait_for("memprofDebug.state().windows > %d" % n, what="the graph to follow the window")
    page.wait_for("(s => s.window.join() === s.chartWindow.join())(memprofDebug.state())",
                  what="the graph to catch up with the window")
    st = state(page)
    if want is not None:
        equal(st["window"], want, "window")
    return st


def expect_window(page, d, rep, w, what):
    sb, sc, best = X.window_values(d, w[0], w[1])
    tree = X.Tree.of(rep, sb, sc)
    st = state(page)
    equal(st["rootBytes"], tree.bytes[0], what + ": total")
    equal(st["snapshot"], best, what + ": snapshot")
    expect_drawn(page, tree, 0, what)
    info = page.evaluate("document.getElementById('mp-win-info').textContent")
    tl = d["timeline"]
    if d["mode"] == "leaks":
        expect(info.endswith("not freed by its end: %s." % X.exact(tree.bytes[0])), "window info %r" % info)
    else:
        equal(tree.bytes[0], tl["hwm_bytes"][best], what + ": the data: total is the snapshot's heap")
        expect("peak inside %s at " % X.exact(tl["hwm_bytes"][best]) in info, "window info %r" % info)
    return tree


def temporal(browser, a):
    for (path, data), mode in zip(a.pairs, ("peak", "leaks")):
        d = X.load(data)
        equal(d["mode"], mode, "the data: mode")
        rep = X.Report(d)
        nb = len(d["timeline"]["hwm_bytes"])
        page = R.open_report(browser, path)
        equal(state(page)["window"], [0, nb - 1], "initial window")
        full = expect_window(page, d, rep, [0, nb - 1], mode + " full range")
        equal(full.bytes, X.Tree.of(rep).bytes, "the data: intervals over the full range give the tree")
        equal(full.bytes[0], d["meta"]["peak_bytes" if mode == "peak" else "leaked_bytes"], "full range total")
        full_frames = frames(page)
        # Keyboard on the start slider.
        n = state(page)["windows"]
        page.evaluate("document.getElementById('mp-win-start').focus()")
        page.key("ArrowRight")
        page.key("ArrowRight")
        page.wait_for("memprofDebug.state().window[0] === 2", what="the keyboard to move the window")
        wait_window(page, n, [2, nb - 1])
        # The first phase (0 to 4 s) shows the JSON parser, not the cache.
        b1 = int(nb * 0.4) - 1
        set_window(page, 0, b1)
        tree = expect_window(page, d, rep, [0, b1], mode + " first phase")
        expect(sorted(frames(page)) != sorted(full_frames), "the window did not change the graph")
        if mode == "peak":
            expect("json_alloc_node" in frames(page) and "cache_insert" not in frames(page), "first phase frames")
        page.screenshot("temporal-%s-window" % mode)
        # Drag across the chart from 5 s to 9 s.
        c = R.element_rect(page, "#mp-chart")
        xmax = max(d["meta"]["duration_us"], d["memory"]["time_us"][-1], d["timeline"]["bucket_us"][-1])
        x = lambda t: c["x"] + 70 + t / xmax * (c["width"] - 84)
        n = state(page)["windows"]
        page.drag(x(5.0e6), c["y"] + 60, x(9.0e6), c["y"] + 60)
        st = wait_window(page, n)
        expect(abs(st["window"][0] - nb // 2) <= 1 and abs(st["window"][1] - (nb * 9 // 10 - 1)) <= 1,
               "dragged window %r" % st["window"])
        expect_window(page, d, rep, st["window"], mode + " dragged window")
        R.click_element(page, "#mp-win-full")
        page.wait_for("memprofDebug.state().window[1] === %d && memprofDebug.state().window[0] === 0" % (nb - 1))
        page.wait_for("memprofDebug.state().rootBytes === %d" % full.bytes[0], what="the full range again")
        page.screenshot("temporal-%s" % mode)
        page.check(allowed_requests=(R.url(path),))


if __name__ == "__main__":
    R.main(__doc__, {"basic": basic, "threads": threads, "temporal": temporal})
