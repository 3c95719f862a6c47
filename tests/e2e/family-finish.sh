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
# The shell's capture, finished at the end: its exit status from memprof run's wait.
mp stats --json -o shell.json t.bin
expect_rc 0 "stats of the shell"
python3 -c 'import json,sys; d=json.load(open("shell.json")); sys.exit(d["exit_status"] != 0)' ||
	fail_ "the shell's exit status: $(cat shell.json | head -c 300)"
exit 0
