#!/usr/bin/env python3
"""Browser checks of the table page.

    check_table.py basic [--artifacts DIR] SPLIT.html SPLIT.json PLAIN.html PLAIN.json

SPLIT is a --split-threads report with enough rows to scroll; PLAIN has no
thread column. Sorting on every column both ways (the whole order, through
the CSV), filtering, virtual scrolling by offset and by keyboard, the CSV
download, the hostile name, theme and statistics.
"""
import json
import os

import expect as X
import reportlib as R
from reportlib import equal, expect

LABELS = {"thread": "Thread", "size": "Size", "allocator": "Allocator", "count": "Allocations", "location": "Location"}


def state(page):
    return page.evaluate("memprofDebug.state()")


def visible(page):
    return page.evaluate("memprofDebug.visibleRows()")


def expect_rows(page, table, order, what):
    equal(page.evaluate("memprofDebug.csv()"), table.csv(order), what + ": CSV of the rows shown")
    st = state(page)
    shown = visible(page)
    want = [[table.text(c, i) for c in table.cols] for i in order[st["first"]:st["first"] + len(shown)]]
    equal(shown, want, what + ": rows drawn")


def sort_by(page, col):
    n = page.evaluate("memprofDebug.state().sort + memprofDebug.state().desc")
    R.click_element(page, "#tb-sort-" + col)
    page.wait_for("memprofDebug.state().sort + memprofDebug.state().desc !== %s" % json.dumps(n), what="sort by " + col)
    st = state(page)
    sorts = page.evaluate("Array.from(document.querySelectorAll('[role=columnheader]')).map(h => h.getAttribute('aria-sort'))")
    want = [("descending" if st["desc"] else "ascending") if c == col else "none" for c in state_cols(page)]
    equal(sorts, want, "aria-sort after sorting by " + col)
    return st


def state_cols(page):
    return page.evaluate("Array.from(document.querySelectorAll('[role=columnheader] button')).map(b => b.id.slice(8))")


def filter_rows(page, text):
    page.evaluate("(function(f){f.focus();f.select();})(document.getElementById('tb-filter'))")
    page.type_text(text)
    page.wait_for("memprofDebug.state().query === %s" % json.dumps(text.strip().lower()), what="filter %r" % text)


def basic(browser, a):
    (path, data), (ppath, pdata) = a.pairs
    d = X.load(data)
    table = X.Table(X.Report(d))
    expect(table.split and table.n > 500, "the data: a split table with more than 500 rows")
    page = R.open_report(browser, path)
    expect("table: peak memory" in page.evaluate("document.title"), "title")
    equal(page.evaluate("Array.from(document.querySelectorAll('[role=columnheader]')).map(h => h.textContent)"),
          [LABELS[c] for c in table.cols], "column headers")
    equal(state_cols(page), table.cols, "sort buttons")
    equal(state(page)["sort"], "size", "default sort")
    order = table.order("size", True)
    expect_rows(page, table, order, "default order")
    status = page.evaluate("document.getElementById('tb-status').textContent")
    equal(status.split(" \u00b7 ")[:2], ["%s rows" % X.num(table.n), X.exact(sum(d["rows"]["bytes"]))], "status")
    page.screenshot("table")

    for col in table.cols:
        st = sort_by(page, col)
        equal(st["sort"], col, "the sort column")
        first = st["desc"]
        equal(first, col in ("size", "count"), "first direction of " + col)
        expect_rows(page, table, table.order(col, first), "sorted by %s, %s" % (col, "descending" if first else "ascending"))
        st = sort_by(page, col)
        equal(st["desc"], not first, "second click on " + col)
        expect_rows(page, table, table.order(col, not first), "sorted by %s again" % col)
    page.screenshot("table-sorted")

    st = sort_by(page, "size")
    for q in ("worker", "MALLOC", "décodeur", "app/cache.c:60", "nothing matches this"):
        filter_rows(page, q)
        rows = table.order("size", st["desc"], table.filter(q))
        expect_rows(page, table, rows, "filter %r" % q)
        status = page.evaluate("document.getElementById('tb-status').textContent")
        expect(status.startswith("%s of %s rows match" % (X.num(len(rows)), X.num(table.n))), "status %r" % status)
        if q == "worker":
            expect(0 < len(rows) < table.n, "the data: 'worker' selects some rows")
            page.screenshot("table-filtered")
    page.key("Escape")
    page.wait_for("memprofDebug.state().query === ''", what="Esc to clear the filter")
    order = table.order("size", st["desc"])
    expect_rows(page, table, order, "filter cleared")

    # Virtual scrolling: by offset, then to the end by keyboard.
    page.evaluate("document.getElementById('tb-scroll').scrollTop = 24 * 500")
    page.wait_for("memprofDebug.state().first === 500", what="scrolling to row 500")
    expect_rows(page, table, order, "scrolled to row 500")
    equal(page.evaluate("document.querySelectorAll('#tb-table [role=row]').length") < 80, True, "rows in the DOM")
    page.screenshot("table-scrolled")
    page.evaluate("document.getElementById('tb-scroll').focus()")
    page.key("End")
    last = [table.text(c, order[-1]) for c in table.cols]
    page.wait_for("JSON.stringify(memprofDebug.visibleRows().slice(-1)[0]) === %s" % json.dumps(json.dumps(last, ensure_ascii=False, separators=(",", ":"))),
                  what="the last row after End")

    name, text = R.download(browser, page, "#tb-csv", os.path.join(a.artifacts, "downloads"))
    equal(name, "memprof-table-out.bin.csv", "CSV file name")
    equal(text, table.csv(order), "downloaded CSV")
    R.theme_toggle(page, "table-dark")
    R.check_stats(page, d)
    page.check(allowed_requests=(R.url(path),))

    d = X.load(pdata)
    table = X.Table(X.Report(d))
    page = R.open_report(browser, ppath)
    equal(table.cols, ["size", "allocator", "count", "location"], "the data: no thread column")
    equal(page.evaluate("Array.from(document.querySelectorAll('[role=columnheader]')).map(h => h.textContent)"),
          [LABELS[c] for c in table.cols], "column headers without threads")
    expect("table: leaked memory" in page.evaluate("document.title"), "leaks title")
    expect_rows(page, table, table.order("size", True), "leaks table")
    filter_rows(page, "<script>")
    rows = table.order("size", True, table.filter("<script>"))
    expect(len(rows) == 1, "the data: one hostile row")
    expect_rows(page, table, rows, "hostile row")
    cell = page.evaluate("document.querySelector('#tb-scroll [role=row]:not([hidden]) [role=cell]:last-child').textContent")
    equal(cell, X.HOSTILE + " at evil/<img src=x onerror=alert(2)>.c:1", "hostile location cell")
    R.hostile_is_text(page)
    page.screenshot("table-leaks")
    page.check(allowed_requests=(R.url(ppath),))


if __name__ == "__main__":
    R.main(__doc__, {"basic": basic})
