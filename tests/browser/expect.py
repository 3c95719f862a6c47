"""What a report page must show, computed from its data independently of the page's code."""
import decimal
import json

HOSTILE = "</script><script>alert(1)</script>"


def is_label(label, name):
    """Whether a box's label names function name: itself, or with the line that tells it from
    its siblings ("main:15")."""
    return label == name or (label.startswith(name + ":") and label[len(name) + 1:].isdigit())


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def num(n):
    return "{:,}".format(int(n))


def to_fixed(v, digits):
    """JavaScript's Number.prototype.toFixed: the exact value, ties rounded up
    (Python's "%.1f" rounds them to even: 31.25 gives 31.2, the page 31.3)."""
    q = decimal.Decimal(1).scaleb(-digits)
    return str(decimal.Decimal(v).quantize(q, rounding=decimal.ROUND_HALF_UP))


def human(n):
    """MP.bytes: binary units, three significant digits."""
    units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"]
    v, i = abs(n), 0
    if v < 1024:
        return "%d B" % n
    while v >= 1024 and i < len(units) - 1:
        v /= 1024
        i += 1
    s = to_fixed(v, 0) if v >= 100 else to_fixed(v, 1) if v >= 10 else to_fixed(v, 2)
    return ("-" if n < 0 else "") + s + " " + units[i]


def exact(n):
    return human(n) + (" (%s B)" % num(n) if abs(n) >= 1024 else "")


def seconds(us):
    """MP.time for times from 1 s to a minute."""
    assert 1e6 <= us < 60e6
    return "%.2f s" % (us / 1e6)


class Report:
    def __init__(self, d):
        self.d = d
        s = d["strings"]
        L = d["locations"]
        self.fn = [s[i] or "???" for i in L["function"]]
        # The boxes' names: a C++ name's template arguments elided, when the data has them.
        self.short = [s[i] or "???" for i in L["short"]] if "short" in L else self.fn
        self.file = [s[i] for i in L["file"]]
        self.line = L["line"]
        self.module = [s[i] for i in L["module"]]
        th = d["threads"]
        self.tids = th["tid"]
        self.tnames = [s[i] for i in th["name"]]

    def file_line(self, l):
        f = self.file[l]
        return (f + ":%d" % self.line[l] if self.line[l] > 0 else f) if f else ""

    def where(self, l):
        fl = self.file_line(l)
        return self.fn[l] + (" at " + fl if fl else "")

    def thread_label(self, t):
        return "%s (tid %d)" % (self.tnames[t], self.tids[t]) if self.tnames[t] else "tid %d" % self.tids[t]

    def label(self, loc):
        return "total" if loc < 0 else self.short[loc]

    def name(self, loc):
        """The whole name, as tooltips and announcements have it."""
        return "total" if loc < 0 else self.fn[loc]


class Tree:
    """Preorder nodes with parent, children, inclusive bytes and counts."""

    def __init__(self, rep, depth, loc, selfb, selfc, thread=None):
        self.rep = rep
        n = len(depth)
        self.parent = [-1] * n
        path = []
        for i in range(n):
            del path[depth[i]:]
            self.parent[i] = path[-1] if path else -1
            path.append(i)
        self.depth, self.loc, self.thread = depth, loc, thread
        self.bytes, self.count = list(selfb), list(selfc)
        self.children = [[] for _ in range(n)]
        for i in range(n - 1, 0, -1):
            p = self.parent[i]
            self.bytes[p] += self.bytes[i]
            self.count[p] += self.count[i]
        for i in range(1, n):
            self.children[self.parent[i]].append(i)
        # The boxes' names (flamegraph.js labelsOf): siblings of one name standing for
        # different lines get each its line.
        self.labels = [rep.label(l) for l in loc]
        for kids in self.children:
            lines = {}
            for c in kids:
                lines.setdefault(self.labels[c], set()).add(rep.line[self.loc[c]])
            for c in kids:
                name = rep.label(self.loc[c])
                if len(lines.get(name, ())) > 1 and rep.line[self.loc[c]] > 0:
                    self.labels[c] = "%s:%d" % (name, rep.line[self.loc[c]])

    @classmethod
    def of(cls, rep, selfb=None, selfc=None):
        t = rep.d["tree"]
        return cls(rep, t["depth"], t["location"], selfb or t["self_bytes"], selfc or t["self_count"], t.get("thread"))

    def find(self, name):
        return [i for i in range(len(self.loc)) if is_label(self.labels[i], name)]

    def search(self, query):
        """(matching frames, bytes with each matching subtree counted once)."""
        q = query.strip().lower()
        hit = [i > 0 and self.bytes[i] > 0 and q in (self.rep.fn[self.loc[i]] + "\n" + self.rep.file_line(self.loc[i])).lower()
               for i in range(len(self.loc))]
        total = 0
        stack = [0]
        while stack:
            i = stack.pop()
            if hit[i]:
                total += self.bytes[i]
            else:
                stack.extend(self.children[i])
        return sum(hit), total

    def thread_total(self, t):
        return sum(self.bytes[c] for c in self.children[0] if self.thread[c] == t)

    def _rebuild(self, keep, key):
        """A new tree of the nodes kept, merged by key(node) under the same new parent."""
        ids, depth, loc, sb, sc = {}, [0], [-1], [self.bytes[0] - sum(self.bytes[c] for c in self.children[0])], [0]
        newid = {0: 0}
        order = []
        for i in range(1, len(self.loc)):
            if not keep(i):
                continue
            k = (newid[self.parent[i]], key(i))
            if k not in ids:
                ids[k] = len(depth)
                depth.append(depth[k[0]] + 1)
                loc.append(self.loc[i])
                sb.append(0)
                sc.append(0)
            newid[i] = ids[k]
            own = self.bytes[i] - sum(self.bytes[c] for c in self.children[i])
            ownc = self.count[i] - sum(self.count[c] for c in self.children[i])
            sb[ids[k]] += own
            sc[ids[k]] += ownc
            order.append(i)
        # Preorder again: depth-first from the new root.
        kids = [[] for _ in depth]
        par = {v: k[0] for k, v in ids.items()}
        for v in range(1, len(depth)):
            kids[par[v]].append(v)
        pre, stack = [], [0]
        while stack:
            v = stack.pop()
            pre.append(v)
            stack.extend(reversed(kids[v]))
        return Tree(self.rep, [depth[v] for v in pre], [loc[v] for v in pre], [sb[v] for v in pre], [sc[v] for v in pre])

    def folded(self):
        """The tree the page shows folded (share/templates/README.md, "Folding"), worked out
        here from each node's path: its frames of class 1 left out, and a path with a frame of
        class 4 but none of class 2 under fold.group (at its end in an inverted tree)."""
        d = self.rep.d
        cls, group, inverted = d["locations"]["class"], d["fold"]["group"], d.get("inverted")
        own = {}
        state = {0: ((), 0)}
        for i in range(1, len(self.loc)):
            kept, has = state[self.parent[i]]
            c = cls[self.loc[i]] if self.loc[i] >= 0 else 0
            has |= (1 if c & 2 else 0) | (2 if c & 4 else 0)
            if not c & 1:
                kept = kept + (self.loc[i],)
            state[i] = (kept, has)
            sb = self.bytes[i] - sum(self.bytes[x] for x in self.children[i])
            sc = self.count[i] - sum(self.count[x] for x in self.children[i])
            path = kept
            if has == 2:
                # Outermost, inside a process's frame (bit 8) when the stack has one.
                proc = 1 if kept and cls[kept[-1 if inverted else 0]] & 8 else 0
                if inverted:
                    path = kept[:len(kept) - proc] + (group,) + kept[len(kept) - proc:]
                else:
                    path = kept[:proc] + (group,) + kept[proc:]
            key = (self.thread[i] if self.thread else -1, path)
            v = own.setdefault(key, [0, 0])
            v[0] += sb
            v[1] += sc
        # A trie of (thread, path prefix), then preorder, children by bytes.
        nodes = {(-2, ()): [0, 0, []]}
        total = {}
        for (th, path), (sb, sc) in own.items():
            parent = (-2, ())
            for k in range(1, len(path) + 1):
                key = (th, path[:k])
                if key not in nodes:
                    nodes[key] = [0, 0, []]
                    nodes[parent][2].append(key)
                parent = key
            nodes[parent][0] += sb
            nodes[parent][1] += sc
            for k in range(0, len(path) + 1):
                key = (th, path[:k]) if k else (-2, ())
                total[key] = total.get(key, 0) + sb
        depth, loc, selfb, selfc, thread = [], [], [], [], []
        stack = [((-2, ()), 0)]
        while stack:
            key, dep = stack.pop()
            depth.append(dep)
            loc.append(key[1][-1] if key[1] else -1)
            thread.append(key[0] if key[1] else -1)
            selfb.append(nodes[key][0])
            selfc.append(nodes[key][1])
            kids = sorted(nodes[key][2], key=lambda k: -total[k])
            stack.extend((k, dep + 1) for k in reversed(kids))
        return Tree(self.rep, depth, loc, selfb, selfc, thread if self.thread else None)

    def merged(self):
        """All threads: one node per call path."""
        return self._rebuild(lambda i: True, lambda i: self.loc[i])

    def only(self, t):
        return self._rebuild(lambda i: self.thread[i] == t, lambda i: (self.thread[i], self.loc[i]))

    def aggregates(self, z, width, minw=2):
        """(parent label, frames, bytes) of the boxes standing for runs of frames
        narrower than minw, by the page's own arithmetic (the same doubles)."""
        out = []
        scale = width / self.bytes[z] if self.bytes[z] > 0 else 0
        stack = [(z, 0.0)]
        while stack:
            i, x = stack.pop()
            cx, run_x, run_n, run_b = x, 0.0, 0, 0

            def flush():
                if cx - run_x >= 0.5:
                    out.append((self.labels[i], run_n, run_b))
            for c in self.children[i]:
                cw = self.bytes[c] * scale
                if cw >= minw:
                    if run_n:
                        flush()
                        run_n = 0
                    stack.append((c, cx))
                elif cw > 0:
                    if not run_n:
                        run_x, run_b = cx, 0
                    run_n += 1
                    run_b += self.bytes[c]
                cx += cw
            if run_n:
                flush()
        return sorted(out)

    def drawn(self, z, width, minw=2):
        """Labels of the frames the page draws when zoomed into z on a canvas this wide."""
        out = []
        a = self.parent[z]
        while a >= 0:
            out.append(self.labels[a])
            a = self.parent[a]
        scale = width / self.bytes[z] if self.bytes[z] > 0 else 0
        stack = [z]
        while stack:
            i = stack.pop()
            out.append(self.labels[i])
            stack.extend(c for c in self.children[i] if self.bytes[c] * scale >= minw)
        return sorted(out)


def window_values(d, b0, b1):
    """Self bytes and counts per tree node for the buckets [b0, b1], and the snapshot shown."""
    tl = d["timeline"]
    iv = tl["intervals"]
    n = len(d["tree"]["depth"])
    sb, sc = [0] * n, [0] * n
    if d["mode"] == "leaks":
        lo, hi, best = 2 * b0, 2 * b1 + 1, -1
        keep = lambda a, f: lo <= a <= hi and (f < 0 or f > hi)
    else:
        best = max(range(b0, b1 + 1), key=lambda b: (tl["hwm_bytes"][b], -b))
        s = 2 * best
        keep = lambda a, f: a <= s and (f < 0 or f > s)
    for node, a, f, c, b in zip(iv["node"], iv["alloc"], iv["free"], iv["count"], iv["bytes"]):
        if keep(a, f):
            sb[node] += b
            sc[node] += c
    return sb, sc, best


def csv_field(v):
    if isinstance(v, int):
        return str(v)
    s = str(v)
    if s[:1] in ("=", "+", "-", "@", "\t", "\r"):
        s = "'" + s
    return '"' + s.replace('"', '""') + '"' if any(c in s for c in '",\r\n') else s


def csv(header, rows):
    return "".join(",".join(csv_field(v) for v in r) + "\r\n" for r in [header] + rows)


def memory_csv(d):
    m = d["memory"]
    cols = [m["time_us"], m["rss"], m["heap"]] + ([m["heap_max"]] if "heap_max" in m else [])
    header = ["time_us", "rss_bytes", "heap_bytes"] + (["heap_max_bytes"] if "heap_max" in m else [])
    return csv(header, [list(r) for r in zip(*cols)])


class Table:
    """Rows of the table page: text per column, sorting and filtering as specified."""

    def __init__(self, rep):
        self.rep = rep
        d = rep.d
        self.r = d["rows"]
        self.kinds = d["kinds"]
        self.split = d["split_threads"] and "thread" in self.r
        self.n = len(self.r["bytes"])
        self.cols = (["thread"] if self.split else []) + ["size", "allocator", "count", "location"]

    def text(self, col, i):
        r = self.r
        if col == "thread":
            return self.rep.thread_label(r["thread"][i])
        if col == "size":
            return human(r["bytes"][i])
        if col == "allocator":
            return self.kinds[r["kind"][i]]
        if col == "count":
            return num(r["count"][i])
        return self.rep.where(r["location"][i])

    def key(self, col, i):
        if col == "size":
            return self.r["bytes"][i]
        if col == "count":
            return self.r["count"][i]
        # Text columns: UTF-16 code unit order of the text, then the dictionary index.
        ref = {"thread": "thread", "allocator": "kind", "location": "location"}[col]
        return (self.text(col, i).encode("utf-16-be"), self.r[ref][i])

    def order(self, col, desc, rows=None):
        rows = list(range(self.n)) if rows is None else rows
        # Ties: more bytes first, then the data order.
        rows = sorted(rows, key=lambda i: (-self.r["bytes"][i], i))
        return sorted(rows, key=lambda i: self.key(col, i), reverse=desc)

    def filter(self, query):
        q = query.strip().lower()
        return [i for i in range(self.n)
                if q in self.text("location", i).lower() or q in self.text("allocator", i).lower()
                or (self.split and q in self.text("thread", i).lower())]

    def csv(self, rows):
        rep, r, out = self.rep, self.r, []
        for i in rows:
            l = r["location"][i]
            row = [rep.tids[r["thread"][i]], rep.tnames[r["thread"][i]]] if self.split else []
            out.append(row + [r["bytes"][i], self.kinds[r["kind"][i]], r["count"][i], rep.fn[l],
                              rep.file[l], rep.line[l], rep.module[l]])
        header = (["thread_tid", "thread_name"] if self.split else []) + \
            ["size_bytes", "allocator", "allocations", "function", "file", "line", "module"]
        return csv(header, out)
