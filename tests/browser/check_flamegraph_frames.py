#!/usr/bin/env python3
"""Browser checks of the "All frames" toggle of a Python program's flame graph.

    check_flamegraph_frames.py basic [--artifacts DIR] PAGE.html FOLDED ALL

basic: no console error; the toggle shows, unchecked; the page folds the
       stacks itself, and the stacks it draws (memprofDebug.paths(): each
       node's path with the bytes of its own, as folded lines) are exactly
       those of FOLDED (memprof transform folded of the same view: the C
       rule); checking the toggle shows every frame, exactly ALL (transform
       folded --all-frames), with #frames=all in the URL; the browser's back
       button folds them again, and a reload of #frames=all keeps them all.
"""
import argparse
import os

import cdp
import check_flamegraph as CF
import reportlib as R
from reportlib import equal, expect


def summed(lines):
    """Folded lines with the counts of the same stack summed: folded files name frames by
    function, the page's nodes are locations (a function's lines, its files)."""
    sums = {}
    for line in lines:
        stack, _, n = line.rstrip("\n").rpartition(" ")
        sums[stack] = sums.get(stack, 0) + int(n)
    return sorted("%s %d" % kv for kv in sums.items())


def folded_lines(path):
    with open(path, encoding="utf-8") as f:
        return summed(f)


def paths(page):
    return summed(page.evaluate("memprofDebug.paths()"))


def basic(browser, a):
    want_folded, want_all = folded_lines(a.folded), folded_lines(a.all)
    expect(want_folded != want_all, "the two folded files are the same")
    page = R.open_report(browser, a.page)
    expect(not page.evaluate("document.getElementById('fg-all-label').hidden"), "the toggle is hidden")
    expect(not page.evaluate("document.getElementById('fg-all').checked"), "the toggle is checked at load")
    equal(CF.state(page)["allFrames"], False, "at load: all frames")
    equal(paths(page), want_folded, "the folded stacks drawn")
    drawn = CF.frames(page)
    for name in ("_start", "Py_RunMain", "PyEval_EvalCode"):
        expect(not CF.drawn_as(name, drawn), "%r is drawn in the folded view" % name)
    root = CF.state(page)["rootBytes"]
    page.screenshot("frames-folded")

    R.click_element(page, "#fg-all")
    page.wait_for("memprofDebug.state().allFrames === true", what="all frames")
    equal(page.evaluate("location.hash"), "#frames=all", "fragment with all frames")
    equal(paths(page), want_all, "every frame's stacks drawn")
    equal(CF.state(page)["rootBytes"], root, "the total with all frames")
    expect(CF.drawn_as("_start", CF.frames(page)), "_start is not drawn with all frames")
    page.screenshot("frames-all")

    page.evaluate("history.back()")
    page.wait_for("memprofDebug.state().allFrames === false", what="back to the folded view")
    expect(not page.evaluate("document.getElementById('fg-all').checked"), "the toggle after back")
    equal(paths(page), want_folded, "the folded stacks after back")

    # The reload by the protocol, which waits for the new document: a reload inside
    # Runtime.evaluate could take the document away before the call returned ("Inspected
    # target navigated or closed", seen once in CI).
    page.evaluate("location.hash = '#frames=all'")
    page.reload()
    page.wait_for("window.memprofDebug && memprofDebug.state().allFrames === true",
                  what="all frames after a reload of #frames=all")
    expect(page.evaluate("document.getElementById('fg-all').checked"), "the toggle after the reload")
    equal(paths(page), want_all, "every frame's stacks after the reload")
    page.check(allowed_requests=(R.url(a.page),))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("scenario", choices=["basic"])
    ap.add_argument("--artifacts", default="artifacts")
    ap.add_argument("page")
    ap.add_argument("folded")
    ap.add_argument("all")
    a = ap.parse_args()
    a.page = os.path.abspath(a.page)
    with cdp.Browser(artifacts=a.artifacts) as browser:
        basic(browser, a)


if __name__ == "__main__":
    cdp.run(main)
