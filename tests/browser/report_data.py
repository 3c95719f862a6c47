#!/usr/bin/env python3
"""The data embedded in a report page, as lines of text for the e2e tests' greps.

    report_data.py PAGE.html [--json OUT.json]

Reads the page's data element (share/templates/README.md, section 3) and
prints, one per line:

    report flamegraph mode=leaks inverted=0 split=0 temporal=0 threshold=0
    meta KEY=VALUE                  (every meta field; lists joined by spaces)
    node PATH total=BYTES/COUNT self=BYTES/COUNT [base=BYTES/COUNT]
    diff base=CAPTURE               (a differential flame graph; base= is the base's total)
    row THREAD KIND LOCATION bytes=BYTES count=COUNT
                                    (LOCATION then " called from CALLER" for a site called from Python)
    location function=NAME short=SHORT class=CLASS   (every location: its box name, its classes)
    fold group=NAME all_frames=0|1  (a flame graph the page folds: a Python program's)
    memory points=N last_us=T       (the time series; base_memory the same for a differential report)
    kinds NAME...
    timeline buckets=N intervals=M
    window peak B0 B1 bytes=BYTES   (temporal: what the page shows for the full range)
    bounds KEY=N...                 (what the report's bounds merged, when they merged anything)

PATH is the frames' function names from the root's child down, joined by
';' (a split tree starts with the thread label). LOCATION is "function at
file:line". With --json the data is also written out, for the browser checks.
"""
import argparse
import json
import re
import sys

import expect as X

OPEN = '<script type="application/json" id="memprof-data">'


def page_data(path):
    with open(path, encoding="utf-8") as f:
        page = f.read()
    start = page.index(OPEN) + len(OPEN)
    return json.loads(page[start:page.index("</script>", start)])


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("page")
    ap.add_argument("--json")
    a = ap.parse_args(argv)
    d = page_data(a.page)
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(d, f, ensure_ascii=False)
    rep = X.Report(d)
    out = ["report %s mode=%s inverted=%d split=%d temporal=%d threshold=%d" % (
        d["report"], d["mode"], d["inverted"], d["split_threads"], d["temporal"], d["temporary_threshold"])]
    for k, v in sorted(d["meta"].items()):
        out.append("meta %s=%s" % (k, " ".join(v) if isinstance(v, list) else
                                   str(v).lower() if isinstance(v, bool) else v))
    base = None
    if d.get("diff"):
        out.append("diff base=%s" % d.get("base_meta", {}).get("capture", ""))
        base = X.Tree.of(rep, d["tree"]["base_self_bytes"], d["tree"]["base_self_count"])
    if "tree" in d:
        t = X.Tree.of(rep)
        names = {0: []}
        for i in range(1, len(t.loc)):
            p = t.parent[i]
            head = [rep.thread_label(t.thread[i])] if p == 0 and t.thread else []
            names[i] = names[p] + head + [rep.fn[t.loc[i]]]
            own = (d["tree"]["self_bytes"][i], d["tree"]["self_count"][i])
            out.append("node %s total=%d/%d self=%d/%d" % (";".join(names[i]), t.bytes[i], t.count[i], own[0], own[1]) +
                       (" base=%d/%d" % (base.bytes[i], base.count[i]) if base else ""))
        out.append("node <root> total=%d/%d" % (t.bytes[0], t.count[0]) +
                   (" base=%d/%d" % (base.bytes[0], base.count[0]) if base else ""))
    if "rows" in d:
        r = d["rows"]
        out.append("kinds " + " ".join(d["kinds"]))
        for i in range(len(r["bytes"])):
            th = rep.thread_label(r["thread"][i]) if "thread" in r else "-"
            where = rep.where(r["location"][i])
            if "caller" in r and r["caller"][i] >= 0:
                where += " called from " + rep.where(r["caller"][i])
            out.append("row %s %s %s bytes=%d count=%d" % (th, d["kinds"][r["kind"][i]], where,
                                                          r["bytes"][i], r["count"][i]))
    cls = d["locations"].get("class")
    for l in range(len(rep.fn)):
        out.append("location function=%s short=%s class=%d" % (rep.fn[l], rep.short[l], cls[l] if cls else 0))
    if d.get("fold"):
        out.append("fold group=%s all_frames=%d" % (rep.fn[d["fold"]["group"]], d["fold"]["all_frames"]))
    for key in ("memory", "base_memory"):
        if key in d:
            ts = d[key]["time_us"]
            out.append("%s points=%d last_us=%d" % (key, len(ts), ts[-1] if ts else 0))
    if d.get("temporal"):
        tl = d["timeline"]
        nb = len(tl["hwm_bytes"])
        out.append("timeline buckets=%d intervals=%d" % (nb, len(tl["intervals"]["node"])))
        sb, _, best = X.window_values(d, 0, nb - 1)
        out.append("window %s 0 %d bytes=%d" % (d["mode"], nb - 1, sum(sb)))
    if d.get("bounds"):
        out.append("bounds " + " ".join("%s=%d" % kv for kv in sorted(d["bounds"].items())))
    sys.stdout.write("".join(re.sub(r"[\r\n]", " ", l) + "\n" for l in out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
