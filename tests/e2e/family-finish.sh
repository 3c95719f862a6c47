#!/bin/bash
# A process tree's children are finished as they end, not when the whole run
# does: while the shell that forked them still runs (it waits on a FIFO), each
# child's capture is complete (its trailer says its exit status and its exact
# figures), it ended before the shell waited (its time is its own, not the
# run's), and memprof run holds none of their files, rings or sockets open (a
# build makes thousands of processes: before this, every one stayed open to
# the end, 2.5 GB and 6,500 descriptors in memprof's own build). A child shell
# that went on as a program (exec) says so, not "no exit status". The shell's
# capture, whose exit status memprof run's wait gives, is finished at the end.
# The closing lines of a tree of many name ten children and sum up the rest.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
command -v python3 >/dev/null || skip_ "python3 is needed to read the JSON"

mkfifo ready go || framework_failure_ "mkfifo"
cat > tree.sh <<'SH'
for n in 1 2 3 4 5; do "$1" once $n 1000; done
echo done > ready
read -r line < go
SH
keep_bg -o out -e err "$MEMPROF" run --follow-fork -o t.bin bash tree.sh "$WORKLOADS/family"
run_pid=$!
# (The FIFO: the shell has waited for its five children and waits for us.)
read -r line < ready || framework_failure_ "no line from the shell"
waiting=$(date -u +%Y-%m-%dT%H:%M:%S.%6NZ)

# Each child: the shell it was forked as (t.bin.PID), then the program it ran (t.bin.PID.2).
ls t.bin.*.2 > kids || fail_ "no capture of a child while the shell runs"
[ "$(wc -l < kids)" = 5 ] || fail_ "not five children's captures: $(ls t.bin.*)"
for f in $(cat kids) $(sed 's/\.2$//' kids); do
	mp stats --json -o "$f.json" "$f"
	expect_rc 0 "stats of $f while its parent runs"
done
# Each complete: its exit status and exact figures; it ended (its end time) before the shell
# was waiting for us (the capture's time is the process's, not the collector's).
python3 - "$waiting" $(sed 's/$/.json/' kids) <<'PY' || fail_ "the children's captures while the shell runs"
import json, sys
got = []
for f in sys.argv[2:]:
    d = json.load(open(f))
    got.append((d["total_num_allocations"], d["total_bytes_allocated"], d["total_num_frees"],
                d["exit_status"]))
    if not d["metadata"]["end_time"] <= sys.argv[1]:
        sys.exit("%s ends at %s, after the shell waited (%s)" % (f, d["metadata"]["end_time"], sys.argv[1]))
want = sorted((n, n * 1000, n, 0) for n in range(1, 6))
if sorted(got) != want:
    sys.exit("children: %r, expected %r" % (sorted(got), want))
PY
# The shells they were forked as did not exit: each went on as the program (exec).
for f in $(sed 's/\.2$//' kids); do
	mp stats "$f"
	expect_rc 0 "stats of $f"
	grep -qx 'Exit status: none: the process went on as another program (exec)' out ||
		fail_ "$f: $(grep 'Exit status' out)"
done
# memprof run holds none of the children's captures open, nor their rings.
open_caps=$(ls -l /proc/$run_pid/fd 2>/dev/null | grep -c 't\.bin\.' || true)
[ "$open_caps" = 0 ] || fail_ "memprof run still holds $open_caps of the children's captures"
open_rings=$(ls -l /proc/$run_pid/fd 2>/dev/null | grep -c 'memprof-rings' || true)
[ "$open_rings" -le 1 ] || fail_ "memprof run still holds $open_rings rings (the shell's alone is open)"
grep -c 'memprof-rings' /proc/$run_pid/maps > maps.count || true
[ "$(cat maps.count)" -le 1 ] || fail_ "memprof run still maps $(cat maps.count) rings"

echo go > go
reap $run_pid
expect_rc 0 "run --follow-fork bash tree.sh"
# A tree of many: its closing lines name the ten children's captures that allocated most,
# and sum up the others in one line (a build has thousands).
cat > many.sh <<'SH'
for n in 1 2 3 4 5 6 7 8 9 10 11 12; do "$1" once $n 1000; done
SH
mp run --follow-fork -o m.bin bash many.sh "$WORKLOADS/family"
expect_rc 0 "run --follow-fork bash many.sh"
[ "$(grep -c "^memprof: wrote 'm\.bin\.[0-9.]*' (.*, a child process): " err)" = 10 ] ||
	fail_ "not ten children named: $(cat err)"
grep -q "^memprof: wrote 'm\.bin' (bash many\.sh, pid [0-9]*): " err || fail_ "the shell not named: $(cat err)"
python3 - err m.bin.* <<'PY' || fail_ "the closing lines of a tree of many"
import json, os, re, subprocess, sys
err = open(sys.argv[1]).read()
named = {m.group(1): int(m.group(2)) for m in
         re.finditer(r"^memprof: wrote '(m\.bin\.[0-9.]+)' \(.*, a child process\): (\d+) allocations", err, re.M)}
m = re.search(r"^memprof: wrote (\d+) more captures of child processes \(the 10 that allocated most are "
              r"above\): (\d+) allocations, (\d+) frees, (\d+) bytes on disk$", err, re.M)
if not m:
    sys.exit("no line for the others: %s" % err)
allocs = {}
for f in sys.argv[2:]:
    d = json.loads(subprocess.run([os.environ["MEMPROF"], "stats", "--json", "-o", "-", f],
                                  capture_output=True, check=True).stdout)
    allocs[f] = d["total_num_allocations"]
others = [f for f in allocs if f not in named]
if int(m.group(1)) != len(others) or len(allocs) != 24:
    sys.exit("%s more, %d others of %d captures" % (m.group(1), len(others), len(allocs)))
if int(m.group(2)) != sum(allocs[f] for f in others):
    sys.exit("the others' allocations: %s, not %d" % (m.group(2), sum(allocs[f] for f in others)))
if int(m.group(4)) != sum(os.path.getsize(f) for f in others):
    sys.exit("the others' bytes on disk: %s" % m.group(4))
if any(named[f] != allocs[f] for f in named) or min(named.values()) < max(allocs[f] for f in others):
    sys.exit("not the ten that allocated most: named %r, others %r" % (named, {f: allocs[f] for f in others}))
PY

# The shell's capture, finished at the end: its exit status from memprof run's wait.
mp stats --json -o shell.json t.bin
expect_rc 0 "stats of the shell"
python3 -c 'import json,sys; d=json.load(open("shell.json")); sys.exit(d["exit_status"] != 0)' ||
	fail_ "the shell's exit status: $(cat shell.json | head -c 300)"
exit 0
