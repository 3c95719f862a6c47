"""A merge of 64 captures (issue 29): bench/prefork's 64 workers, each
allocating and freeing N blocks, under memprof run --follow-fork, read as one
by memprof stats --children; at two sizes N, 4 times apart. The time per
million events is about the same at both when the merge is linear in the
events."""
import json
import os
import statistics
import subprocess


def run(cfg, launch, log, quick):
    prefork = os.path.join(cfg.builddir, "bench", "prefork")
    sizes = (2000, 8000) if quick else (20000, 80000)
    out = []
    for n in sizes:
        cap = os.path.join(cfg.workdir, "merge-%d.mprof" % n)
        js = os.path.join(cfg.workdir, "merge-%d.json" % n)
        for path in [cap] + [os.path.join(cfg.workdir, f) for f in os.listdir(cfg.workdir)
                             if f.startswith("merge-%d.mprof." % n)]:
            os.unlink(path) if os.path.exists(path) else None
        r = subprocess.run([cfg.memprof, "run", "-q", "-f", "--follow-fork", "-o", cap, prefork,
                            "-c", "64", "-n", str(n), "-m", "0"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE)
        if r.returncode:
            raise RuntimeError("memprof run prefork -n %d: %s" % (n, r.stderr.decode()[-300:]))
        walls, rss = [], []
        for rep in range(3):
            m = launch(cfg, [cfg.memprof, "stats", "--json", "-f", "-o", js, "--children", cap],
                       "merge-%d.%d" % (n, rep))
            walls.append(m["wall_s"])
            rss.append(m["tree_rss_mb"])
            os.unlink(m["out"])
            os.unlink(m["err"])
        with open(js) as f:
            d = json.load(f)
        os.unlink(js)
        events = d["total_num_allocations"] + d["total_num_frees"]
        wall = statistics.median(walls)
        row = {"captures": len(d["processes"]), "blocks_per_worker": n, "events": events, "wall_s": wall,
               "s_per_mevent": wall / events * 1e6, "rss_mb": statistics.median(rss)}
        log("  merge of %d captures, %d events: %.3f s, %.3f s per million events, %.0f MB"
            % (row["captures"], events, wall, row["s_per_mevent"], row["rss_mb"]))
        out.append(row)
        if not cfg.keep:
            for f in os.listdir(cfg.workdir):
                if f == os.path.basename(cap) or f.startswith(os.path.basename(cap) + "."):
                    os.unlink(os.path.join(cfg.workdir, f))
    return out


def print_table(rows, out):
    out("")
    out("Several captures as one (memprof stats --children): bench/prefork's 64 workers")
    out("%10s %10s %12s %10s %14s %8s" % ("captures", "blocks", "events", "wall s", "s per Mevent", "RSS MB"))
    for r in rows:
        out("%10d %10d %12d %10.3f %14.3f %8.0f" % (r["captures"], r["blocks_per_worker"], r["events"],
                                                   r["wall_s"], r["s_per_mevent"], r["rss_mb"]))
