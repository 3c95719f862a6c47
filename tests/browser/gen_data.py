#!/usr/bin/env python3
"""Generate report data (share/templates/README.md, "Data") for the browser tests.

A deterministic synthetic program: a fixed skeleton of named call stacks with
known allocation patterns (including hostile and unicode symbol names), plus
an optional random bulk of unique stacks. Its allocation and free events are
then analysed here the way the contract defines it (peak, leaks, temporary,
temporal snapshots), so the JSON is self-consistent: the root of the tree is
the peak, the temporal intervals reproduce the tree over the full range.

    gen_data.py --report flamegraph [--mode peak|leaks|temporary] [--inverted]
                [--split-threads] [--temporal] [--stacks N] [--seed S] -o data.json
"""
import argparse
import bisect
import json
import random
import sys

DURATION_US = 10_000_000
HOSTILE = "</script><script>alert(1)</script>"
MODULE_APP = "/usr/bin/demo-server"
MODULE_LIBC = "/lib/x86_64-linux-gnu/libc.so.6"

# function, file, line, module
SKELETON_LOCATIONS = {
    "main": ("main", "app/main.c", 42, MODULE_APP),
    "run_server": ("run_server", "app/server.c", 120, MODULE_APP),
    "handle_request": ("handle_request", "app/server.c", 300, MODULE_APP),
    "parse_json": ("parse_json", "lib/report/json.c", 88, "/usr/lib/libjson.so.1"),
    "json_alloc_node": ("json_alloc_node", "lib/report/json.c", 40, "/usr/lib/libjson.so.1"),
    "build_response": ("build_response", "app/response.cc", 77, MODULE_APP),
    "vector_insert": ("std::vector<char, std::allocator<char> >::_M_realloc_insert",
                      "/usr/include/c++/12/bits/vector.tcc", 451, MODULE_APP),
    "worker_loop": ("worker_loop", "app/worker.c", 15, MODULE_APP),
    "cache_insert": ("cache_insert", "app/cache.c", 60, MODULE_APP),
    "init_config": ("init_config", "app/config.c", 9, MODULE_APP),
    "hostile": (HOSTILE, "evil/<img src=x onerror=alert(2)>.c", 1, "/usr/lib/libevil.so"),
    "unicode": ("naïve_größe_日本語_🚀", "src/ünïcode.c", 7, MODULE_APP),
    "separators": ("line\u2028sep\u2029end", "src/sep.c", 3, MODULE_APP),
    "quotes": ('say "hi" & <b>bold</b>', "src/quote's.c", 5, MODULE_APP),
    "formula": ('=HYPERLINK("http://x.invalid","y")', "src/csv,file.c", 11, MODULE_APP),
    "unknown": ("0x7f3a12345678", "", 0, MODULE_LIBC),
}

THREADS = [(4242, "main"), (4243, "worker-1"), (4244, "décodeur-ü")]
KINDS = ["malloc", "calloc", "realloc", "mmap", "operator new"]

# (path, threads, kind, count, size, pattern). Patterns (times in seconds):
#   phase_a: live from about 0.5..3.5, the local peak of the first phase
#   phase_b: live from about 5..8, the global peak
#   leak:    never freed
#   short:   freed right after being allocated (temporary allocations)
#   steady:  long-lived, freed before the end
SKELETON = [
    (["main", "run_server", "handle_request", "parse_json", "json_alloc_node"], [0], 0, 40, 8192, "phase_a"),
    (["main", "run_server", "handle_request", "parse_json"], [0], 1, 10, 4096, "phase_a"),
    (["main", "run_server", "handle_request", "build_response", "vector_insert"], [0], 4, 30, 2048, "short"),
    (["main", "run_server", "handle_request", "build_response"], [0], 2, 6, 1000, "steady"),
    (["main", "worker_loop", "cache_insert"], [1, 2], 0, 60, 16384, "phase_b"),
    (["main", "worker_loop", "hostile"], [1], 0, 5, 65536, "phase_b"),
    (["main", "worker_loop", "hostile"], [1], 0, 2, 3000, "leak"),
    (["main", "run_server", "unicode"], [2], 1, 4, 50000, "phase_b"),
    (["main", "run_server", "separators"], [0], 0, 3, 7000, "steady"),
    (["main", "init_config", "quotes"], [0], 0, 3, 20000, "leak"),
    (["main", "init_config", "formula"], [0], 3, 2, 131072, "leak"),
    (["main", "unknown"], [0], 0, 7, 333, "short"),
]

WORDS_V = ["read", "parse", "load", "build", "make", "copy", "grow", "scan", "hash", "sort",
           "emit", "fill", "split", "merge", "decode", "encode", "open", "push", "map", "walk"]
WORDS_N = ["buffer", "node", "table", "string", "token", "frame", "block", "entry", "list",
           "image", "record", "chunk", "field", "index", "queue", "page", "cell", "tree"]
BULK_MODULES = [MODULE_APP, "/usr/lib/libjson.so.1", "/usr/lib/x86_64-linux-gnu/libz.so.1",
                MODULE_LIBC, "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"]
BULK_EXT = [".c", ".c", ".cc", ".cpp", ".rs", ".h", ""]


class Interner:
    """Numbers values in the order they are first asked for."""

    def __init__(self):
        self.items, self.index = [], {}

    def __call__(self, value):
        if value not in self.index:
            self.index[value] = len(self.items)
            self.items.append(value)
        return self.index[value]


class Program:
    """Locations, a trie of call stacks (caller first), allocations."""

    def __init__(self):
        self.location = Interner()   # (function, file, line, module) -> index
        self.locs = self.location.items
        self.parent = [-1]      # stack trie; node 0 is the empty stack
        self.loc = [-1]
        self.child = [{}]
        self.allocs = []        # [stack, thread, kind, size, t_alloc, t_free or None]

    def node(self, parent, loc):
        c = self.child[parent].get(loc)
        if c is None:
            c = len(self.parent)
            self.parent.append(parent)
            self.loc.append(loc)
            self.child.append({})
            self.child[parent][loc] = c
        return c

    def stack(self, locs):
        n = 0
        for loc in locs:
            n = self.node(n, loc)
        return n

    def path(self, n):
        out = []
        while n > 0:
            out.append(self.loc[n])
            n = self.parent[n]
        out.reverse()
        return out


def lifetime(rng, pattern):
    if pattern == "phase_a":
        t = rng.uniform(0.3e6, 2.0e6)
        return t, rng.uniform(3.0e6, 3.6e6)
    if pattern == "phase_b":
        t = rng.uniform(5.0e6, 6.5e6)
        return t, rng.uniform(7.5e6, 8.2e6)
    if pattern == "leak":
        return rng.uniform(0.1e6, 9.5e6), None
    if pattern == "short":
        t = rng.uniform(0.1e6, 9.5e6)
        return t, t + 0.01
    t = rng.uniform(0.1e6, 4.0e6)
    return t, t + rng.uniform(1.0e6, 5.0e6)


def build_program(nstacks, seed, bulk_leak):
    rng = random.Random(seed)
    p = Program()
    for path, threads, kind, count, size, pattern in SKELETON:
        st = p.stack([p.location(SKELETON_LOCATIONS[k]) for k in path])
        for i in range(count):
            t0, t1 = lifetime(rng, pattern)
            p.allocs.append([st, threads[i % len(threads)], kind, size, t0, t1])
    if nstacks > 0:
        bulk_stacks(p, rng, nstacks, bulk_leak)
    return p


def bulk_pool(rng, nstacks):
    """The locations of the random stacks: (function, file, line, module), nstacks / 3 of them."""
    pool = []
    for i in range(max(64, nstacks // 3)):
        v, n = rng.choice(WORDS_V), rng.choice(WORDS_N)
        ext = rng.choice(BULK_EXT)
        f = "%s_%s_%d" % (v, n, i)
        file = "src/%s/%s%s" % (n, v, ext) if ext else ""
        pool.append((f, file, rng.randint(1, 2000) if file else 0, rng.choice(BULK_MODULES)))
    return pool


def bulk_tree(rng, top, nstacks, pool, child):
    """A random tree of about nstacks leaves below node top (at depth 2), each
    node's children at distinct entries of pool; child(node, entry) makes a
    node. Returns the leaves."""
    # Split the budget of leaves recursively; every node may also allocate itself.
    work = [(top, nstacks, 2)]
    leaves = []
    while work:
        node, budget, depth = work.pop()
        if budget <= 1 or depth >= 40:
            leaves.append(node)
            continue
        k = 1 if rng.random() < 0.45 else min(budget, rng.randint(2, 8))
        used = set()
        rest = budget
        for j in range(k):
            share = rest if j == k - 1 else max(1, int(rest * rng.uniform(0.1, 0.6)))
            share = min(share, rest - (k - j - 1))
            rest -= share
            loc = rng.choice(pool)
            while loc in used:
                loc = rng.choice(pool)
            used.add(loc)
            work.append((child(node, loc), share, depth + 1))
    return leaves


def bulk_stacks(p, rng, nstacks, bulk_leak):
    """nstacks unique random stacks below main -> bulk_root, small sizes;
    with bulk_leak every one of them leaks, so a leaks report shows them all."""
    pool = [p.location(loc) for loc in bulk_pool(rng, nstacks)]
    top = p.stack([p.location(SKELETON_LOCATIONS["main"]),
                   p.location(("bulk_root", "app/bulk.c", 1, MODULE_APP))])
    leaves = bulk_tree(rng, top, nstacks, pool, p.node)
    leaves.sort()
    for st in leaves:
        thread = rng.randrange(len(THREADS))
        kind = rng.randrange(len(KINDS))
        size = rng.choice([16, 24, 32, 48, 64, 100, 128, 256, 512, 1000, 4096])
        t0 = rng.uniform(0.1e6, 9.5e6)
        t1 = None if bulk_leak or rng.random() < 0.3 else t0 + rng.uniform(0.0, 4.0e6)
        p.allocs.append([st, thread, kind, size, t0, t1])


class Analysis:
    """Replays the events in order: peak, leaks, temporary, series, snapshots."""

    def __init__(self, p, threshold, samples, buckets):
        events = []
        for i, a in enumerate(p.allocs):
            events.append((a[4], 0, i))
            if a[5] is not None:
                events.append((min(a[5], DURATION_US - 1.0), 1, i))
        events.sort()
        # Strictly increasing integer times: event order is the truth.
        times = []
        last = -1
        for t, _, _ in events:
            last = max(int(t), last + 1)
            times.append(last)
        self.end_us = max(DURATION_US, last + 1)
        n = len(p.allocs)
        self.apos = [0] * n
        self.fpos = [None] * n
        for pos, (_, kind, i) in enumerate(events):
            if kind == 0:
                self.apos[i] = pos
            else:
                self.fpos[i] = pos
        heap = 0
        peak = -1
        peak_pos = -1
        nallocs = 0
        ordinal = [0] * n
        between = [None] * n
        heap_after = []
        for pos, (_, kind, i) in enumerate(events):
            size = p.allocs[i][3]
            if kind == 0:
                heap += size
                ordinal[i] = nallocs
                nallocs += 1
                if heap > peak:
                    peak, peak_pos = heap, pos
            else:
                heap -= size
                between[i] = nallocs - ordinal[i] - 1
            heap_after.append(heap)
        self.peak_bytes = peak
        self.peak_pos = peak_pos
        self.peak_us = times[peak_pos]
        self.times = times
        self.heap_after = heap_after
        self.leaked = [self.fpos[i] is None for i in range(n)]
        self.temporary = [between[i] is not None and between[i] <= threshold for i in range(n)]
        self.live_at_peak = [self.apos[i] <= peak_pos and (self.fpos[i] is None or self.fpos[i] > peak_pos)
                             for i in range(n)]
        self.series(samples)
        self.snapshots(buckets)

    def heap_at(self, t):
        """Heap after every event at or before time t."""
        k = bisect.bisect_right(self.times, t)
        return self.heap_after[k - 1] if k else 0

    def series(self, samples):
        self.mem_t, self.mem_heap, self.mem_max, self.mem_rss = [], [], [], []
        prev = -1
        for s in range(samples):
            t = int(self.end_us * s / max(1, samples - 1))
            lo = bisect.bisect_right(self.times, prev)
            hi = bisect.bisect_right(self.times, t)
            h = self.heap_at(t)
            hmax = max([h] + self.heap_after[lo:hi])
            self.mem_t.append(t)
            self.mem_heap.append(h)
            self.mem_max.append(hmax)
            self.mem_rss.append(3 * 1048576 + hmax + hmax // 8 + (s * 7919 % 13) * 4096)
            prev = t

    def snapshots(self, nb):
        """Buckets of time, the high-water mark of each and the half index of
        every event: 2b up to and including bucket b's high-water mark, 2b+1 after."""
        self.bucket_us = [int(self.end_us * b / nb) for b in range(nb)] + [self.end_us]
        self.hwm_us, self.hwm_bytes = [], []
        half = [0] * len(self.times)
        k = 0
        heap = 0
        for b in range(nb):
            start = k
            best, best_k = heap, -1          # -1: at the bucket start, before its events
            while k < len(self.times) and self.times[k] < self.bucket_us[b + 1]:
                if self.heap_after[k] > best:
                    best, best_k = self.heap_after[k], k
                heap = self.heap_after[k]
                k += 1
            for j in range(start, k):
                half[j] = 2 * b if j <= best_k else 2 * b + 1
            self.hwm_bytes.append(best)
            self.hwm_us.append(self.times[best_k] if best_k >= 0 else self.bucket_us[b])
        self.half = half


def thread_key(split, thread):
    return thread if split else -1


def build_output(p, an, args):
    s, oloc = Interner(), Interner()
    strings, loc_used = s.items, oloc.items
    value = {"peak": an.live_at_peak, "leaks": an.leaked, "temporary": an.temporary}[args.mode]

    out = {
        "version": 1,
        "report": args.report,
        "mode": args.mode,
        "temporary_threshold": args.threshold if args.mode == "temporary" else 0,
        "inverted": bool(args.inverted),
        "split_threads": bool(args.split_threads),
        "temporal": bool(args.temporal),
    }
    tracked = [True] * len(p.allocs)
    if args.temporal:
        tracked = [an.half[an.apos[i]] != (an.half[an.fpos[i]] if an.fpos[i] is not None else -1)
                   for i in range(len(p.allocs))]

    if args.report == "flamegraph":
        # Output trie over (thread, locations in display order).
        kids = [{}]
        okey = [(-1, -1)]
        sbytes, scount = [0], [0]
        node_of = [0] * len(p.allocs)
        for i, a in enumerate(p.allocs):
            if not (value[i] or (args.temporal and tracked[i])):
                continue
            path = p.path(a[0])
            if args.inverted:
                path.reverse()
            n = 0
            th = thread_key(args.split_threads, a[1])
            for loc in path:
                key = (th, loc)
                c = kids[n].get(key)
                if c is None:
                    c = len(okey)
                    kids[n][key] = c
                    kids.append({})
                    okey.append(key)
                    sbytes.append(0)
                    scount.append(0)
                n = c
            node_of[i] = n
            if value[i]:
                sbytes[n] += a[3]
                scount[n] += 1
        total = [0] * len(okey)
        # Inclusive bytes by a post-order walk.
        stack = [(0, False)]
        while stack:
            n, done = stack.pop()
            if done:
                total[n] = sbytes[n] + sum(total[c] for c in kids[n].values())
            else:
                stack.append((n, True))
                stack.extend((c, False) for c in kids[n].values())

        def child_order(n):
            return sorted(kids[n].values(), key=lambda c: (-total[c], p.locs[okey[c][1]][0], okey[c]))

        depth, location, thread, selfb, selfc = [], [], [], [], []
        pre = [-1] * len(okey)
        stack = [(0, 0)]
        while stack:
            n, d = stack.pop()
            pre[n] = len(depth)
            depth.append(d)
            th, loc = okey[n]
            location.append(oloc(loc) if loc >= 0 else -1)
            thread.append(th)
            selfb.append(sbytes[n])
            selfc.append(scount[n])
            for c in reversed(child_order(n)):
                stack.append((c, d + 1))
        out["tree"] = {"depth": depth, "location": location, "self_bytes": selfb, "self_count": selfc}
        if args.split_threads:
            out["tree"]["thread"] = thread
        if args.temporal:
            agg = {}
            for i, a in enumerate(p.allocs):
                if not tracked[i]:
                    continue
                a2 = an.half[an.apos[i]]
                f2 = an.half[an.fpos[i]] if an.fpos[i] is not None else -1
                key = (pre[node_of[i]], a2, f2)
                c = agg.setdefault(key, [0, 0])
                c[0] += 1
                c[1] += a[3]
            keys = sorted(agg)
            out["timeline"] = {
                "bucket_us": an.bucket_us,
                "hwm_us": an.hwm_us,
                "hwm_bytes": an.hwm_bytes,
                "intervals": {
                    "node": [k[0] for k in keys],
                    "alloc": [k[1] for k in keys],
                    "free": [k[2] for k in keys],
                    "count": [agg[k][0] for k in keys],
                    "bytes": [agg[k][1] for k in keys],
                },
            }
    else:
        rows = {}
        for i, a in enumerate(p.allocs):
            if not value[i]:
                continue
            key = (thread_key(args.split_threads, a[1]), a[2], p.path(a[0])[-1])
            r = rows.setdefault(key, [0, 0])
            r[0] += a[3]
            r[1] += 1
        keys = sorted(rows, key=lambda k: (-rows[k][0], p.locs[k[2]][0], k))
        out["kinds"] = KINDS
        out["rows"] = {
            "kind": [k[1] for k in keys],
            "location": [oloc(k[2]) for k in keys],
            "bytes": [rows[k][0] for k in keys],
            "count": [rows[k][1] for k in keys],
        }
        if args.split_threads:
            out["rows"] = {"thread": [k[0] for k in keys], **out["rows"]}

    total_bytes = sum(a[3] for a in p.allocs)
    out["meta"] = {
        "argv": ["./demo-server", "--port", "8080", "--name", HOSTILE, "naïve ✓"],
        "pid": 4242,
        "hostname": "build-host.example",
        "start": "2026-11-22T07:22:21.250Z",
        "duration_us": an.end_us,
        "exit": "exited with status 0",
        "since_attach": bool(args.since_attach),
        "total_allocations": len(p.allocs),
        "total_bytes": total_bytes,
        "peak_bytes": an.peak_bytes,
        "peak_time_us": an.peak_us,
        "leaked_bytes": sum(a[3] for i, a in enumerate(p.allocs) if an.leaked[i]),
        "leaked_blocks": sum(an.leaked),
        "unknown_frees": 3 if args.since_attach else 0,
        "capture": "out.bin",
        "tool": "memprof 0.1.0",
    }
    out["strings"] = strings  # filled below; the order of keys does not matter
    out["locations"] = {
        "function": [s(p.locs[l][0]) for l in loc_used],
        "file": [s(p.locs[l][1]) for l in loc_used],
        "line": [p.locs[l][2] for l in loc_used],
        "module": [s(p.locs[l][3]) for l in loc_used],
    }
    out["threads"] = {"tid": [t for t, _ in THREADS], "name": [s(n) for _, n in THREADS]}
    out["memory"] = {"time_us": an.mem_t, "rss": an.mem_rss, "heap": an.mem_heap, "heap_max": an.mem_max}
    return out


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--report", choices=["flamegraph", "table"], default="flamegraph")
    ap.add_argument("--mode", choices=["peak", "leaks", "temporary"], default="peak")
    ap.add_argument("--threshold", type=int, default=1, help="temporary allocation threshold")
    ap.add_argument("--inverted", action="store_true")
    ap.add_argument("--split-threads", action="store_true")
    ap.add_argument("--temporal", action="store_true")
    ap.add_argument("--since-attach", action="store_true")
    ap.add_argument("--stacks", type=int, default=0, help="random unique stacks added to the skeleton")
    ap.add_argument("--bulk-leak", action="store_true", help="the random stacks all leak")
    ap.add_argument("--samples", type=int, default=400, help="memory series points")
    ap.add_argument("--buckets", type=int, default=100, help="temporal buckets")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args(argv)
    if args.temporal and (args.report != "flamegraph" or args.mode == "temporary"):
        ap.error("--temporal needs --report flamegraph and --mode peak or leaks")
    p = build_program(args.stacks, args.seed, args.bulk_leak)
    an = Analysis(p, args.threshold, args.samples, args.buckets)
    out = build_output(p, an, args)
    with open(args.output, "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, separators=(",", ":"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
