#!/usr/bin/python3
"""The memprof benchmark suite: `make bench` (or `make bench-quick`).

Runs every workload untracked, under `memprof run` and under heaptrack,
alternating and repeated, then `memprof stats` against `heaptrack_print` on
the captures; checks that tracking changed nothing and that memprof counted
exactly what the synthetic workloads did; prints a table and one last line of
key=value figures. bench/README.md explains every figure and how it is
measured. Standard library only.
"""

import argparse
import glob
import hashlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
import types

import compare
import html_scale
import merge_scale
import symcache
import sampling

MODE_LABEL = {
    "native": "untracked",
    "memprof": "memprof run",
    "memprof-nopy": "--no-py-frames",
    sampling.MODE: sampling.LABEL,
    sampling.MODE_NC: sampling.LABEL_NC,
    "heaptrack-raw": "heaptrack --raw",
    "heaptrack": "heaptrack",
    "loaded": "loaded, stopped",
}
ANALYSIS_LABEL = {"stats": "memprof stats", "flamegraph": "memprof flamegraph", "table": "memprof table",
                  "pprof": "transform pprof", "heaptrack_print": "heaptrack_print"}
# The reporters timed on every capture against heaptrack_print on heaptrack's (issue 16).
REPORTERS = ("stats", "flamegraph", "table")
# heaptrack's live interpreter can grow without bound (bench/README.md): cap the
# address space of its whole process tree so that a blow-up fails the run
# instead of the machine.
HEAPTRACK_LIMIT_MB = 4096


class BenchError(Exception):
    """A failed sanity check or a broken run: the whole benchmark is void."""


def die(msg):
    sys.stderr.write("bench: %s\n" % msg)
    sys.exit(1)


# ---- deterministic inputs for the real programs ----------------------------


def splitmix(state):
    """One step of splitmix64 (the workloads' PRNG): (new state, value)."""
    state = (state + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return state, z ^ (z >> 31)


def make_words(n, seed):
    """n pseudo-words of 2 to 9 letters, the same for a given seed."""
    words, state = [], seed
    for _ in range(n):
        state, r = splitmix(state)
        length = 2 + r % 8
        r >>= 3
        w = []
        for _ in range(length):
            w.append(chr(ord("a") + r % 26))
            r //= 26
        words.append("".join(w))
    return words


def gen_text(path, size, seed=7):
    """A compressible text file of about size bytes: lines of words drawn from a
    Zipf-like vocabulary (low indices are common)."""
    words = make_words(4096, seed)
    out, total, state = [], 0, seed * 31 + 1
    while total < size:
        state, r = splitmix(state)
        line = []
        for _ in range(6 + r % 10):
            state, r = splitmix(state)
            # the minimum of two uniform draws favours small indices
            line.append(words[min(r & 4095, (r >> 12) & 4095)])
        s = " ".join(line) + "\n"
        out.append(s)
        total += len(s)
    with open(path, "w") as f:
        f.write("".join(out))


def gen_recursion(path, rounds):
    """A bash script whose function recurses 0 to 39 levels and allocates at
    the bottom: stacks of 100 to 700 frames, deeper than --max-depth."""
    with open(path, "w") as f:
        f.write('f() { local n=$1; if ((n > 0)); then f $((n - 1)); else y="a$n"; fi; }\n'
                'for ((i = 0; i < %d; i++)); do f $((i %% 40)); done\n' % rounds)


def gen_c(path, functions):
    """A C translation unit of many small functions calling each other: enough
    for gcc's cc1 (stripped, 29,000 exported symbols) to allocate from
    thousands of its own functions, each of which memprof names."""
    out = ["int sink;\n"]
    for i in range(functions):
        callee = "f%d(x + %d)" % (i - 1, i) if i else "x"
        out.append("static __attribute__((noinline)) int f%d(int x)\n{\n\tint s = %s;\n"
                   "\tfor (int k = 0; k < %d; k++)\n\t\ts += (k * %d) ^ (s >> %d);\n"
                   "\treturn s;\n}\n" % (i, callee, 3 + i % 7, 31 + i, 1 + i % 5))
    out.append("int entry(int x)\n{\n\treturn f%d(x);\n}\n" % (functions - 1))
    with open(path, "w") as f:
        f.write("".join(out))


def gen_sql(path, rows, seed=11):
    """An SQL script for an in-memory database: bulk inserts, an index, then
    grouping, pattern, join, update and delete queries that print results."""
    words = make_words(512, seed)
    state = seed
    lines = [
        "CREATE TABLE item(id INTEGER PRIMARY KEY, name TEXT, grp INTEGER, price REAL, note TEXT);",
        "CREATE TABLE grp(id INTEGER PRIMARY KEY, label TEXT);",
        "BEGIN;",
    ]
    for g in range(100):
        lines.append("INSERT INTO grp VALUES(%d,'%s');" % (g, words[g]))
    for i in range(1, rows + 1):
        state, r = splitmix(state)
        note = " ".join(words[(r >> (9 * k)) & 511] for k in range(5))
        lines.append(
            "INSERT INTO item VALUES(%d,'%s-%d',%d,%d.%02d,'%s');"
            % (i, words[r & 511], i, (r >> 9) % 100, (r >> 16) % 1000, (r >> 26) % 100, note)
        )
    lines += [
        "COMMIT;",
        "CREATE INDEX item_grp ON item(grp);",
        "CREATE INDEX item_name ON item(name);",
        "SELECT grp, count(*), round(avg(price), 2), max(length(note)) FROM item GROUP BY grp ORDER BY grp;",
        "SELECT count(*) FROM item WHERE note LIKE '%%%s%%';" % words[3],
        "SELECT g.label, count(*) FROM item i JOIN grp g ON i.grp = g.id "
        "WHERE i.price > 500 GROUP BY g.label ORDER BY 2 DESC, 1 LIMIT 20;",
        "SELECT name, price FROM item WHERE grp = 7 ORDER BY price DESC, id LIMIT 10;",
        "UPDATE item SET price = price * 1.1, note = note || ' updated' WHERE grp % 3 = 0;",
        "DELETE FROM item WHERE grp % 5 = 0;",
        "SELECT count(*), round(sum(price), 2) FROM item;",
        "SELECT substr(name, 1, 2) AS p, count(*) FROM item GROUP BY p ORDER BY 2 DESC, 1 LIMIT 20;",
        "SELECT group_concat(label, ',') FROM (SELECT label FROM grp ORDER BY label LIMIT 30);",
    ]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


PY_DICTS = r"""
import sys
n = int(sys.argv[1])
total = 0
for i in range(n):
    d = {"k%d" % j: [j, str(j), (j, i)] for j in range(200)}
    e = {k: v[1] * 2 for k, v in d.items() if v[0] % 3}
    total += len(d) + len(e) + len(e.get("k1", ""))
    del d, e
print(total)
"""

# Python frames' cost: allocations made 12 to 23 Python calls deep (a list of
# 100 ints, a dict of 30 to 37 keys and a 600-character str per object, each
# past pymalloc's 512 bytes, so a malloc of its own; with PYTHONMALLOC=malloc
# every object is).
PY_DEEP = r"""
import sys
class Record:
    def __init__(self, i, depth):
        self.values = list(range(i % 50, i % 50 + 100))
        self.index = {"k%d" % j: j for j in range(i % 8 + 30)}
        self.text = "%d:%d" % (i, depth) * 60
def level(depth, i):
    if depth == 0:
        return [Record(i + k, depth) for k in range(4)]
    return level(depth - 1, i)
def run(n):
    total = 0
    for i in range(n):
        for r in level(12 + i % 12, i):
            total += len(r.values) + len(r.index) + len(r.text)
    return total
print(run(int(sys.argv[1])))
"""

# heaptrack 1.4 writes the command line into its stream unescaped, so a newline
# in an argument makes its interpreter fail ("failed to parse line"): pass the
# program as one line.
PY_ONE_LINE = "exec(%r)" % PY_DICTS
PY_DEEP_LINE = "exec(%r)" % PY_DEEP


# ---- workloads ---------------------------------------------------------------


class Workload:
    """A command to benchmark and what to run it with."""

    def __init__(self, name, desc, argv, exe, modes, stdin=None, make_input=None, env=None,
                 expect_counts=False, memprof_args=(), before=None):
        self.name, self.desc, self.argv, self.exe = name, desc, argv, exe
        self.before = before  # untimed, before each run (the build's make clean)
        self.memprof_args = list(memprof_args)  # before the command, for memprof run
        self.modes = modes
        self.stdin, self.make_input = stdin, make_input
        self.env = env or {}
        self.expect_counts = expect_counts  # it prints bench-<i> lines (bench/workload.h)


def workloads(cfg):
    """The selected workloads, their inputs generated (once: they are kept in the
    scratch directory under names that say what they hold)."""
    q = cfg.quick
    heavy = os.path.join(cfg.builddir, "bench", "alloc-heavy")
    light = os.path.join(cfg.builddir, "bench", "alloc-light")
    mapstr = os.path.join(cfg.builddir, "bench", "map-strings")
    prefork = os.path.join(cfg.builddir, "bench", "prefork")
    pairs = str(cfg.pairs or (300000 if q else 5000000))
    churn = ("100000", "250") if q else ("1000000", "2500")  # 200 pairs per thread
    idle_ms = "500" if q else "2000"
    synth = ["native", "memprof", "heaptrack-raw"]
    real = ["native", "memprof", "heaptrack-raw", "heaptrack"]
    # Python programs also run without Python frames: what they cost
    pyreal = ["native", "memprof", "memprof-nopy", "heaptrack-raw", "heaptrack"]
    pydeep = ["native", "memprof", "memprof-nopy"]
    rows, text_kib, xz_kib = (15000, 3072, 256) if q else (150000, 24576, 2048)
    map_rounds, sort_kib = ("1", 1024) if q else ("4", 8192)
    sql = os.path.join(cfg.workdir, "input-%d-rows.sql" % rows)
    text = os.path.join(cfg.workdir, "input-%d-KiB-seed7.txt" % text_kib)
    xz_text = os.path.join(cfg.workdir, "input-%d-KiB-seed8.txt" % xz_kib)
    sort_text = os.path.join(cfg.workdir, "input-%d-KiB-seed9.txt" % sort_kib)
    py = "/usr/bin/python3"
    cfuns = 100 if q else 600
    recursion = 150 if q else 600
    rec_script = os.path.join(cfg.workdir, "recursion-%d.sh" % recursion)
    csrc = os.path.join(cfg.workdir, "input-%d-functions.c" % cfuns)
    w = [
        Workload("heavy-1t", "%s malloc/free pairs, 1 thread, 8 B-64 KiB" % pairs,
                 [heavy, "-n", pairs, "-t", "1"], heavy, synth + [sampling.MODE, sampling.MODE_NC],
                 expect_counts=True),
        Workload("heavy-2t", "the same work split across 2 threads",
                 [heavy, "-n", pairs, "-t", "2"], heavy, synth, expect_counts=True),
        Workload("heavy-4t", "the same work split across 4 threads",
                 [heavy, "-n", pairs, "-t", "4"], heavy, synth + [sampling.MODE], expect_counts=True),
        Workload("churn", "%s pairs in %s rounds of 2 new threads (thread per task)" % churn,
                 [heavy, "-n", churn[0], "-t", "2", "-r", churn[1]], heavy, synth, expect_counts=True),
        Workload("prefork", "64 forked workers idle for %s ms (memprof run --follow-fork)" % idle_ms,
                 [prefork, "-c", "64", "-n", "100", "-m", idle_ms], prefork, ["native", "memprof"],
                 memprof_args=["--follow-fork"]),
        # The in-process API's promise: a tracker in the process that records nothing costs nothing.
        Workload("heavy-1t-idle", "heavy-1t with the tracker loaded and stopped (preloaded or linked, no capture)",
                 [heavy, "-n", pairs, "-t", "1"], heavy, ["native", "loaded"], expect_counts=True),
        Workload("heavy-few-1t", "heavy-1t with 8 distinct sizes (heaptrack 1.4 can interpret it)",
                 [heavy, "-n", pairs, "-t", "1", "--few-sizes"], heavy,
                 ["native", "memprof", "heaptrack"], expect_counts=True),
        # heaptrack interprets it too: its capture is compared with a file that has symbols, like ours
        Workload("light", "compute-bound, one 4 KiB buffer per round",
                 [light, "-r", "150" if q else "1000"], light, synth + ["heaptrack"], expect_counts=True),
        Workload("sqlite3", "sqlite3 :memory: < generated SQL (%d rows)" % rows,
                 ["/usr/bin/sqlite3", "-batch", ":memory:"], "/usr/bin/sqlite3",
                 real + [sampling.MODE, sampling.MODE_NC],
                 stdin=sql, make_input=lambda: gen_sql(sql, rows)),
        Workload("python3", "python3 -c: build and drop dicts (PYTHONHASHSEED=0)",
                 [py, "-s", "-c", PY_ONE_LINE, "1500" if q else "20000"], py,
                 pyreal + [sampling.MODE, sampling.MODE_NC],
                 env={"PYTHONHASHSEED": "0"}),
        Workload("python3-deep", "python3 -c: objects built 12 to 23 Python calls deep",
                 [py, "-s", "-c", PY_DEEP_LINE, "4000" if q else "40000"], py, pydeep,
                 env={"PYTHONHASHSEED": "0"}),
        Workload("python3-deep-malloc", "the same with PYTHONMALLOC=malloc (--trace-python-allocators)",
                 [py, "-s", "-c", PY_DEEP_LINE, "1000" if q else "10000"], py, pydeep,
                 env={"PYTHONHASHSEED": "0", "PYTHONMALLOC": "malloc"}),
        Workload("gzip", "gzip -6 -c < %d KiB of generated text" % text_kib,
                 ["/bin/gzip", "-6", "-c"], "/bin/gzip", real,
                 stdin=text, make_input=lambda: gen_text(text, text_kib << 10)),
        Workload("xz", "xz -T1 -3 -c < %d KiB of generated text" % xz_kib,
                 ["/usr/bin/xz", "-T1", "-3", "-c"], "/usr/bin/xz", real,
                 stdin=xz_text, make_input=lambda: gen_text(xz_text, xz_kib << 10, seed=8)),
        Workload("map", "C++ std::map<std::string, std::string> of 64,000 entries, %s rounds" % map_rounds,
                 [mapstr, "-n", "64000", "-r", map_rounds], mapstr, real),
        Workload("recursion", "bash: a function recursing 0-39 levels, %d rounds (stacks deeper than --max-depth)"
                 % recursion, ["/bin/bash", rec_script], "/bin/bash", ["native", "memprof"],
                 make_input=lambda: gen_recursion(rec_script, recursion)),
        Workload("sort", "sort < %d KiB of generated text" % sort_kib,
                 ["/usr/bin/sort"], "/usr/bin/sort", real,
                 stdin=sort_text, make_input=lambda: gen_text(sort_text, sort_kib << 10, seed=9)),
        # A stripped program with a big symbol table (symbolized without debug information).
        # A process tree (issue 29): the project's own build, from a configured tree made clean.
        Workload("build", "memprof's own build: make -j2 in a configured clean tree (--follow-fork)",
                 ["/bin/sh", "-c", "make -C %s -j2 -s all > build.log 2>&1" % build_tree(cfg)], "/usr/bin/make",
                 ["native", "memprof"], make_input=lambda: configure_build_tree(cfg),
                 before=lambda: clean_build_tree(cfg), memprof_args=["--follow-fork"]),
        Workload("gcc", "gcc -O1 -c of %d generated functions (--follow-fork: gcc, cc1, as)" % cfuns,
                 ["/usr/bin/gcc", "-O1", "-x", "c", "-c", "-", "-o", os.path.join(cfg.workdir, "gcc-out.o")],
                 "/usr/bin/gcc", ["native", "memprof"], stdin=csrc, make_input=lambda: gen_c(csrc, cfuns),
                 memprof_args=["--follow-fork"]),
    ]
    if cfg.only:
        names = cfg.only.split(",")
        unknown = [n for n in names if n not in [x.name for x in w] + ["merge", "accuracy", "symcache"]]
        if unknown:
            die("unknown workload '%s' (have: %s)" % (unknown[0], ", ".join(x.name for x in w)))
        w = [x for x in w if x.name in names]
    chosen = []
    for x in w:
        if not os.access(x.exe, os.X_OK):
            sys.stderr.write("bench: '%s' is not installed: %s left out\n" % (x.exe, x.name))
            continue
        if not cfg.heaptrack:
            x.modes = [m for m in x.modes if not m.startswith("heaptrack")]
        if x.stdin and not os.path.exists(x.stdin):
            x.make_input()
        elif x.make_input and not x.stdin:
            try:
                x.make_input()
            except BenchError as e:
                sys.stderr.write("bench: %s: %s left out\n" % (e, x.name))
                continue
        chosen.append(x)
    return chosen


# ---- running and measuring ---------------------------------------------------


def base_env():
    """The environment of every run: ours, minus anything that would change the
    programs or the trackers."""
    env = {}
    for k, v in os.environ.items():
        if k.startswith(("MEMPROF_", "PYTHON", "HEAPTRACK_", "LD_", "MALLOC_", "GLIBC_TUNABLES")):
            continue
        env[k] = v
    env["LC_ALL"] = "C"
    # The suite's own cache of debug files kept decompressed (bench/symcache.py): warm after the first run.
    env["MEMPROF_CACHE_DIR"] = BASE_CACHE_DIR[0]
    return env


BASE_CACHE_DIR = [""]


def file_digest(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def build_tree(cfg):
    return os.path.join(cfg.workdir, "build-tree")


def configure_build_tree(cfg):
    """A copy of the sources (git archive of HEAD), configured once (not timed)."""
    tree = build_tree(cfg)
    if os.path.exists(os.path.join(tree, "config.status")):
        return
    src = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
    shutil.rmtree(tree, ignore_errors=True)
    os.makedirs(tree)
    steps = ["git -C '%s' archive HEAD | tar -x -C '%s'" % (src, tree),
             "cd '%s' && autoreconf -fi && ./configure" % tree]
    for step in steps:
        r = subprocess.run(step, shell=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if r.returncode:
            shutil.rmtree(tree, ignore_errors=True)
            raise BenchError("cannot make the build tree (%s): %s" % (step, r.stderr.decode()[-300:]))


def clean_build_tree(cfg):
    subprocess.run(["make", "-C", build_tree(cfg), "-s", "clean"], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=True)


def launch(cfg, argv, tag, target_exe=None, stdin=None, env=None, limit_mb=None):
    """Run argv under bench/launch; returns its measurements plus the paths of
    the captured standard output and error."""
    out = os.path.join(cfg.workdir, tag + ".out")
    err = os.path.join(cfg.workdir, tag + ".err")
    res = os.path.join(cfg.workdir, tag + ".res")
    cmd = [cfg.launch, "-o", res, "-t", str(cfg.timeout)]
    if target_exe:
        cmd += ["-e", target_exe]
    if limit_mb:
        cmd += ["-m", str(limit_mb)]
    cmd += ["--"] + argv
    e = base_env()
    e.update(env or {})
    with open(stdin or os.devnull, "rb") as fin, open(out, "wb") as fout, open(err, "wb") as ferr:
        rc = subprocess.call(cmd, stdin=fin, stdout=fout, stderr=ferr, env=e, cwd=cfg.workdir)
    if rc != 0 or not os.path.exists(res):
        raise BenchError("the launcher failed on %s (status %d): %s" % (tag, rc, open(err).read()[-500:]))
    with open(res) as f:
        fields = dict(kv.split("=", 1) for kv in f.read().split())
    os.unlink(res)
    m = {k: float(v) for k, v in fields.items()}
    if m["timed_out"]:
        raise BenchError("%s timed out after %d s: %s" % (tag, cfg.timeout, " ".join(argv[:6])))
    if m["interrupted"]:
        die("interrupted")
    m["cpu_s"] = m["user_s"] + m["sys_s"]
    m["target_rss_mb"] = m["target_hwm_kb"] / 1024 if m["target_hwm_kb"] >= 0 else None
    m["target_cpu_s"] = m["target_cpu_s"] if m.get("target_cpu_s", -1) >= 0 else None
    m["tree_rss_mb"] = m["tree_maxrss_kb"] / 1024
    m["out"], m["err"] = out, err
    return m


def remove_captures(cap):
    """A capture, and its followed children's (CAP.PID)."""
    for path in [cap] + glob.glob(glob.escape(cap) + ".*"):
        if os.path.exists(path):
            os.unlink(path)


def run_mode(cfg, w, mode, rep):
    """One run of workload w in mode; returns the measurements and the capture."""
    tag = "%s.%s.%d" % (w.name, mode, rep)
    cap = None
    env = w.env
    if mode == "native":
        argv = w.argv
    elif mode == "loaded":
        # Interposed as when linked with -lmemprof: every call goes through a hook that records nothing.
        argv = w.argv
        env = dict(w.env, LD_PRELOAD=os.path.join(cfg.builddir, ".libs", "libmemprof.so"))
    elif mode in ("memprof", "memprof-nopy"):
        cap = os.path.join(cfg.workdir, tag + ".mprof")
        argv = [cfg.memprof, "run", "-q", "-f"] + w.memprof_args + ["-o", cap] + w.argv
        if mode == "memprof-nopy":
            argv[2:2] = ["--no-python-frames"]
    elif mode in (sampling.MODE, sampling.MODE_NC):
        cap = os.path.join(cfg.workdir, tag + ".mprof")
        argv = sampling.argv(cfg.memprof, cap, w.memprof_args, w.argv, no_control=mode == sampling.MODE_NC)
    elif mode == "heaptrack-raw":
        base = os.path.join(cfg.workdir, tag)
        cap = base + ".raw.zst"
        argv = ["heaptrack", "--raw", "-o", base] + w.argv
    else:
        base = os.path.join(cfg.workdir, tag)
        cap = base + ".zst"
        argv = ["heaptrack", "-o", base] + w.argv
    if cap:
        remove_captures(cap)
    if w.before:
        w.before()
    m = launch(cfg, argv, tag, target_exe=w.exe, stdin=w.stdin, env=env,
               limit_mb=HEAPTRACK_LIMIT_MB if mode == "heaptrack" else None)
    m["capture"] = cap
    m["capture_bytes"] = os.path.getsize(cap) if cap and os.path.exists(cap) else None
    return m


def count_heaptrack_events(path):
    """Allocations and frees in a heaptrack file (raw or interpreted): its
    lines starting with '+' and '-'."""
    p = subprocess.Popen(["zstd", "-dcq", path], stdout=subprocess.PIPE)
    allocs = frees = 0
    prev = b"\n"
    for chunk in iter(lambda: p.stdout.read(1 << 22), b""):
        data = prev + chunk
        allocs += data.count(b"\n+")
        frees += data.count(b"\n-")
        prev = chunk[-1:]
    if p.wait() != 0:
        raise BenchError("cannot decompress '%s'" % path)
    return allocs, frees


def memprof_counts(cfg, cap, tag):
    """memprof stats --json on a capture (not timed)."""
    js = os.path.join(cfg.workdir, tag + ".json")
    r = subprocess.run([cfg.memprof, "stats", "--json", "-f", "-o", js, cap],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=base_env())
    if r.returncode != 0:
        raise BenchError("memprof stats --json failed on '%s': %s" % (cap, r.stderr.decode()[-500:]))
    with open(js) as f:
        d = json.load(f)
    os.unlink(js)
    return d


def expected_counts(path):
    """The bench-<i> lines a synthetic workload printed: {name: {field: int}}."""
    want = {}
    with open(path) as f:
        for line in f:
            parts = line.split()
            if parts and parts[0].startswith("bench-"):
                want[parts[0]] = {k: int(v, 16 if k == "checksum" else 10)
                                  for k, v in (p.split("=", 1) for p in parts[1:])}
    return want


def check_run(w, mode, m, native):
    """The run under memprof behaved exactly like the untracked one; returns
    memprof's own warnings."""
    if native["exit"] != 0 or native["signal"] != 0:
        raise BenchError("%s: the untracked run failed (exit %d, signal %d): %s"
                         % (w.name, native["exit"], native["signal"], open(native["err"]).read()[-300:]))
    if (m["exit"], m["signal"]) != (native["exit"], native["signal"]):
        raise BenchError("%s under %s: exit %d signal %d, untracked exit %d signal %d: %s"
                         % (w.name, MODE_LABEL[mode], m["exit"], m["signal"], native["exit"],
                            native["signal"], open(m["err"]).read()[-500:]))
    if file_digest(m["out"]) != file_digest(native["out"]):
        raise BenchError("%s: the standard output under memprof run differs from the untracked run's "
                         "(compare %s and %s)" % (w.name, m["out"], native["out"]))
    # memprof's own warnings (despite -q) are the collector's, not the program's output
    with open(m["err"], "rb") as f:
        lines = f.read().splitlines(keepends=True)
    ours = [l for l in lines if l.startswith(b"memprof: warning: ")]
    with open(native["err"], "rb") as f:
        if b"".join(l for l in lines if l not in ours) != f.read():
            raise BenchError("%s: the standard error under memprof run differs from the untracked run's "
                             "(compare %s and %s)" % (w.name, m["err"], native["err"]))
    return [l.decode(errors="replace").rstrip("\n") for l in ours]


def check_capture(w, d, native):
    """memprof saw exactly what the workload did (and lost nothing)."""
    if d.get("lost_events") or d.get("truncated"):
        raise BenchError("%s: the capture lost %s events (truncated: %s)"
                         % (w.name, d.get("lost_events"), d.get("truncated")))
    if d.get("exit_status") != native["exit"]:
        raise BenchError("%s: the capture records exit status %s, the program exited %d"
                         % (w.name, d.get("exit_status"), native["exit"]))
    if not w.expect_counts:
        return  # a real program: its counts are not known (gzip makes no allocation at all)
    want = expected_counts(native["out"])
    if not want:
        raise BenchError("%s: the workload printed no counts" % w.name)
    # Threads of one name (one per round, with -r) add up to that name's line.
    got = {}
    for t in d["threads"]:
        g = got.setdefault(t["name"], dict.fromkeys(("num_allocations", "total_bytes", "num_frees",
                                                      "leaked_bytes"), 0))
        for k in g:
            g[k] += t[k]
    for name, c in sorted(want.items()):
        t = got.get(name)
        if t is None:
            raise BenchError("%s: no thread '%s' in the capture (threads: %s)"
                             % (w.name, name, ", ".join(sorted(got))))
        pairs = [("allocations", t["num_allocations"], c["allocs"]),
                 ("bytes", t["total_bytes"], c["bytes"]),
                 ("frees", t["num_frees"], c["frees"]),
                 ("leaked bytes", t["leaked_bytes"], c["leaked_bytes"])]
        for what, have, expect in pairs:
            if have != expect:
                raise BenchError("%s: thread %s: memprof counted %d %s, the workload made %d"
                                 % (w.name, name, have, what, expect))


def memprof_events(d):
    return d["total_num_allocations"] + d["total_num_frees"] + d.get("unknown_frees", 0)


def heaptrack_failure(m, native, memprof_run):
    """Why heaptrack's run failed, or None; counts its events on the way."""
    if (m["exit"], m["signal"]) != (native["exit"], native["signal"]):
        return "exit %d, signal %d, the untracked run exit %d" % (m["exit"], m["signal"], native["exit"])
    with open(m["err"], errors="replace") as f:
        for line in f:
            if any(s in line for s in ("ERROR", "terminate called", "bad_alloc", "Aborted")):
                return "it printed '%s'" % line.strip()[:160]
    if not m["capture_bytes"]:
        return "no output file"
    m["allocs"], frees = count_heaptrack_events(m["capture"])
    m["events"] = m["allocs"] + frees
    # A program that ignores SIGPIPE (python3) survives a dead interpreter with an empty file.
    if memprof_run and m["allocs"] < memprof_run["allocs"] / 2:
        return "it recorded %d allocations, memprof %d" % (m["allocs"], memprof_run["allocs"])
    return None


def run_analysis(cfg, w, rep, caps):
    """memprof stats, memprof transform pprof and heaptrack_print on this repetition's captures,
    alternating."""
    res = {}
    html = os.path.join(cfg.workdir, "%s.%d.html" % (w.name, rep))
    jobs = [("stats", [cfg.memprof, "stats", caps["memprof"]]),
            ("flamegraph", [cfg.memprof, "flamegraph", "-f", "-o", html, caps["memprof"]]),
            ("table", [cfg.memprof, "table", "-f", "-o", html, caps["memprof"]]),
            ("pprof", [cfg.memprof, "transform", "-f", "-o", os.devnull, "pprof", caps["memprof"]])]
    if "heaptrack" in caps:
        jobs.append(("heaptrack_print", ["heaptrack_print", caps["heaptrack"]]))
    # each repetition starts with another one, heaptrack_print first every other time
    k = rep % len(jobs)
    jobs = jobs[k:] + jobs[:k]
    if rep % 2:
        jobs.reverse()
    for name, argv in jobs:
        m = launch(cfg, argv, "%s.%s.%d" % (w.name, name, rep))
        if m["exit"] != 0 or m["signal"] != 0:
            raise BenchError("%s failed on %s's capture (exit %d, signal %d): %s"
                             % (ANALYSIS_LABEL[name], w.name, m["exit"], m["signal"],
                                open(m["err"]).read()[-500:]))
        if name in ("flamegraph", "table"):
            m["html_bytes"] = os.path.getsize(html)
        res[name] = m
    if os.path.exists(html):
        os.unlink(html)
    return res


def heaptrack_print_allocs(path):
    with open(path) as f:
        for line in f:
            if line.startswith("calls to allocation functions:"):
                return int(line.split(":")[1].split()[0])
    return None


def bench_workload(cfg, w, log):
    """All repetitions of one workload: {mode: [runs]}, {reporter: [runs]}, notes."""
    runs = {m: [] for m in w.modes}
    analysis = {name: [] for name in REPORTERS + ("pprof", "heaptrack_print")}
    notes = []
    modes = list(w.modes)
    # one untimed run first, so that the program and its input are in the page cache
    if w.before:
        w.before()
    warm = launch(cfg, w.argv, w.name + ".warmup", stdin=w.stdin, env=w.env)
    os.unlink(warm["out"])
    os.unlink(warm["err"])
    for rep in range(cfg.reps):
        order = modes[rep % len(modes):] + modes[:rep % len(modes)]
        this = {}
        for mode in order:
            if mode not in modes:
                continue
            m = run_mode(cfg, w, mode, rep)
            this[mode] = m
        native = this["native"]
        runs["native"].append(native)
        if "loaded" in this:
            if open(this["loaded"]["out"], "rb").read() != open(native["out"], "rb").read():
                raise BenchError("%s: the output with the tracker loaded differs from the untracked run's"
                                 % w.name)
            runs["loaded"].append(this["loaded"])
        for mode in [x for x in ("memprof", "memprof-nopy", sampling.MODE, sampling.MODE_NC, "heaptrack-raw",
                                 "heaptrack") if x in this]:
            m = this[mode]
            if mode in (sampling.MODE, sampling.MODE_NC):
                check_run(w, mode, m, native)
                d = memprof_counts(cfg, m["capture"], "%s.%s.%d" % (w.name, mode, rep))
                sampling.check_capture(w, d, native, expected_counts, BenchError)
                m["allocs"] = d["total_num_allocations"]
                m["events"] = memprof_events(d)
                runs[mode].append(m)
                continue
            if mode in ("memprof", "memprof-nopy"):
                for warning in check_run(w, mode, m, native):
                    note = "memprof run -q printed on %s: %s" % (w.name, warning)
                    if note not in notes:
                        notes.append(note)
                d = memprof_counts(cfg, m["capture"], "%s.%d" % (w.name, rep))
                check_capture(w, d, native)
                m["allocs"] = d["total_num_allocations"]
                m["events"] = memprof_events(d)
                runs[mode].append(m)
                continue
            # heaptrack's failures are findings about heaptrack, not about memprof: drop it
            why = heaptrack_failure(m, native, this.get("memprof"))
            if why:
                notes.append("%s failed on %s in repetition %d (%s): left out"
                             % (MODE_LABEL[mode], w.name, rep + 1, why))
                log("  " + notes[-1])
                modes.remove(mode)
                runs.pop(mode)
                continue
            runs[mode].append(m)
        caps = {k: v["capture"] for k, v in this.items() if k in ("memprof", "heaptrack") and k in modes}
        if "memprof" in caps:
            for name, m in run_analysis(cfg, w, rep, caps).items():
                m["events"] = this["heaptrack" if name == "heaptrack_print" else "memprof"]["events"]
                if name == "heaptrack_print":
                    m["allocs_printed"] = heaptrack_print_allocs(m["out"])
                analysis[name].append(m)
        line = "  %s rep %d/%d:" % (w.name, rep + 1, cfg.reps)
        for mode in w.modes:
            if mode in this and mode in modes:
                line += " %s %.2fs" % (MODE_LABEL[mode], this[mode]["wall_s"])
        log(line)
        if not cfg.keep:
            for m in this.values():
                for path in (m.get("capture"), m["out"], m["err"]):
                    if path and os.path.exists(path) and path != native["out"] and path != native["err"]:
                        os.unlink(path)
            for path in (native["out"], native["err"]):
                os.unlink(path)
            for ms in analysis.values():
                for m in ms:
                    for path in (m["out"], m["err"]):
                        if os.path.exists(path):
                            os.unlink(path)
            for path in [m["capture"] for m in this.values() if m.get("capture")]:
                remove_captures(path)
    return runs, analysis, notes


# ---- figures -----------------------------------------------------------------


def med(xs):
    return statistics.median(xs) if xs else None


def spread(xs):
    return (min(xs), max(xs)) if xs else (None, None)


def ratios(a, b, key):
    """Per-repetition ratios a[i][key] / b[i][key] (the same repetition)."""
    return [x[key] / y[key] for x, y in zip(a, b) if x.get(key) and y.get(key)]


def fmt(x, digits=2):
    return "-" if x is None else "%.*f" % (digits, x)


def fmt_ratio(xs, digits=2):
    if not xs:
        return "-"
    lo, hi = spread(xs)
    return "%.*fx [%.*f-%.*f]" % (digits, med(xs), digits, lo, digits, hi)


def summarize(results):
    """The figures of the last line (bench/README.md defines each)."""
    s = {}

    def get(wname):
        return results.get(wname, ({}, {}, []))

    runs, analysis, _ = get("heavy-1t")
    if runs.get("memprof") and runs.get("native"):
        s["overhead_vs_native"] = med(ratios(runs["memprof"], runs["native"], "wall_s"))
        s["cpu_vs_native"] = med(ratios(runs["memprof"], runs["native"], "cpu_s"))
        s["prog_cpu_vs_native"] = med(ratios(runs["memprof"], runs["native"], "target_cpu_s"))
        s["bytes_per_event"] = med([m["capture_bytes"] / m["events"] for m in runs["memprof"]])
        s["stats_s_per_mevent"] = med([m["wall_s"] / m["events"] * 1e6 for m in analysis["stats"] if m["events"]])
        s["stats_rss_mb"] = med([m["tree_rss_mb"] for m in analysis["stats"]])
        if analysis.get("pprof"):
            s["pprof_vs_stats"] = med(ratios(analysis["pprof"], analysis["stats"], "wall_s"))
    if runs.get("memprof") and runs.get("heaptrack-raw"):
        s["vs_heaptrack"] = med(ratios(runs["memprof"], runs["heaptrack-raw"], "wall_s"))
        s["heaptrack_overhead"] = med(ratios(runs["heaptrack-raw"], runs["native"], "wall_s"))
        s["heaptrack_bytes_per_event"] = med([m["capture_bytes"] / m["events"]
                                              for m in runs["heaptrack-raw"]])
        s["rss_vs_heaptrack"] = med(ratios(runs["memprof"], runs["heaptrack-raw"], "target_rss_mb"))
        s["cpu_vs_heaptrack"] = med(ratios(runs["memprof"], runs["heaptrack-raw"], "cpu_s"))
    runs, _, _ = get("heavy-1t-idle")
    if runs.get("loaded") and runs.get("native"):
        s["idle_loaded"] = med(ratios(runs["loaded"], runs["native"], "wall_s"))
        s["idle_loaded_cpu"] = med(ratios(runs["loaded"], runs["native"], "target_cpu_s"))
    runs, _, _ = get("heavy-2t")
    if runs.get("memprof") and runs.get("native"):
        s["overhead_2t"] = med(ratios(runs["memprof"], runs["native"], "wall_s"))
        s["prog_cpu_2t"] = med(ratios(runs["memprof"], runs["native"], "target_cpu_s"))
    if runs.get("memprof") and runs.get("heaptrack-raw"):
        s["vs_heaptrack_2t"] = med(ratios(runs["memprof"], runs["heaptrack-raw"], "wall_s"))
    runs, _, _ = get("heavy-4t")
    if runs.get("memprof") and runs.get("native"):
        s["overhead_4t"] = med(ratios(runs["memprof"], runs["native"], "wall_s"))
        s["cpu_4t"] = med(ratios(runs["memprof"], runs["native"], "cpu_s"))
        s["prog_cpu_4t"] = med(ratios(runs["memprof"], runs["native"], "target_cpu_s"))
    if runs.get("memprof") and runs.get("heaptrack-raw"):
        s["vs_heaptrack_4t"] = med(ratios(runs["memprof"], runs["heaptrack-raw"], "wall_s"))
        s["heaptrack_overhead_4t"] = med(ratios(runs["heaptrack-raw"], runs["native"], "wall_s"))
    runs, _, _ = get("churn")
    if runs.get("memprof") and runs.get("native"):
        s["overhead_churn"] = med(ratios(runs["memprof"], runs["native"], "wall_s"))
    if runs.get("memprof") and runs.get("heaptrack-raw"):
        s["vs_heaptrack_churn"] = med(ratios(runs["memprof"], runs["heaptrack-raw"], "wall_s"))
    runs, _, _ = get("build")
    if runs.get("memprof") and runs.get("native"):
        s["build_overhead"] = med(ratios(runs["memprof"], runs["native"], "wall_s"))
    runs, _, _ = get("prefork")
    if runs.get("memprof") and runs.get("native"):
        s["prefork_cpu_s"] = med([a["cpu_s"] - b["cpu_s"] for a, b in zip(runs["memprof"], runs["native"])])
    _, analysis, _ = get("heavy-few-1t")
    if analysis.get("stats") and analysis.get("heaptrack_print"):
        s["stats_vs_heaptrack_print"] = med(ratios(analysis["stats"], analysis["heaptrack_print"], "wall_s"))
        s["stats_mem_vs_heaptrack_print"] = med(ratios(analysis["stats"], analysis["heaptrack_print"],
                                                       "tree_rss_mb"))
    runs, _, _ = get("light")
    if runs.get("memprof") and runs.get("native"):
        s["light_overhead"] = med(ratios(runs["memprof"], runs["native"], "wall_s"))
    for wname, key in (("python3", "py_frames_dicts"), ("python3-deep", "py_frames_deep"),
                       ("python3-deep-malloc", "py_frames_malloc")):
        runs, _, _ = get(wname)
        if runs.get("memprof") and runs.get("memprof-nopy"):
            s[key] = med(ratios(runs["memprof"], runs["memprof-nopy"], "wall_s"))
            s[key + "_cpu"] = med(ratios(runs["memprof"], runs["memprof-nopy"], "target_cpu_s"))
    # issue 16: the worst program's median ratio against heaptrack
    cap, rep = [], []
    for name, (runs, analysis, _) in results.items():
        r = vs_heaptrack(runs, analysis)
        if r.get("capture") and r["capture"][1]:
            cap.append(med(r["capture"][1]))
        rep += [med(r[k]) for k in REPORTERS if r.get(k)]
    s["capture_vs_heaptrack_max"] = max(cap) if cap else None
    s["reporters_vs_heaptrack_print_max"] = max(rep) if rep else None
    return s


RUN_ROW = "%-13s %-16s %8s %8s %9s %8s %7s %10s  %-20s %-20s %-20s %-20s"
ANALYSIS_ROW = "%-13s %-18s %8s %8s %9s %10s %10s  %-20s %-20s %8s"


def print_tables(reps, wls, results, out):
    p = lambda *a: print(*a, file=out)
    done = [(w, results[w.name]) for w in wls if w.name in results]

    def header(title, row, *cols):
        p()
        p(title)
        p(row % cols)
        p("-" * len(row % cols))

    header("Runs (medians of %d repetitions; ratios are medians of per-repetition ratios [min-max])"
           % reps, RUN_ROW, "workload", "mode", "wall s", "cpu s", "target MB", "cap MB", "B/event",
           "events", "wall vs untracked", "cpu vs untracked", "prog cpu vs untr.", "RSS vs untracked")
    for w, (runs, _, _) in done:
        native = runs["native"]
        first = True
        for mode in w.modes:
            rs = runs.get(mode)
            if not rs:
                continue
            cap = [m["capture_bytes"] for m in rs if m.get("capture_bytes")]
            bpe = [m["capture_bytes"] / m["events"] for m in rs if m.get("capture_bytes") and m.get("events")]
            ev = [m["events"] for m in rs if m.get("events")]
            rss = [m["target_rss_mb"] for m in rs if m["target_rss_mb"] is not None]
            p(RUN_ROW % (
                w.name if first else "", MODE_LABEL[mode],
                fmt(med([m["wall_s"] for m in rs]), 3), fmt(med([m["cpu_s"] for m in rs]), 3),
                fmt(med(rss), 1), fmt(med(cap) / 1e6 if cap else None, 1), fmt(med(bpe)),
                "%d" % med(ev) if ev else "-",
                "" if mode == "native" else fmt_ratio(ratios(rs, native, "wall_s")),
                "" if mode == "native" else fmt_ratio(ratios(rs, native, "cpu_s")),
                "" if mode == "native" else fmt_ratio(ratios(rs, native, "target_cpu_s")),
                "" if mode == "native" else fmt_ratio(ratios(rs, native, "target_rss_mb"))))
            first = False
        if runs.get("memprof") and runs.get("memprof-nopy"):
            p("%-13s %-16s wall %s   cpu %s   prog cpu %s" % (
                "", "py/no-py frames",
                fmt_ratio(ratios(runs["memprof"], runs["memprof-nopy"], "wall_s")),
                fmt_ratio(ratios(runs["memprof"], runs["memprof-nopy"], "cpu_s")),
                fmt_ratio(ratios(runs["memprof"], runs["memprof-nopy"], "target_cpu_s"))))
        for other in ("heaptrack-raw", "heaptrack"):
            if runs.get("memprof") and runs.get(other):
                p("%-13s %-16s wall %s   cpu %s   target RSS %s" % (
                    "", "memprof/" + other.replace("heaptrack", "ht"),
                    fmt_ratio(ratios(runs["memprof"], runs[other], "wall_s")),
                    fmt_ratio(ratios(runs["memprof"], runs[other], "cpu_s")),
                    fmt_ratio(ratios(runs["memprof"], runs[other], "target_rss_mb"))))
    header("Analysis of the captures (memprof's reporters on the memprof capture, heaptrack_print on heaptrack's)",
           ANALYSIS_ROW, "workload", "reporter", "wall s", "cpu s", "peak MB", "events", "s/Mevent",
           "wall vs heaptrack_print", "mem vs heaptrack_print", "HTML KB")
    for w, (_, analysis, _) in done:
        first = True
        for name in REPORTERS + ("pprof", "heaptrack_print"):
            rs = analysis.get(name)
            if not rs:
                continue
            both = name in REPORTERS and analysis.get("heaptrack_print")
            p(ANALYSIS_ROW % (
                w.name if first else "", ANALYSIS_LABEL[name],
                fmt(med([m["wall_s"] for m in rs]), 3), fmt(med([m["cpu_s"] for m in rs]), 3),
                fmt(med([m["tree_rss_mb"] for m in rs]), 1), "%d" % med([m["events"] for m in rs]),
                fmt(med([m["wall_s"] / m["events"] * 1e6 for m in rs if m["events"]]), 3),
                fmt_ratio(ratios(rs, analysis["heaptrack_print"], "wall_s")) if both else "",
                fmt_ratio(ratios(rs, analysis["heaptrack_print"], "tree_rss_mb")) if both else "",
                fmt(med([m["html_bytes"] / 1024 for m in rs if "html_bytes" in m]) if "html_bytes" in rs[0] else None, 0)))
            first = False
    against_heaptrack(done, p)
    p()
    p("Allocation counts (memprof capture / heaptrack file, allocations only, first repetition):")
    for w, (runs, analysis, _) in done:
        parts = []
        for mode in ("memprof", "heaptrack-raw", "heaptrack"):
            if runs.get(mode):
                parts.append("%s %d" % (MODE_LABEL[mode], runs[mode][0]["allocs"]))
        hp = analysis.get("heaptrack_print")
        if hp and hp[0].get("allocs_printed") is not None:
            parts.append("heaptrack_print 'calls to allocation functions' %d" % hp[0]["allocs_printed"])
        p("  %-13s %s" % (w.name, ", ".join(parts)))
    notes = [n for _, (_, _, ns) in done for n in ns]
    if notes:
        p()
        p("Notes:")
        for n in notes:
            p("  - " + n)


def vs_heaptrack(runs, analysis):
    """Per-repetition ratios against heaptrack of one workload: the capture's
    bytes (against heaptrack's interpreted file, else its raw one), and each
    reporter's wall time against heaptrack_print's."""
    r = {}
    other = "heaptrack" if runs.get("heaptrack") else "heaptrack-raw"
    if runs.get("memprof") and runs.get(other):
        r["capture"] = (other, ratios(runs["memprof"], runs[other], "capture_bytes"))
        # a program that allocates nothing: both files are only the metadata (modules, ticks)
        r["no_events"] = not any(m.get("events") for m in runs["memprof"])
    for name in REPORTERS:
        if analysis.get(name) and analysis.get("heaptrack_print"):
            r[name] = ratios(analysis[name], analysis["heaptrack_print"], "wall_s")
    return r


def against_heaptrack(done, p):
    """The issue-16 table: memprof against heaptrack, program by program."""
    row = "%-13s %-36s %-20s %-20s %-20s"
    p()
    p("Against heaptrack (medians of per-repetition ratios [min-max]; capture bytes against heaptrack's file,")
    p("interpreted where heaptrack 1.4 can interpret the program, else --raw; reporters' wall time against heaptrack_print)")
    p(row % ("workload", "capture bytes", "stats", "flamegraph", "table"))
    p("-" * len(row % ("", "", "", "", "")))
    for w, (runs, analysis, _) in done:
        r = vs_heaptrack(runs, analysis)
        if not r:
            continue
        cap = r.get("capture")
        p(row % (w.name, "%s%s" % (fmt_ratio(cap[1]), " (raw)" if cap[0] == "heaptrack-raw"
                                   else " (no allocations)" if r["no_events"] else "")
                 if cap else "-", fmt_ratio(r.get("stats")), fmt_ratio(r.get("flamegraph")),
                 fmt_ratio(r.get("table"))))


def machine_info():
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        load = "%.2f %.2f %.2f" % os.getloadavg()
    except OSError:
        load = "?"
    return {"date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "nproc": len(os.sched_getaffinity(0)), "cpu": model,
            "kernel": platform.release(), "load_at_start": load}


def tool_version(argv):
    try:
        r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=10)
        return r.stdout.decode(errors="replace").strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError):
        return "?"


def main():
    ap = argparse.ArgumentParser(description="memprof benchmark suite (bench/README.md)")
    ap.add_argument("--quick", action="store_true", help="2 repetitions of small inputs (under a minute)")
    ap.add_argument("--reps", type=int, help="repetitions (default 5, 2 with --quick)")
    ap.add_argument("--only", help="comma-separated workload names")
    ap.add_argument("--pairs", type=int, help="malloc/free pairs of the heavy workloads")
    ap.add_argument("--builddir", default=".", help="the build tree (default .)")
    ap.add_argument("--workdir", help="scratch directory (default BUILDDIR/bench-work)")
    ap.add_argument("--keep", action="store_true", help="keep captures and outputs")
    ap.add_argument("--no-heaptrack", dest="heaptrack", action="store_false", help="leave heaptrack out")
    ap.add_argument("--timeout", type=int, default=600, help="seconds allowed for one run")
    ap.add_argument("--json", help="also write every measurement to this file")
    ap.add_argument("--report", metavar="JSON", help="print the tables of a --json file again; run nothing")
    ap.add_argument("--html-pairs", type=int, help="alloc-heavy pairs of the HTML-at-scale capture "
                    "(default 25000000: 50 million events; 1000000 with --quick; 0: none)")
    ap.add_argument("--baseline", help="the accepted figures to compare with (default bench/baseline.json "
                    "of the source tree)")
    ap.add_argument("--save-baseline", metavar="FILE", help="write this run's figures there (results accepted)")
    cfg = ap.parse_args()
    cfg.srcdir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    cfg.baseline = cfg.baseline or os.path.join(cfg.srcdir, "bench", "baseline.json")
    if cfg.report:
        with open(cfg.report) as f:
            d = json.load(f)
        wls = [types.SimpleNamespace(name=n, desc=e["desc"], modes=e["modes"]) for n, e in d["workloads"].items()]
        results = {n: (e["runs"], e["analysis"], e["notes"]) for n, e in d["workloads"].items()}
        report(d["machine"], d["reps"], d["quick"], d["elapsed_s"], wls, results, d.get("html_scale"),
               d.get("merge"), cfg, d.get("commit", "?"), d.get("accuracy"), d.get("symcache"))
        return
    cfg.builddir = os.path.abspath(cfg.builddir)
    if cfg.html_pairs is None:
        cfg.html_pairs = 1000000 if cfg.quick else 25000000
    cfg.reps = cfg.reps or (2 if cfg.quick else 5)
    cfg.workdir = os.path.abspath(cfg.workdir or os.path.join(cfg.builddir, "bench-work"))
    cfg.memprof = os.path.join(cfg.builddir, "memprof")
    cfg.launch = os.path.join(cfg.builddir, "bench", "launch")
    for path in (cfg.memprof, cfg.launch, os.path.join(cfg.builddir, "bench", "alloc-heavy"),
                 os.path.join(cfg.builddir, "bench", "alloc-light"),
                 os.path.join(cfg.builddir, "bench", "map-strings")):
        if not os.access(path, os.X_OK):
            die("'%s' is not built: run 'make bench'" % path)
    if cfg.heaptrack and not (shutil.which("heaptrack") and shutil.which("heaptrack_print")
                              and shutil.which("zstd")):
        sys.stderr.write("bench: heaptrack, heaptrack_print or zstd not found: heaptrack left out\n")
        cfg.heaptrack = False
    os.makedirs(cfg.workdir, exist_ok=True)
    BASE_CACHE_DIR[0] = symcache.cache_dir(cfg)

    info = machine_info()
    info["heaptrack"] = tool_version(["heaptrack", "--version"]) if cfg.heaptrack else "not used"
    log = lambda s: (sys.stderr.write(s + "\n"), sys.stderr.flush())
    log("bench: %s, nproc %s, %s, load %s; %d repetitions%s; scratch in %s"
        % (info["date"], info["nproc"], info["cpu"], info["load_at_start"], cfg.reps,
           " (quick)" if cfg.quick else "", cfg.workdir))
    start = time.monotonic()
    wls = workloads(cfg)
    results = {}
    try:
        for w in wls:
            log("%s: %s" % (w.name, w.desc))
            results[w.name] = bench_workload(cfg, w, log)
    except BenchError as e:
        die("FAILED: %s\nbench: a benchmark of a broken run is worthless: no figures" % e)
    scale = None
    if cfg.html_pairs and not cfg.only:
        try:
            scale = html_scale.run(cfg, launch, log, cfg.html_pairs)
        except (RuntimeError, BenchError) as e:
            die("FAILED: the HTML reports at scale: %s" % e)
    def part(name, what, run, failure, errors=(RuntimeError, BenchError)):
        """A part of the suite beside the workloads, unless --only leaves it out: what run() returns, or None."""
        if cfg.only and name not in cfg.only.split(","):
            return None
        log("%s: %s" % (name, what))
        try:
            return run()
        except errors as e:
            die("FAILED: %s: %s" % (failure, e))
    acc = part("accuracy", "sampled estimates of bench/sampled under 20 seeds", lambda: sampling.accuracy(cfg, log),
               "the sampling accuracy", (RuntimeError, subprocess.CalledProcessError))
    merge = part("merge", "64 captures read as one (memprof stats --children)",
                 lambda: merge_scale.run(cfg, launch, log, cfg.quick), "the merge of 64 captures")
    sym = part("symcache", "a short run's symbolization, with the cache of debug files cold and warm",
               lambda: symcache.run(cfg, launch, log, cfg.reps), "the symbolization of a short run")
    elapsed = time.monotonic() - start
    info["load_at_end"] = "%.2f %.2f %.2f" % os.getloadavg()
    commit = compare.git_commit(cfg.srcdir)
    s = report(info, cfg.reps, cfg.quick, elapsed, wls, results, scale, merge, cfg, commit, acc, sym)
    if cfg.json:
        dump = {"machine": info, "reps": cfg.reps, "quick": cfg.quick, "elapsed_s": elapsed, "summary": s,
                "commit": commit, "html_scale": scale, "merge": merge, "accuracy": acc, "symcache": sym,
                "workloads": {w.name: {"desc": w.desc, "modes": w.modes, "runs": results[w.name][0],
                                       "analysis": results[w.name][1], "notes": results[w.name][2]}
                              for w in wls}}
        with open(cfg.json, "w") as f:
            json.dump(dump, f, indent=1)


SUMMARY_KEYS = ["overhead_vs_native", "overhead_2t", "overhead_4t", "vs_heaptrack", "vs_heaptrack_4t", "bytes_per_event",
                "heaptrack_bytes_per_event", "rss_vs_heaptrack", "stats_vs_heaptrack_print",
                "stats_mem_vs_heaptrack_print", "stats_s_per_mevent", "pprof_vs_stats", "light_overhead",
                "cpu_vs_native",
                "cpu_4t", "prog_cpu_vs_native", "prog_cpu_4t", "cpu_vs_heaptrack", "heaptrack_overhead", "heaptrack_overhead_4t",
                "py_frames_dicts", "py_frames_deep", "py_frames_malloc", "py_frames_dicts_cpu",
                "py_frames_deep_cpu", "py_frames_malloc_cpu",
                "capture_vs_heaptrack_max", "reporters_vs_heaptrack_print_max", "html_mb_max", "html_load_s_max",
                "aggregate_mb", "prog_cpu_2t", "vs_heaptrack_2t", "overhead_churn", "vs_heaptrack_churn", "prefork_cpu_s",
                "build_overhead", "merge64_s", "merge64_linearity",
                "overhead_map", "vs_heaptrack_map", "vs_heaptrack_sqlite3", "vs_heaptrack_python3",
                "collector_ns_per_event", "collector_ns_per_event_max", "idle_loaded", "idle_loaded_cpu",
                "sampled_overhead_1t", "sampled_overhead_4t", "sampled_overhead_sqlite3", "sampled_overhead_python3",
                "sampled_prog_cpu_1t", "sampled_prog_cpu_4t", "sampled_cap_mb_1t", "sampled_collector_cpu_s_1t",
                "sampled_nc_overhead_1t", "sampled_nc_overhead_sqlite3", "sampled_nc_overhead_python3",
                "sampled_nc_prog_cpu_1t", "sampled_nc_prog_cpu_sqlite3",
                "sampling_max_z", "short_run_cold_s", "short_run_warm_s"]


def report(info, reps, quick, elapsed, wls, results, scale, merge, cfg, commit, acc=None, sym=None):
    """Print the header, the tables, the comparisons and the last line; returns the summary."""
    print("memprof benchmark: %s; nproc %s; %s; kernel %s; load average %s at the start, %s at the end; "
          "%s; %d repetitions%s; %.0f s"
          % (info["date"], info["nproc"], info["cpu"], info["kernel"], info["load_at_start"],
             info["load_at_end"], info["heaptrack"], reps, " (quick)" if quick else "", elapsed))
    for w in wls:
        print("  %-13s %s" % (w.name, w.desc))
    print_tables(reps, wls, results, sys.stdout)
    if scale:
        html_scale.print_table(scale, lambda *a: print(*a))
    s = summarize(results)
    sampling.print_table(results, lambda *a: print(*a))
    sampling.add_summary(results, s)
    sampling.print_accuracy(acc, lambda *a: print(*a))
    sampling.add_accuracy_summary(acc, s)
    if merge:
        merge_scale.print_table(merge, print)
        s["merge64_s"] = merge[-1]["wall_s"]
        s["merge64_linearity"] = merge[-1]["s_per_mevent"] / merge[0]["s_per_mevent"]
    if sym:
        symcache.print_table(sym, print)
        s["short_run_cold_s"] = sym["cold"]["wall_s"]
        s["short_run_warm_s"] = sym["warm"]["wall_s"]
    if scale:
        rs = scale["reports"].values()
        s["html_mb_max"] = max(r["html_bytes"] for r in rs) / 1e6
        s["html_load_s_max"] = max((r.get("open_ms", r.get("load_ms", 0)) for r in rs), default=0) / 1e3 or None
        if "aggregate_bytes" in scale:
            s["aggregate_mb"] = scale["aggregate_bytes"] / 1e6
    compare.add_summary(results, s)
    p = lambda *a: print(*a)
    compare.print_collector(results, p)
    figs = compare.figures(results, s)
    compare.print_targets(figs, p)
    compare.print_comparison(figs, quick, cfg.baseline, p)
    if cfg.save_baseline:
        compare.save(figs, quick, info, commit, cfg.save_baseline)
        p("The figures of this run were written to '%s' (the new baseline, once committed)." % cfg.save_baseline)
    print()
    print(" ".join("%s=%s" % (k, "na" if s.get(k) is None else "%.3g" % s[k]) for k in SUMMARY_KEYS))
    return s


if __name__ == "__main__":
    main()
