#!/usr/bin/env python3
"""Browser checks of a differential flame graph (memprof flamegraph --diff).

    check_flamegraph_diff.py SCENARIO [--artifacts DIR] --grown NAME --gone NAME PAGE.html

basic: no console error; the "differential" badge and the widths button
       show; the frames drawn are those of the new capture's values (from the
       data, read here with Python); --grown is drawn in red (more in the new
       capture) and its tooltip says the change; --gone (only in the base)
       is not drawn until "Widths: base", which draws the base capture's
       values, --gone among them in blue; the button goes back.
"""
import argparse
import json
import os

import cdp
import check_flamegraph as CF
import expect as X
import report_data
import reportlib as R
from reportlib import equal, expect


def colour_of(page, name):
    r = CF.frame_rect(page, name)
    return CF.pixel(page, r["x"] + min(r["width"] / 2, 40), r["y"] + r["height"] / 2)


def hover(page, name):
    x, y = R.center(CF.frame_rect(page, name))
    page.mouse("mouseMoved", x, y)
    page.wait_for("memprofDebug.tooltip() !== null", what="the tooltip of %r" % name)
    return page.evaluate("memprofDebug.tooltip()")


def basic(browser, a):
    d = report_data.page_data(a.page)
    rep = X.Report(d)
    new = X.Tree.of(rep)
    base = X.Tree.of(rep, d["tree"]["base_self_bytes"], d["tree"]["base_self_count"])
    page = R.open_report(browser, a.page)
    expect(d.get("diff") and "base_meta" in d, "the data is not a differential report")
    # The chart: both captures' memory on one time axis, which ends at the last sample.
    ch = page.evaluate("memprofDebug.chart()")
    t_new, t_base = d["memory"]["time_us"], d["base_memory"]["time_us"]
    equal((ch["samples"], ch["baseSamples"]), (len(t_new), len(t_base)), "the chart's points of both captures")
    expect(t_base, "the base capture has no memory samples")
    equal(ch["xmax"], max(t_new[-1], t_base[-1], d["meta"]["peak_time_us"]), "the end of the time axis")
    equal(ch["ymax"], 1.08 * max([1024, d["meta"]["peak_bytes"]] + [max(d[k][c]) for k in ("memory", "base_memory")
                                                                       for c in ("rss", "heap", "heap_max") if d[k][c]]),
          "the top of the memory axis")
    expect("differential" in page.evaluate("document.querySelector('.mp-bar').textContent"), "no badge")
    expect(not page.evaluate("document.getElementById('fg-side').hidden"), "the widths button is hidden")
    st = CF.state(page)
    equal((st["side"], st["rootBytes"]), ("new", new.bytes[0]), "at load: side, root bytes")
    CF.expect_drawn(page, new, 0, "at load (new widths)")
    drawn = CF.frames(page)
    expect(CF.drawn_as(a.grown, drawn), "%r is not drawn" % a.grown)
    expect(not CF.drawn_as(a.gone, drawn), "%r is drawn with the new capture's widths" % a.gone)
    r, g, b = colour_of(page, a.grown)
    expect(r > b + 40, "%r is not red: rgb(%d, %d, %d)" % (a.grown, r, g, b))
    tip = hover(page, a.grown)
    i = new.find(a.grown)[0]
    for want in ("new: " + X.exact(new.bytes[i]), "base: " + X.exact(base.bytes[i]), "change: +"):
        expect(want in tip, "tooltip of %r lacks %r: %r" % (a.grown, want, tip))
    page.screenshot("diff-new")

    R.click_element(page, "#fg-side")
    page.wait_for("memprofDebug.state().side === 'base'", what="the base widths")
    equal(CF.state(page)["rootBytes"], base.bytes[0], "root bytes with the base widths")
    equal(page.evaluate("document.getElementById('fg-side').textContent"), "Widths: base", "button text")
    CF.expect_drawn(page, base, 0, "with the base widths")
    expect(CF.drawn_as(a.gone, CF.frames(page)), "%r is not drawn with the base widths" % a.gone)
    r, g, b = colour_of(page, a.gone)
    expect(b > r + 40, "%r is not blue: rgb(%d, %d, %d)" % (a.gone, r, g, b))
    tip = hover(page, a.gone)
    expect("new: 0 B" in tip and "change: \u2212" in tip, "tooltip of %r: %r" % (a.gone, tip))
    page.screenshot("diff-base")
    R.click_element(page, "#fg-side")
    page.wait_for("memprofDebug.state().side === 'new'", what="the new widths again")
    equal(CF.frames(page), drawn, "frames after going back to the new widths")
    page.check(allowed_requests=(R.url(a.page),))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("scenario", choices=["basic"])
    ap.add_argument("--artifacts", default="artifacts")
    ap.add_argument("--grown", required=True)
    ap.add_argument("--gone", required=True)
    ap.add_argument("page")
    a = ap.parse_args()
    a.page = os.path.abspath(a.page)
    with cdp.Browser(artifacts=a.artifacts) as browser:
        basic(browser, a)


if __name__ == "__main__":
    cdp.run(main)
