# A scheduler that profiles the components its configuration names, from their start.
import contextlib
import os

import memprof

PROFILED = set(os.environ.get("PROFILE", "").split(","))  # e.g. PROFILE=parser,cache


def run_component(name, main):
    if name in PROFILED:
        tracker = memprof.Tracker(f"{name}.bin", overwrite=True, trace_python_allocators=True)
    else:
        tracker = contextlib.nullcontext()
    with tracker:
        return main()


def parser():
    return [line.split() for line in ["a b c"] * 10000]


def cache():
    return {i: bytes(1000) for i in range(2000)}


for name, main in [("parser", parser), ("cache", cache)]:
    run_component(name, main)
    if name in PROFILED:
        print(name, memprof.stats(f"{name}.bin", json=True)["total_bytes_allocated"])
