#!/usr/bin/env python3
"""Size and load time of reports memprof itself writes from a big capture (figures, not a test).

    bench_capture.py --memprof PATH --mkcapture PATH [--stacks N] [--out DIR] [--seed S]

Writes the text of a capture with N unique call stacks (a random tree of
call sites over N/3 symbolized locations below main, one leaked allocation
per stack, ticks every 10 ms), compiles it with tests/tools/mkcapture, has
memprof write `flamegraph --leaks` (every stack shown), `flamegraph
--temporal` and `table --leaks` reports of it (the C renderer), and loads
each in headless Chromium. Prints the sizes, memprof's time and peak memory,
and load to first draw / first contentful paint.
"""
import argparse
import os
import random
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench  # noqa: E402
import cdp  # noqa: E402
import gen_data  # noqa: E402
import report_data  # noqa: E402

BASE = 0x555555554000
SIZES = [16, 24, 32, 48, 64, 100, 128, 256, 512, 1000, 4096]


def capture_text(n, seed, path):
    """A capture whose stacks are gen_data's bulk tree: about 1.7 nodes per stack."""
    rng = random.Random(seed)
    lines = ['HEADER format=1.0 pid=4242 ppid=1 main_tid=4242 mode=run start_time=2026-11-22T08:00:00.000000Z '
             'flags=symbolized hostname="bench" exe="/usr/bin/bench" argv=["/usr/bin/bench","--stacks","%d"]' % n,
             'THREAD index=0 tid=4242 name="bench"',
             'MODULE id=1 base=0x%x path="/usr/bin/bench" build_id=- segments=[0x1000+0x%x:r-x]' % (BASE, 16 * (n + 16))]
    strings = {}

    def sid(s):
        if s not in strings:
            strings[s] = len(strings) + 1
            lines.append('STRING id=%d "%s"' % (strings[s], s))
        return strings[s]

    def symbol(i, fn, file, line):
        sid(fn)
        if file:
            sid(file)
        lines.append('SYMBOL ip=0x%x module=1 offset=0x%x frames=["%s" %s:%d:0]' % (
            BASE + 0x1000 + 16 * i, 0x1000 + 16 * i, fn, '"%s"' % file if file else "?", line))
        return BASE + 0x1000 + 16 * i

    ip_main = symbol(0, "main", "app/main.c", 42)
    ip_root = symbol(1, "bulk_root", "app/bulk.c", 1)
    pool = [symbol(i + 2, f, file, line) for i, (f, file, line, _) in enumerate(gen_data.bulk_pool(rng, n))]
    nodes = [(0, ip_main), (1, ip_root)]          # trace node i + 1: (parent, ip)

    def child(parent, ip):
        nodes.append((parent, ip))
        return len(nodes)
    leaves = gen_data.bulk_tree(rng, 2, n, pool, child)
    for i, (parent, ip) in enumerate(nodes):
        lines.append("TRACE node=%d parent=%d ip=0x%x" % (i + 1, parent, ip))
    # Unique stacks: the leaves, and inner nodes (which allocate too) up to n.
    inner = sorted(set(range(3, len(nodes) + 1)) - set(leaves))
    leaves = sorted(leaves + inner[:max(0, n - len(leaves))])
    t = 0
    for i, leaf in enumerate(leaves):
        if i % 1000 == 0:
            t += 10000
            lines.append("TICK time_us=%d rss=%d" % (t, 8 << 20))
        lines.append("ALLOC thread=0 kind=malloc addr=0x%x size=%d stack=%d" % (0x10000 + 16 * i, rng.choice(SIZES), leaf))
    lines.append("TRAILER exit_code=0 allocs=%d frees=0 duration_us=%d end=exit" % (len(leaves), t + 10000))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return len(nodes), len(leaves), len(pool)


def timed_run(argv):
    """Wall time and peak RSS (KiB, from GNU time: a child's own ru_maxrss
    would count the pages of this big Python process it was forked from)."""
    gnu_time = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None
    t = time.monotonic()
    p = subprocess.run(([gnu_time, "-f", "%M"] if gnu_time else []) + argv, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    secs = time.monotonic() - t
    return secs, int(p.stderr.split()[-1]) if gnu_time else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--memprof", required=True)
    ap.add_argument("--mkcapture", required=True)
    ap.add_argument("--stacks", type=int, default=100000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="bench-html-capture")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    P = lambda n: os.path.abspath(os.path.join(a.out, n))
    rows = []
    ntrace, nleaves, nloc = capture_text(a.stacks, a.seed, P("big.txt"))
    subprocess.run([a.mkcapture, "-f", "-o", P("big.bin"), P("big.txt")], check=True)
    rows.append(("capture: trace nodes / unique stacks / locations", "{:,} / {:,} / {:,}".format(ntrace, nleaves, nloc)))
    rows.append(("  capture size", bench.kib(os.path.getsize(P("big.bin")))))
    reports = [("flamegraph --leaks", "fg.html"), ("flamegraph --temporal", "tp.html"), ("table --leaks", "tb.html")]
    for args, name in reports:
        secs, rss = timed_run([a.memprof] + args.split() + ["-f", "-o", P(name), P("big.bin")])
        d = report_data.page_data(P(name))
        what = "%s nodes" % "{:,}".format(len(d["tree"]["depth"])) if "tree" in d else \
            "%s rows" % "{:,}".format(len(d["rows"]["bytes"]))
        rows.append(("memprof %s: %s" % (args, what), "%.2f s, peak RSS %s" % (secs, bench.kib(rss * 1024))))
        size = os.path.getsize(P(name))
        rows.append(("  HTML size", "%s (%s bytes)" % (bench.kib(size), "{:,}".format(size))))
    with cdp.Browser(artifacts=a.out, timeout=120, limit=1200) as b:
        rows.append(("browser", b.version))
        for args, name in reports:
            first, frame, fcp = bench.load(b, P(name))
            rows.append(("%s: load to first draw / next frame / first contentful paint" % args,
                         "%.0f / %.0f / %.0f ms" % (first, frame, fcp)))
    bench.print_rows(rows)
    return 0


if __name__ == "__main__":
    cdp.run(main)
