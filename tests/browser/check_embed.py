#!/usr/bin/env python3
"""Browser checks of the reports inside iframes, as a dashboard shows them.

    check_embed.py basic [--artifacts DIR] FLAME.html FLAME.json TABLE.html TABLE.json

A page holds the flame graph in a plain iframe and the table in a sandboxed
one (scripts only: an opaque origin without storage). With the dark colour
scheme preferred, both start dark, work without errors, and the flame graph
zooms and goes back through the iframe's own history.
"""
import os

import expect as X
import reportlib as R
from reportlib import equal, expect

WRAPPER = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>dashboard</title>
<style>body{margin:0;font:14px sans-serif} iframe{display:block;width:1240px;height:560px;border:1px solid #888;margin:8px}</style>
</head><body>
<iframe id="plain" src="%s"></iframe>
<iframe id="sandboxed" sandbox="allow-scripts" src="%s"></iframe>
</body></html>
"""


def basic(browser, a):
    (fpath, fdata), (tpath, tdata) = a.pairs
    wrapper = os.path.join(os.path.dirname(fpath), "dashboard.html")
    with open(wrapper, "w", encoding="utf-8") as f:
        f.write(WRAPPER % (os.path.basename(fpath), os.path.basename(tpath)))
    page = browser.open(R.url(wrapper), dark=True)
    fg, tb = page.frame(R.url(fpath)), page.frame(R.url(tpath))
    for frame in (fg, tb):
        page.wait_for("window.memprofDebug && 1", frame=frame, what="the report in an iframe")
        equal(page.evaluate("document.documentElement.dataset.theme", frame=frame), "dark", "theme from the preference")
    equal(page.evaluate("(function(){try{localStorage.length;return 'storage'}catch(e){return 'none'}})()", frame=tb),
          "none", "storage in the sandboxed iframe")
    d = X.load(fdata)
    tree = X.Tree.of(X.Report(d))
    w = page.evaluate("document.getElementById('fg-canvas').clientWidth", frame=fg)
    equal(sorted(page.evaluate("memprofDebug.visibleFrames()", frame=fg)), tree.drawn(0, w), "frames in the iframe")
    t = X.Table(X.Report(X.load(tdata)))
    equal(page.evaluate("memprofDebug.csv()", frame=tb), t.csv(t.order("size", True)), "table CSV in the iframe")
    page.screenshot("embedded-dark")

    # Zoom inside the plain iframe with a real click, then its history goes back.
    off = page.evaluate("(function(){var r=document.getElementById('plain').getBoundingClientRect();"
                        "return [r.left + 1, r.top + 1];})()")
    r = page.evaluate("memprofDebug.frameRect('worker_loop')", frame=fg)
    expect(r, "worker_loop is not drawn in the iframe")
    page.click(off[0] + r["x"] + r["width"] / 2, off[1] + r["y"] + r["height"] / 2)
    wl = tree.find("worker_loop")[0]
    page.wait_for("memprofDebug.state().zoom === %d" % wl, frame=fg, what="zoom inside the iframe")
    page.evaluate("history.back()", frame=fg)
    page.wait_for("memprofDebug.state().zoom === 0", frame=fg, what="history.back() inside the iframe")

    # The theme toggle works where storage is refused.
    page.evaluate("document.getElementById('mp-theme').click()", frame=tb)
    page.wait_for("document.documentElement.dataset.theme === 'light'", frame=tb, what="the light theme in the sandbox")
    page.evaluate("document.getElementById('tb-sort-location').click()", frame=tb)
    page.wait_for("memprofDebug.state().sort === 'location'", frame=tb, what="sorting in the sandbox")
    equal(page.evaluate("memprofDebug.csv()", frame=tb), t.csv(t.order("location", False)), "sorted table in the iframe")
    page.screenshot("embedded-toggled")
    page.check(allowed_requests=(R.url(wrapper), R.url(fpath), R.url(tpath)))


if __name__ == "__main__":
    R.main(__doc__, {"basic": basic})
