#!/bin/bash
# A process tree: a shell that forks three C children with known allocations
# (tests/workloads/family.c), under run --follow-fork. Reported as one: every
# total the sum of the processes' (each capture alone says its own), each
# child's figures exact and each process named; the peak is that of the
# summed heap: A (3 x 100000 B, held until the end) with C (500000 B), not
# with B (2 x 200000 B, gone before C starts). Also --reporter after
# --follow-fork, and --children's family against the captures named by hand.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-family.sh"
command -v python3 >/dev/null || skip_ "python3 is needed to read the JSON"

family_run s.bin --reporter table
expect_rc 0 "run --follow-fork bash family.sh"
# Each capture's process named in the closing lines, and the report of the whole tree.
for pid in $(ls s.bin.* | sed -n 's/^s\.bin\.\([0-9]*\)\.2$/\1/p'); do
	grep -q "^memprof: wrote 's.bin.$pid.2' (family, pid $pid, a child process): " err ||
		fail_ "no closing line naming family, pid $pid: $(cat err)"
done
[ "$(grep -c "^memprof: wrote 's.bin.[0-9]*.2' (family, pid " err)" = 3 ] || fail_ "not three children: $(cat err)"
grep -q "^memprof: wrote 's.bin' (bash family.sh, pid [0-9]*): " err || fail_ "no line for the shell: $(cat err)"
grep -qx "Wrote memprof-table-s.html" err || fail_ "--reporter table: $(cat err)"
python3 - memprof-table-s.html <<'PY' || fail_ "the table of the tree"
import json, re, sys
d = json.loads(re.search(r'id="memprof-data">(.*?)</script>', open(sys.argv[1]).read(), re.S).group(1))
S = d["strings"]
names = [S[n] for n in d["processes"]["name"]]
if names.count("family") != 3 or names[0] != "bash family.sh":
    sys.exit("processes: %r" % names)
R, L = d["rows"], d["locations"]
at_peak = {}
for i in range(len(R["bytes"])):
    fn = S[L["function"][R["location"][i]]]
    at_peak.setdefault(fn, []).append((names[R["process"][i]], R["bytes"][i], R["count"][i]))
if sorted(at_peak.get("hold_alloc", [])) != [("family", 300000, 3)] or \
        sorted(at_peak.get("once_alloc", [])) != [("family", 500000, 1)]:
    sys.exit("the children at the peak: %r" % {k: v for k, v in at_peak.items() if k.endswith("_alloc")})
PY

# The captures by hand, and with --children: the same report.
mp stats --json -o all.json s.bin s.bin.*
expect_rc 0 "stats of every capture"
mp stats --json -o children.json --children s.bin
expect_rc 0 "stats --children"
python3 - all.json children.json s.bin s.bin.* <<'PY' || fail_ "JSON of the tree"
import json, subprocess, sys, os
a, c = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
def eq(what, got, want):
    if got != want:
        sys.exit("%s: %r, expected %r" % (what, got, want))
for k in ("total_num_allocations", "total_bytes_allocated", "total_num_frees", "peak_memory_bytes",
          "leaked_bytes", "processes"):
    eq("--children against the files named: " + k, c[k], a[k])
# Totals: the sum of each capture's own.
alone = [json.loads(subprocess.run([os.environ["MEMPROF"], "stats", "--json", "-o", "-", f],
                                   capture_output=True, check=True).stdout) for f in sys.argv[3:]]
for k in ("total_num_allocations", "total_bytes_allocated", "total_num_frees", "leaked_bytes"):
    eq("sum of " + k, a[k], sum(x[k] for x in alone))
# Each child exact, each process named.
kids = sorted((p["num_allocations"], p["total_bytes"], p["num_frees"], p["leaked_bytes"], p["exit_status"])
              for p in a["processes"] if p["command"] == "family")
eq("the children", kids, [(1, 500000, 1, 0, "0"), (2, 400000, 2, 0, "0"), (3, 300000, 3, 0, "0")])
eq("the shell", a["processes"][0]["command"], "bash family.sh")
eq("processes", len(a["processes"]), len(sys.argv) - 3)
PY

# The peak of the summed heap, split by process: A's and C's blocks, not B's.
mp transform --children --split-processes -o peak.folded folded s.bin
expect_rc 0 "transform --split-processes"
grep -E '^family \(pid [0-9]+\);.*;main;hold_alloc 300000$' peak.folded > /dev/null || fail_ "A at the peak: $(cat peak.folded)"
grep -E '^family \(pid [0-9]+\);.*;main;once_alloc 500000$' peak.folded > /dev/null || fail_ "C at the peak: $(grep ^family peak.folded)"
[ "$(grep -c '^family ' peak.folded)" = 2 ] || fail_ "not only A and C at the peak: $(grep ^family peak.folded)"
# ... which is the whole peak of the tree, the shell's part included.
total=$(awk '{ s += $NF } END { print s }' peak.folded)
python3 -c "import json,sys; sys.exit(json.load(open('all.json'))['peak_memory_bytes'] != $total)" ||
	fail_ "the peak split by process adds up to $total, not to the peak"
exit 0
