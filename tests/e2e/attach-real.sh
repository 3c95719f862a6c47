#!/bin/bash
# attach to programs we did not write: a Python loop and sqlite3 under load.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-attach.sh"
checked=0

if [ -x /usr/bin/python3 ]; then
	mkfifo py.ctl
	/usr/bin/python3 -c '
import sys, time
print("ready", flush=True)
kept = []
ctl = open(sys.argv[1])
for line in ctl:
    if line.strip() == "work":
        for i in range(200):
            kept.append(b"x" * 100000)   # big enough for malloc, not pymalloc
        print("worked", len(kept), flush=True)
    elif line.strip() == "quit":
        break
print("bye", flush=True)
sys.exit(4)' "$T/py.ctl" > py.out 2>&1 & py=$!
	wait_until 60 grep -q ready py.out
	exec 7> py.ctl
	attach_bg py.bin -q $py
	echo work >&7
	wait_until 60 grep -q worked py.out
	detach_wait $py "detach python3"
	echo quit >&7
	exec 7>&-
	wait $py; st=$?
	[ "$st" -eq 4 ] || fail_ "python3 exited $st"
	printf 'ready\nworked 200\nbye\n' | cmp -s - py.out || fail_ "python3's output: $(cat py.out)"
	"$MEMPROF" stats --json -o py.json py.bin > /dev/null || fail_ "stats on the python capture"
	python3 -c '
import json
d = json.load(open("py.json"))
assert d["total_num_allocations"] >= 200, d["total_num_allocations"]
assert d["total_bytes_allocated"] >= 200 * 100000, d["total_bytes_allocated"]' || fail_ "python3 capture: $(head -c 300 py.json)"
	# A bytes object of 100000 bytes is 100033 with its header, from the -c program's
	# code: its Python frame, in place of the interpreter's loop (Python frames are on).
	"$MEMPROF" parse --stacks py.bin > py.parse || fail_ "parse --stacks py.bin"
	n=$(grep -cE '^ALLOC .*size=100033 .*"PyObject_Malloc",[^]]*"<module>"' py.parse)
	[ "$n" -eq 200 ] || fail_ "$n of the 200 bytes objects were seen with their Python frame"
	! grep -qE '^ALLOC .*size=100033 .*"_PyEval_EvalFrameDefault"' py.parse ||
		fail_ "the interpreter's loop is still in the bytes objects' stacks"
	checked=$((checked + 1))
fi

if command -v sqlite3 > /dev/null; then
	mkfifo sql.ctl
	sqlite3 :memory: < sql.ctl > sql.out 2>&1 & sq=$!
	exec 8> sql.ctl
	echo "create table t(k integer primary key, v text); select 'ready';" >&8
	wait_until 60 grep -q ready sql.out
	attach_bg sq.bin -q $sq
	{ for i in $(seq 2000); do echo "insert into t(v) values (hex(randomblob(200)));"; done
	  echo "select 'count', count(*) from t;"; } >&8
	wait_until 60 grep -q 'count|2000' sql.out
	grep -q 'count|2000' sql.out || fail_ "sqlite3 did not finish: $(tail -2 sql.out)"
	detach_wait $sq "detach sqlite3"
	echo ".quit" >&8
	exec 8>&-
	wait $sq || fail_ "sqlite3 failed"
	n=$("$MEMPROF" parse sq.bin | grep -c '^ALLOC')
	[ "$n" -ge 2000 ] || fail_ "only $n allocations from 2000 inserts"
	"$MEMPROF" parse --stacks sq.bin | grep '^ALLOC' | grep -q 'sqlite3' || fail_ "no sqlite3 frames"
	checked=$((checked + 1))
fi
[ "$checked" -gt 0 ] || skip_ "neither python3 nor sqlite3 is installed"
exit 0
