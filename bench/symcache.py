"""What symbolizing costs a short run (the cache of debug files kept
decompressed, lib/symbols/debugcache.h): memprof run of a program of a few
milliseconds, with the cache empty before each run (cold), with it filled
by an earlier run (warm), and with --no-symbols; medians of interleaved
runs. The cold runs inflate the compressed debug files that are installed
(libc6-dbg's libc, here) and write their copies; the warm runs map the
copies. Every other figure of the suite runs with a warm cache (its own,
in the scratch directory), as a user's second run does."""
import os
import shutil
import statistics


def cache_dir(cfg):
    return os.path.join(cfg.workdir, "cache")


def run(cfg, launch, log, reps):
    prog = [os.path.join(cfg.builddir, "bench", "alloc-light"), "-r", "100", "-w", "10"]
    cold_dir = os.path.join(cfg.workdir, "cache-cold")
    cap = os.path.join(cfg.workdir, "symcache.mprof")
    modes = {
        "cold": ([], {"MEMPROF_CACHE_DIR": cold_dir}),
        "warm": ([], {"MEMPROF_CACHE_DIR": cache_dir(cfg)}),
        "no_symbols": (["--no-symbols"], {"MEMPROF_CACHE_DIR": cache_dir(cfg)}),
    }
    walls = {m: [] for m in modes}
    cpus = {m: [] for m in modes}
    for rep in range(reps + 1):
        for mode, (opts, env) in modes.items():
            if mode == "cold":
                shutil.rmtree(cold_dir, ignore_errors=True)
            m = launch(cfg, [cfg.memprof, "run", "-q", "-f", "-o", cap] + opts + prog,
                       "symcache.%s.%d" % (mode, rep), env=env)
            if m["exit"] != 0:
                raise RuntimeError("memprof run (%s): %s" % (mode, open(m["err"]).read()[-300:]))
            if rep:  # the first round fills the warm cache
                walls[mode].append(m["wall_s"])
                cpus[mode].append(m["cpu_s"])
            for f in (m["out"], m["err"]):
                os.unlink(f)
    os.unlink(cap)
    shutil.rmtree(cold_dir, ignore_errors=True)
    copies = sorted(os.listdir(os.path.join(cache_dir(cfg), "debug"))) \
        if os.path.isdir(os.path.join(cache_dir(cfg), "debug")) else []
    row = {m: {"wall_s": statistics.median(walls[m]), "cpu_s": statistics.median(cpus[m])} for m in modes}
    row["copies"] = len(copies)
    log("  a short run: cold %.3f s, warm %.3f s, --no-symbols %.3f s (wall); %d debug files in the cache"
        % (row["cold"]["wall_s"], row["warm"]["wall_s"], row["no_symbols"]["wall_s"], len(copies)))
    return row


def print_table(row, out):
    out("")
    out("Symbolizing a short run (memprof run of bench/alloc-light -r 100 -w 10): the cache of debug files")
    out("%-14s %8s %8s" % ("", "wall s", "CPU s"))
    for m in ("cold", "warm", "no_symbols"):
        out("%-14s %8.3f %8.3f" % (m.replace("_", "-"), row[m]["wall_s"], row[m]["cpu_s"]))
    out("(%d compressed debug files kept decompressed in the cache)" % row["copies"])
