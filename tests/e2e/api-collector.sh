#!/bin/bash
# The in-process API under memprof run --paused, whose collector writes the captures: a
# Tracker without a file name records into memprof run's capture (then FILE.2), named as
# soon as it starts; aggregate=True makes it aggregated (totals per stack, the
# collector's work); each capture is complete, symbolized and with its trailer, the moment
# the with block ends; and a collector that cannot create the file is an error of the start.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-python.sh"
export PYTHONPATH=$MEMPROF_BUILDDIR/python
unset MEMPROF_LIBDIR LD_PRELOAD
py=${pythons# }
py=${py%% *}

cat > job.py <<'PY'
import os, subprocess, sys
import memprof

keep = []


def trailer(path):
    out = subprocess.run([os.environ["MEMPROF"], "parse", path], capture_output=True, text=True).stdout
    return [l.split()[0] for l in out.splitlines() if l.startswith(("HEADER", "TRAILER"))], "aggregated" in out.split("\n")[0]


with memprof.Tracker(None, aggregate=True) as t:
    print("path", t.path, flush=True)
    for _ in range(100):
        keep.append(bytearray(10000))  # SITE:agg
print("after", trailer(t.path), t.duration > 0)
with memprof.Tracker(None) as t2:
    print("path", t2.path, flush=True)
    keep.append(bytearray(20000))
print("after", trailer(t2.path))
open(t.path + ".3", "w").close()
try:
    with memprof.Tracker(None):
        pass
except OSError as e:
    print("exists", e.errno)
PY
run "$MEMPROF" run -q --paused -o "$T/cap.bin" "$py" job.py
expect_rc 0 "memprof run --paused $py job.py"
printf '%s\n' "path $T/cap.bin" "after (['HEADER', 'TRAILER'], True) True" "path $T/cap.bin.2" \
	"after (['HEADER', 'TRAILER'], False)" "exists 17" > want
match_diff want out
line=$(grep -n 'SITE:agg' job.py | cut -d: -f1)
"$MEMPROF" stats --json -o - cap.bin > s.json 2> /dev/null || fail_ "stats cap.bin"
"$py" - "$T/job.py" "$line" <<'PY' || fail_ "the aggregated capture's top location: $(head -c 400 s.json)"
import json, sys
top = json.load(open("s.json"))["top_allocations_by_size"][0]
sys.exit(0 if top["location"] == f"<module>:{sys.argv[1]}:{sys.argv[2]}" and top["count"] >= 100 else top)
PY
exit 0
