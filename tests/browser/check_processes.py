#!/usr/bin/env python3
"""Browser checks of the pages of several processes (memprof(1) SEVERAL CAPTURES).

    check_processes.py flamegraph|table [--artifacts DIR] PAGE.html DATA.json

The pages are memprof's own, of a shell and its three children
(tests/e2e/html-processes.sh); DATA.json is the data embedded in the page.
flamegraph: the process selector and the apart/merged toggle: what each view
            draws and totals, the fragment, history.
table:      the same of the table: the Process column, one process's rows.
"""
import json

import expect as X
import reportlib as R
from reportlib import equal, expect


def processes(d):
    S, P = d["strings"], d["processes"]
    return ["%s (pid %d)" % (S[n], pid) for n, pid in zip(P["name"], P["pid"])]


def at_peak(d, fn):
    """Bytes at the peak of frames in function fn, by process index: from the table's rows, or
    from the tree, whose depth-1 nodes are the processes' frames."""
    S, L = d["strings"], d["locations"]
    out = {}
    if "rows" in d:
        R_ = d["rows"]
        for i in range(len(R_["bytes"])):
            if S[L["function"][R_["location"][i]]] == fn:
                out[R_["process"][i]] = out.get(R_["process"][i], 0) + R_["bytes"][i]
        return out
    T, ploc, proc = d["tree"], d["processes"]["location"], -1
    for i in range(1, len(T["depth"])):
        if T["depth"][i] == 1:
            proc = ploc.index(T["location"][i])
        elif S[L["function"][T["location"][i]]] == fn and T["self_bytes"][i]:
            out[proc] = out.get(proc, 0) + T["self_bytes"][i]
    return out


def choose(page, select, value):
    # (The table's selector reloads the page from its handler.)
    page.evaluate("(function(s){s.value=%s;s.dispatchEvent(new Event('change'));})(document.getElementById(%s))"
                  % (json.dumps(value), json.dumps(select)), navigates=True)


def flamegraph(browser, a):
    (path, data), = a.pairs
    d = X.load(data)
    labels = processes(d)
    page = R.open_report(browser, path)
    opts = page.evaluate("Array.from(document.querySelectorAll('#fg-process option')).map(o => o.textContent)")
    equal(opts, ["all processes"] + labels, "process choices")
    expect(not page.evaluate("document.getElementById('fg-apart').hidden"), "the toggle is shown")
    st = page.evaluate("memprofDebug.state()")
    equal((st["process"], st["apart"]), (-1, False), "merged at first")
    equal(st["rootBytes"], d["meta"]["peak_bytes"], "merged: the whole peak")
    drawn = page.evaluate("memprofDebug.visibleFrames()")
    expect(not any(f in drawn for f in labels), "merged: no process frame drawn: %r" % drawn)
    equal((drawn.count("hold_alloc"), drawn.count("once_alloc")), (1, 1), "merged: the children's sites once each")
    page.screenshot("processes-merged")

    R.click_element(page, "#fg-apart")
    page.wait_for("memprofDebug.state().apart === true", what="the processes apart")
    equal(page.evaluate("location.hash"), "#apart=1", "fragment apart")
    equal(page.evaluate("memprofDebug.state().rootBytes"), d["meta"]["peak_bytes"], "apart: the whole peak")
    drawn = page.evaluate("memprofDebug.visibleFrames()")
    hold, once = at_peak(d, "hold_alloc"), at_peak(d, "once_alloc")
    equal((len(hold), len(once)), (1, 1), "the data: one process of each site at the peak")
    (ph, bh), = hold.items()
    (po, bo), = once.items()
    for p in (0, ph, po):
        expect(labels[p] in drawn, "apart: %r not drawn: %r" % (labels[p], drawn))
    page.screenshot("processes-apart")

    choose(page, "fg-process", str(po))
    page.wait_for("memprofDebug.state().process === %d" % po, what="process %d" % po)
    equal(page.evaluate("location.hash"), "#process=%d&apart=1" % po, "fragment of one process")
    equal(page.evaluate("memprofDebug.state().rootBytes"), bo, "one process: its share of the peak")
    drawn = page.evaluate("memprofDebug.visibleFrames()")
    expect("once_alloc" in drawn and "hold_alloc" not in drawn and labels[po] not in drawn,
           "one process: its frames only: %r" % drawn)
    equal(page.evaluate("document.getElementById('fg-apart').disabled"), True, "one process: no toggle")
    page.screenshot("processes-one")
    choose(page, "fg-process", str(ph))
    page.wait_for("memprofDebug.state().process === %d" % ph, what="process %d" % ph)
    equal(page.evaluate("memprofDebug.state().rootBytes"), bh, "the other process's share")
    page.evaluate("history.back()")
    page.wait_for("memprofDebug.state().process === %d" % po, what="history.back() to process %d" % po)
    page.evaluate("history.back()")
    page.wait_for("memprofDebug.state().process === -1 && memprofDebug.state().apart === true",
                  what="history.back() to all processes apart")
    page.check(allowed_requests=(R.url(path),))


def table(browser, a):
    (path, data), = a.pairs
    d = X.load(data)
    labels = processes(d)
    hold, once = at_peak(d, "hold_alloc"), at_peak(d, "once_alloc")
    (ph, bh), = hold.items()
    (po, bo), = once.items()
    page = R.open_report(browser, path)
    opts = page.evaluate("Array.from(document.querySelectorAll('#tb-process option')).map(o => o.textContent)")
    equal(opts, ["all processes"] + labels, "process choices")
    equal(page.evaluate("!!document.getElementById('tb-sort-process')"), False, "merged: no Process column")
    rows = page.evaluate("memprofDebug.visibleRows()")
    sites = [r for r in rows if r[-1].startswith(("hold_alloc", "once_alloc"))]
    equal(len(sites), 2, "merged: a row for each child site: %r" % rows)
    page.screenshot("processes-table-merged")

    R.click_element(page, "#tb-apart")
    page.wait_for("window.memprofDebug && memprofDebug.state().apart === true", what="the rows apart")
    equal(page.evaluate("location.hash"), "#apart=1", "fragment apart")
    expect(page.evaluate("!!document.getElementById('tb-sort-process')"), "apart: a Process column")
    rows = page.evaluate("memprofDebug.visibleRows()")
    want = [labels[po], labels[ph]]
    got = [r[0] for r in rows if r[-1].startswith(("once_alloc", "hold_alloc"))]
    equal(sorted(got), sorted(want), "apart: the children's rows name their process")
    page.screenshot("processes-table-apart")

    choose(page, "tb-process", str(po))
    page.wait_for("window.memprofDebug && memprofDebug.state().process === %d" % po, what="process %d" % po)
    rows = page.evaluate("memprofDebug.visibleRows()")
    expect(all(not r[-1].startswith("hold_alloc") for r in rows) and
           any(r[-1].startswith("once_alloc") for r in rows), "one process: its rows only: %r" % rows)
    status = page.evaluate("document.getElementById('tb-status').textContent")
    expect(X.exact(bo).split(" (")[0] in status or X.num(bo) in status, "one process: its total in %r" % status)
    page.check(allowed_requests=(R.url(path),))


if __name__ == "__main__":
    R.main(__doc__, {"flamegraph": flamegraph, "table": table})
