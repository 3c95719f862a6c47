#!/bin/bash
# Python-aware stacks: a CPython program's allocations show its Python
# functions, files and lines in place of the interpreter's evaluation frames,
# in every report, with the native frames above and below kept; a C extension
# (zlib) shows its Python caller above its own frames. Debian 12's python3
# (3.11, stripped), as a fresh CI machine has it: not whatever python3 PATH has.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"

PY=/usr/bin/python3
[ -x "$PY" ] || skip_ "$PY is not installed"
"$PY" -c 'import sys; sys.exit(not (3, 11) <= sys.version_info[:2] <= (3, 13))' ||
	skip_ "$PY is not CPython 3.11 to 3.13"

# The leak is at line 7; the temporary list is smaller than the leak, which
# is the top location by size; the compressor keeps zlib's state alive.
cat > leak.py <<'EOF'
import zlib

leaked = []


def leak_some():
    leaked.append(bytearray(4 << 20))


def temporary():
    big = [str(i) for i in range(100000)]
    return len(big)


def make_compressor():
    return zlib.compressobj(9)


def main():
    for _ in range(8):
        leak_some()
    keep = make_compressor()
    print(temporary(), len(leaked))
    return keep


compressor = main()
EOF

mp run -q -o py.bin "$PY" leak.py
expect_rc 0 "run python3 leak.py"
expect_out "100000 8"

# stats: the top location by size is the leak's line.
"$MEMPROF" stats py.bin > stats.txt || fail_ "stats"
top=$(grep -A1 'largest allocating locations (by size)' stats.txt | tail -1)
case "$top" in
*"- leak_some:$T/leak.py:7 -> 32.000 MiB") ;;
*) fail_ "the top location by size is '$top', expected leak_some at leak.py:7 (32 MiB)" ;;
esac
"$MEMPROF" stats --json -o s.json py.bin > /dev/null || fail_ "stats --json"
python3 - "$T/leak.py" <<'PY' || fail_ "stats --json: $(head -c 600 s.json)"
import json, sys
d = json.load(open("s.json"))
top = d["top_allocations_by_size"][0]
assert top["function"] == "leak_some" and top["file"] == sys.argv[1] and top["line"] == 7, top
assert top["size"] >= 32 << 20 and top["count"] == 8, top
# Python code's module is its source file: the script leads the modules.
mod = d["top_modules_by_allocation_size"][0]
assert mod["module"] == sys.argv[1], d["top_modules_by_allocation_size"][:3]
PY
grep -A1 'allocating modules (by size)' stats.txt | grep -qF -- "- $T/leak.py: " ||
	fail_ "the top module by size: $(grep -A2 'allocating modules (by size)' stats.txt)"

# The leaked blocks' stacks: the Python frames, innermost first, in place of
# the evaluation loop's, between the interpreter's C frames.
"$MEMPROF" parse --stacks py.bin > p || fail_ "parse --stacks"
grep -E '^ALLOC .*size=419430[0-9] ' p > leaks || true
[ "$(wc -l < leaks)" -eq 8 ] || fail_ "$(wc -l < leaks) allocations of 4 MiB, expected 8"
grep -vqE '"leak_some","main","<module>"' leaks && fail_ "a leak's stack lacks leak_some, main, <module>: $(head -1 leaks)"
grep -q '_PyEval_EvalFrameDefault' leaks && fail_ "the evaluation loop is still in the stacks: $(head -1 leaks)"
grep -qE '"_start"\]$' leaks || fail_ "the native frames below Python are gone: $(head -1 leaks)"
# Every Python frame is an ordinary symbol: a function, its file and line.
grep -qE '^SYMBOL ip=0xfe[0-9a-f]{14} module=0 .*frames=\["leak_some" "'"$T"'/leak.py":7:' p ||
	fail_ "no SYMBOL record for leak_some at leak.py:7"
grep -qE '^HEADER .*flags=symbolized' p || fail_ "the capture is not symbolized"

# summary --leaks names the Python functions (tracking ended when the
# interpreter began to finalize, so the leak is still held).
mp summary --leaks -r 200 py.bin
expect_rc 0 "summary --leaks"
expect_out "leak_some at $T/leak.py"
expect_out "main at $T/leak.py"
expect_out "make_compressor at $T/leak.py"

# The flame graph of the leaks: Python functions in the tree, and the zlib
# call's native frames under its Python caller.
mp flamegraph --leaks -o fg.html py.bin
expect_rc 0 "flamegraph --leaks"
python3 "$MEMPROF_SRCDIR/tests/browser/report_data.py" fg.html > fg.txt || fail_ "report_data.py"
grep -qE '^node .*;<module>;main;leak_some;.* total=' fg.txt ||
	fail_ "the flame graph has no path <module>;main;leak_some: $(grep -m3 '^node' fg.txt)"
grep -qE '^node .*;main;make_compressor;[^ ]*deflateInit2_' fg.txt ||
	fail_ "the flame graph has no zlib frames under make_compressor: $(grep -m3 make_compressor fg.txt)"
grep -q '_PyEval_EvalFrameDefault' fg.txt && fail_ "the flame graph still shows _PyEval_EvalFrameDefault"

# --no-python-frames: the interpreter's own frames, as for any program.
mp run -q -f --no-python-frames -o native.bin "$PY" leak.py
expect_rc 0 "run --no-python-frames"
"$MEMPROF" parse --stacks native.bin > pn || fail_ "parse --stacks native.bin"
grep -qE '^ALLOC .*size=419430[0-9] .*_PyEval_EvalFrameDefault' pn ||
	fail_ "--no-python-frames: no evaluation loop frame in the leak's stack"
grep -q 'leak_some' pn && fail_ "--no-python-frames: a Python frame in the capture"

# The tracker preloaded by hand writes the same frames itself (direct mode),
# and MEMPROF_PYTHON_FRAMES=0 turns them off there.
run env LD_PRELOAD="$TRACKER_LIB" MEMPROF_OUTPUT="$T/direct.bin" "$PY" leak.py
expect_rc 0 "preloaded python3"
expect_no_err "preloaded python3"
keep -o dstats.txt "$MEMPROF" stats direct.bin
expect_rc 0 "stats direct.bin"
grep -A1 'largest allocating locations (by size)' dstats.txt | grep -qF -- "- leak_some:$T/leak.py:7 -> 32.000 MiB" ||
	fail_ "direct mode: $(grep -A2 'largest allocating locations (by size)' dstats.txt)"
run env LD_PRELOAD="$TRACKER_LIB" MEMPROF_OUTPUT="$T/dnative.bin" MEMPROF_PYTHON_FRAMES=0 "$PY" leak.py
expect_rc 0 "preloaded python3, MEMPROF_PYTHON_FRAMES=0"
keep -o pd "$MEMPROF" parse --stacks dnative.bin
expect_rc 0 "parse dnative.bin"
grep -q 'leak_some' pd && fail_ "MEMPROF_PYTHON_FRAMES=0: a Python frame in the capture"

# --trace-python-allocators: each str of the temporary list is a malloc of
# its own (PYTHONMALLOC=malloc), at the list comprehension's line.
mp run -q -f --trace-python-allocators -o objs.bin "$PY" leak.py
expect_rc 0 "run --trace-python-allocators"
expect_out "100000 8"
"$MEMPROF" stats --json -o o.json objs.bin > /dev/null || fail_ "stats --json objs.bin"
python3 - "$T/leak.py" <<'PY' || fail_ "--trace-python-allocators: $(head -c 800 o.json)"
import json, sys
d = json.load(open("o.json"))
rows = [r for r in d["top_allocations_by_count"] if r["file"] == sys.argv[1] and r["line"] == 11]
assert rows and rows[0]["count"] >= 100000, d["top_allocations_by_count"]
PY
exit 0
