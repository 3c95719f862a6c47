#!/bin/bash
# The Python package from the build tree (PYTHONPATH=BUILDDIR/python, which finds this
# tree's tracker): with memprof.Tracker(...) the capture's top location is the script's
# line; memray's refusals (a second Tracker, an existing file); status; snapshot;
# trace_python_allocators records the objects pymalloc would have served; the decorator
# writes the capture and the flame graph with --leaks, its call's value passing through;
# aggregate=True when the tracker writes the file itself gives what the full capture gives;
# each CPython 3.11 to 3.13 the machine has.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-python.sh"
export PYTHONPATH=$MEMPROF_BUILDDIR/python
unset MEMPROF_LIBDIR LD_PRELOAD

cat > job.py <<'EOF'
import os, sys
import memprof

keep = []


def leak_some():
    for _ in range(40):
        keep.append(bytearray(100000))


def into(out):
    for _ in range(40):
        out.append(bytearray(100000))


def small_objects():
    return [(i, str(i)) for i in range(20000)]


with memprof.Tracker("job.bin") as t:
    leak_some()
print("path", t.path == os.path.abspath("job.bin"), "status", memprof.status()["recording"],
      memprof.status()["path"] == t.path)
try:
    with memprof.Tracker("job.bin"):
        pass
except FileExistsError as e:
    print("exists", e.errno)
with memprof.Tracker("outer.bin") as outer:
    print("recording", memprof.status()["recording"], memprof.status()["by"])
    try:
        with memprof.Tracker("inner.bin"):
            pass
    except RuntimeError as e:
        print("nested", str(e).startswith("No more than one Tracker"))
    outer.snapshot("outer.snap")
    small = small_objects()
with memprof.Tracker("traced.bin", trace_python_allocators=True):
    small = small_objects()
try:
    memprof.stop()
except FileNotFoundError:
    print("stop: none")
# Aggregated by the tracker itself (no collector), then the same in full.
with memprof.Tracker("agg.bin", aggregate=True):
    into([])
with memprof.Tracker("aggfull.bin"):
    into([])
try:
    with memprof.Tracker("aggsampled.bin", aggregate=True, sampling_interval=4096):
        pass
except ValueError as e:
    print("aggregate sampled:", str(e).startswith("aggregate=True with sampling needs a collector"),
          os.path.exists("aggsampled.bin"))


@memprof.profile(reporter="flamegraph", reporter_args=["--leaks"], output_dir="bin")
def task(n):
    keep.extend(bytearray(50000) for _ in range(n))
    return n * 2


print("task", task(10), os.path.exists(task.last.capture), os.path.exists(task.last.report))
print(task.last.capture)
print(task.last.report)


# follow_fork: a forked child's allocations go to its own capture, the name with .<pid>
# (aggregated too when the parent's is).
def forked(name, **kwargs):
    with memprof.Tracker(name, follow_fork=True, **kwargs):
        child = os.fork()
        if child == 0:
            keep.append(bytearray(123455))
            os._exit(0)
        os.waitpid(child, 0)
        keep.append(bytearray(54320))
    return child


print("forked", forked("forks.bin"))
print("aggforked", forked("aggforks.bin", aggregate=True))


@memprof.profile
def bare():
    return "bare"


print("bare", bare(), os.path.basename(bare.last.report).startswith("memprof-flamegraph-bare."))
EOF
leak_line=$(grep -n 'keep.append(bytearray(100000))' job.py | cut -d: -f1)
small_line=$(grep -n 'return \[(i, str(i))' job.py | cut -d: -f1)
task_line=$(grep -n 'keep.extend' job.py | cut -d: -f1)

for py in $pythons; do
	rm -rf ./*.bin ./*.bin.* ./*.snap bin memprof_bin
	run "$py" job.py
	expect_rc 0 "$py job.py"
	[ ! -s err ] || fail_ "$py: stderr: $(cat err)"
	cat > want <<EOF
path True status False True
exists 17
recording True api
nested True
stop: none
aggregate sampled: True False
task 20 True True
EOF
	grep -v '^/' out | grep -v '^bare\|^forked\|^aggforked' > got
	match_diff want got
	grep -qx 'bare bare True' out || fail_ "$py: the bare decorator: $(cat out)"
	child=$(sed -n 's/^forked //p' out)
	"$MEMPROF" parse forks.bin | grep -q '^ALLOC .* size=54321 ' || fail_ "$py: forks.bin lacks the parent's block"
	! "$MEMPROF" parse forks.bin | grep -q '^ALLOC .* size=123456 ' || fail_ "$py: forks.bin has the child's block"
	"$MEMPROF" parse "forks.bin.$child" | grep -q '^ALLOC .* size=123456 ' || fail_ "$py: forks.bin.$child lacks the child's block"
	"$MEMPROF" parse "forks.bin.$child" | grep -q '^TRAILER .* end=exit' || fail_ "$py: the child's capture is not complete"

	# The top location by size is the script's line.
	"$MEMPROF" stats --json -o - job.bin > s.json 2> /dev/null || fail_ "$py: stats job.bin"
	"$py" - "$T/job.py" "$leak_line" <<'PY' || fail_ "$py: the top location of job.bin: $(head -c 400 s.json)"
import json, sys
top = json.load(open("s.json"))["top_allocations_by_size"][0]
want = f"leak_some:{sys.argv[1]}:{sys.argv[2]}"
sys.exit(0 if top["location"] == want and top["size"] >= 40 * 100000 else f"{top} != {want}")
PY
	# aggregate=True: no events in the file, and the top location as in the full capture.
	"$MEMPROF" parse agg.bin > p || fail_ "$py: parse agg.bin"
	grep -q '^HEADER .*flags=[a-z,]*aggregated' p || fail_ "$py: agg.bin is not aggregated: $(grep ^HEADER p)"
	expect_count 0 '^(ALLOC|FREE|TICK) ' p
	for f in agg aggfull; do
		"$MEMPROF" stats --json -o - $f.bin 2> /dev/null > $f.json || fail_ "$py: stats $f.bin"
	done
	"$py" - "$T/job.py" "$(grep -n 'out.append(bytearray(100000))' job.py | cut -d: -f1)" <<'PY' ||
import json, sys
a, f = (json.load(open(n))["top_allocations_by_size"][0] for n in ("agg.json", "aggfull.json"))
want = f"into:{sys.argv[1]}:{sys.argv[2]}"
sys.exit(0 if a == f and a["location"] == want and a["count"] >= 40 and a["size"] >= 40 * 100000
         else f"{a} (aggregated) != {f} (full), at {want}")
PY
		fail_ "$py: the top location of agg.bin"
	# The followed child of an aggregated capture: aggregated too, leaking what the child of
	# the full capture of the same scenario leaks (parent and child alike).
	aggchild=$(sed -n 's/^aggforked //p' out)
	for f in aggforks.bin:forks.bin "aggforks.bin.$aggchild:forks.bin.$child"; do
		"$MEMPROF" parse "${f%:*}" > p || fail_ "$py: parse ${f%:*}"
		grep -q '^HEADER .*aggregated' p || fail_ "$py: ${f%:*} is not aggregated"
		expect_count 0 '^(ALLOC|FREE|TICK) ' p
		"$MEMPROF" transform folded --leaks -o - "${f%:*}" > agg.folded 2> /dev/null &&
		"$MEMPROF" transform folded --leaks -o - "${f#*:}" > full.folded 2> /dev/null || fail_ "$py: transform folded ${f%:*}"
		diff -u full.folded agg.folded >&2 || fail_ "$py: ${f%:*} leaks what ${f#*:} does not"
	done
	[ "$(awk '{n += $NF} END {print n}' agg.folded)" -ge 123456 ] || fail_ "$py: the child's capture lacks its block"
	# The snapshot is a complete capture of the outer tracker's, at the time it was taken.
	"$MEMPROF" parse outer.snap | grep -q '^TRAILER .* end=snapshot' || fail_ "$py: outer.snap's trailer"
	"$MEMPROF" parse outer.bin | grep -q '^TRAILER .* end=detach' || fail_ "$py: outer.bin's trailer"

	# trace_python_allocators: small_objects' tuples and strings are allocations of their own.
	n_traced=$("$MEMPROF" stats --json -o - traced.bin 2> /dev/null | "$py" -c '
import json, sys
d = json.load(sys.stdin)
print(sum(e["count"] for e in d["top_allocations_by_count"] if e["location"].startswith("<listcomp>") or e["location"].startswith("small_objects")))')
	[ "$n_traced" -ge 40000 ] || fail_ "$py: small_objects made $n_traced allocations with trace_python_allocators, expected 40000 or more"
	n_plain=$("$MEMPROF" parse outer.bin | grep -c '^ALLOC .* size=\(3[0-9]\|4[0-9]\|5[0-9]\|6[0-9]\) ' || true)
	[ "$n_plain" -lt 1000 ] || fail_ "$py: without trace_python_allocators $n_plain small objects were malloc's"

	# The decorator: the capture, and its flame graph with --leaks.
	capture=$(grep "^/" out | sed -n 1p)
	report=$(grep "^/" out | sed -n 2p)
	case "$capture" in "$T/bin/task."*.bin) ;; *) fail_ "$py: the task's capture is '$capture'" ;; esac
	[ "$report" = "$T/bin/memprof-flamegraph-$(basename "$capture" .bin).html" ] || fail_ "$py: the task's report is '$report'"
	grep -q '"report":"flamegraph","mode":"leaks"' "$report" || fail_ "$py: the task's report is not a flame graph of the leaks"
	"$MEMPROF" stats --json -o - "$capture" 2> /dev/null | "$py" -c '
import json, sys
top = json.load(sys.stdin)["top_allocations_by_size"][0]
want = f"task.<locals>.<genexpr>:{sys.argv[2]}:{sys.argv[1]}"
sys.exit(0 if top["location"] == want and top["size"] >= 10 * 50000 else f"{top} != {want}")' "$task_line" "$T/job.py" ||
		fail_ "$py: the task's top location is not its line $task_line"
done
exit 0
