#!/bin/bash
# A Python multiprocessing pool (fork) under run --follow-fork: its workers'
# captures reported with the parent's as one (--children). The top location
# is the workers' line, with the exact count of all of them: 6 tasks of
# 2,000 bytearray(1000) each (a buffer of 1001 bytes from malloc).
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
command -v python3 >/dev/null || skip_ "python3 is needed to read the JSON"
py=/usr/bin/python3
[ -x "$py" ] || skip_ "no /usr/bin/python3"

cat > mp.py <<'PY'
import multiprocessing as mp


def work(task):
    keep = [None] * 2000
    for k in range(2000):
        keep[k] = bytearray(1000)
    return len(keep)


if __name__ == "__main__":
    mp.set_start_method("fork")
    with mp.Pool(3) as pool:
        print(sum(pool.map(work, range(6), chunksize=1)))
PY
mp run --follow-fork -o mpc.bin "$py" mp.py
expect_rc 0 "run --follow-fork python3 mp.py"
expect_out 12000
[ "$(grep -c "^memprof: wrote 'mpc.bin.[0-9]*' (python3 mp.py, pid [0-9]*, a child process)" err)" = 3 ] ||
	fail_ "not three workers named: $(cat err)"
grep -q "^memprof: next: memprof flamegraph --children mpc.bin$" err || fail_ "no next line: $(cat err)"

# The parent's capture alone shows nothing of the work.
mp stats --json -o - mpc.bin
expect_rc 0 "stats of the parent"
grep -q '"work:' out && fail_ "the parent's capture has the workers' line"

mp stats --json -o - --children mpc.bin
expect_rc 0 "stats --children"
python3 - out <<'PY' || fail_ "the workers' line"
import json, sys
d = json.load(open(sys.argv[1]))
want = ("work", 7, 12000, 12000 * 1001)
for key in ("top_allocations_by_size", "top_allocations_by_count"):
    t = d[key][0]
    got = (t["function"], t["line"], t["count"], t["size"])
    if got != want or not t["file"].endswith("mp.py"):
        sys.exit("%s: %r, expected %r" % (key, t, want))
names = [p["command"] for p in d["processes"]]
if names != ["python3 mp.py"] * 4:
    sys.exit("processes: %r" % names)
PY
mp stats --children mpc.bin
expect_rc 0 "stats --children (text)"
grep -qE '^	- work:.*mp\.py:7 -> 12000$' out || fail_ "no top line of 12000: $(grep -A2 'number of allocations' out)"
[ "$(grep -cE '^	- python3 mp\.py \(pid [0-9]+\): ' out)" = 4 ] || fail_ "processes: $(sed -n '/by process/,/^$/p' out)"
exit 0
