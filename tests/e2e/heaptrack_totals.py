#!/usr/bin/env python3
"""Exact totals from a heaptrack capture (its interpreted text stream), for the oracle tests.

Prints "allocations bytes leaked_bytes leaked_blocks", leaving out allocations
whose stack passes through _dl_init: heaptrack's preload library links
libstdc++, whose initialisation allocates before the program starts; memprof
does not load it, so those are heaptrack's own.
"""
import subprocess
import sys

text = subprocess.run(["zstd", "-dc", sys.argv[1]], check=True, capture_output=True, text=True).stdout
strings, ips, traces, infos = [], [], [None], []
count = {}  # allocation info index -> live count, for leaks
allocs = bytes_ = 0
leaked_bytes = 0
def own(trace):
    seen = 0
    while trace and seen < 10000:
        ip = traces[trace][0]
        if any(strings[f] == "_dl_init" for f in ips[ip]):
            return True
        trace = traces[trace][1]
        seen += 1
    return False
for line in text.splitlines():
    f = line.split()
    if not f:
        continue
    if f[0] == "s":
        strings.append(line[2:].split(" ", 1)[1] if " " in line[2:] else "")
    elif f[0] == "i":
        # i <ip> <module> [<function> <file> <line> [<inlined function> <file> <line>]...]
        funcs = [int(x, 16) - 1 for x in f[3::3]]
        ips.append(funcs)
    elif f[0] == "t":
        traces.append((int(f[1], 16) - 1, int(f[2], 16)))
    elif f[0] == "a":
        infos.append((int(f[1], 16), int(f[2], 16)))
    elif f[0] in "+-":
        size, trace = infos[int(f[1], 16)]
        if own(trace):
            continue
        if f[0] == "+":
            allocs += 1
            bytes_ += size
            leaked_bytes += size
            count[size, trace] = count.get((size, trace), 0) + 1
        else:
            leaked_bytes -= size
            count[size, trace] -= 1
print(allocs, bytes_, leaked_bytes, sum(c for c in count.values() if c > 0))
