#!/usr/bin/env python3
"""Browser checks of the pages of a sampled capture (memprof-run(1) Sampled tracking).

    check_sampled.py flamegraph|table|exact [--artifacts DIR] PAGE.html DATA.json

The pages are memprof's own (tests/e2e/sampling-reports.sh); DATA.json is the
data embedded in the page.
flamegraph: the "estimated" badge naming the interval, the statistics panel's
            Sampling row, the note, and the estimated peak drawn at the root.
table:      the badge, the panel, and the status line's estimated total.
exact:      a page of an exact capture (either report) says none of it.
"""
import expect as X
import reportlib as R
from reportlib import equal, expect

WORDS = "estimated from a sample, one allocation per "


def badge(page, d):
    title = page.evaluate("(document.getElementById('mp-estimated') || {}).title || null")
    text = page.evaluate("(document.getElementById('mp-estimated') || {}).textContent || null")
    equal(text, "estimated", "the badge")
    expect(title and WORDS + X.human(d["meta"]["sampling_interval"]) in title, "the badge's title: %r" % title)
    st = R.stats_panel(page)
    expect(WORDS in st.get("Sampling", "") and "every figure is an estimate" in st["Sampling"],
           "statistics: Sampling %r" % st.get("Sampling"))


def flamegraph(browser, a):
    (path, data), = a.pairs
    d = X.load(data)
    page = R.open_report(browser, path)
    badge(page, d)
    note = page.evaluate("document.getElementById('fg-note').textContent")
    expect("Every figure is estimated from a sample: " + WORDS in note, "the note: %r" % note)
    equal(page.evaluate("memprofDebug.state().rootBytes"), d["meta"]["peak_bytes"], "the root: the estimated peak")
    page.screenshot("sampled-flamegraph")
    page.check(allowed_requests=(R.url(path),))


def table(browser, a):
    (path, data), = a.pairs
    d = X.load(data)
    page = R.open_report(browser, path)
    badge(page, d)
    status = page.evaluate("document.getElementById('tb-status').textContent")
    expect("estimated " + X.exact(d["meta"]["peak_bytes"]) in status, "the status line: %r" % status)
    page.screenshot("sampled-table")
    page.check(allowed_requests=(R.url(path),))


def exact(browser, a):
    (path, data), = a.pairs
    page = R.open_report(browser, path)
    equal(page.evaluate("!!document.getElementById('mp-estimated')"), False, "no badge")
    expect("Sampling" not in R.stats_panel(page), "no Sampling row")
    body = page.evaluate("document.body.innerText")
    expect("estimated" not in body, "an exact capture's page speaks of estimates")
    page.check(allowed_requests=(R.url(path),))


if __name__ == "__main__":
    R.main(__doc__, {"flamegraph": flamegraph, "table": table, "exact": exact})
