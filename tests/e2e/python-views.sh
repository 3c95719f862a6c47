#!/bin/bash
# A Python program as a user reads it, on Debian's python3 (3.11, stripped):
# every report shows its Python functions first, the interpreter's own
# frames folded (summary's first rows, tree's top, the heaviest folded
# stack, pprof's first flat row), a C library or extension it calls named
# with its Python caller, --all-frames gives every frame back, and the
# flame graph's "All frames" toggle shows what memprof transform folded
# shows, folded or not.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-html.sh"

PY=/usr/bin/python3
[ -x "$PY" ] || skip_ "$PY is not installed"
"$PY" -c 'import sys; sys.exit(not (3, 11) <= sys.version_info[:2] <= (3, 13))' ||
	skip_ "$PY is not CPython 3.11 to 3.13"

# A script and two modules; each module allocates what it keeps, the
# package's more than the other (about 4 MiB and 3 MiB).
mkdir pkg
cat > helper.py <<'EOF'
keep = []
def grow(n):
    for _ in range(n):
        keep.append(bytearray(1000))
EOF
: > pkg/__init__.py
cat > pkg/deep.py <<'EOF'
store = []
def fill(n):
    for i in range(n):
        store.append("x" * (2000 + i % 7))
EOF
cat > main.py <<'EOF'
import helper
from pkg import deep


def main():
    helper.grow(3000)
    deep.fill(2000)


main()
EOF
mp run -q -o two.bin "$PY" main.py
expect_rc 0 "run python3 main.py"

# summary --leaks: the first rows are the script's and the modules' functions.
mp summary --leaks -r 4 two.bin
expect_rc 0 "summary --leaks"
rows=$(sed -n 's/^│ \([^│]*[^ ]\) *│.*/\1/p' out | head -4 | tr '\n' '|')
[ "$rows" = "<module> at $T/main.py|main at $T/main.py|fill at $T/pkg/deep.py|grow at $T/helper.py|" ] ||
	fail_ "summary --leaks' first rows: $rows"
# --all-frames: every frame, the interpreter's first, as before.
mp summary --leaks --all-frames -r 1 two.bin
expect_rc 0 "summary --all-frames"
grep -qE '^│ [^ ]+ at /usr/bin/python3' out || fail_ "--all-frames: the first row is not the interpreter's: $(grep -m1 '^│' out)"

# tree --leaks: <module> at the top, the two calls under it with their lines.
mp tree --leaks two.bin
expect_rc 0 "tree --leaks"
first=$(sed -n '3p' out)
case "$first" in
"├── "*" <module>  $T/main.py:10") ;;
*) fail_ "tree --leaks' first branch: '$first'" ;;
esac
expect_count 1 "── [0-9.]+ MiB \([0-9.]+ %\) main → fill  $T/pkg/deep\.py:4\$" out
expect_count 1 "── [0-9.]+ MiB \([0-9.]+ %\) main → grow  $T/helper\.py:4\$" out
expect_not_out "PyByteArray_Resize"
expect_not_out "python3.11+0x"

# The heaviest folded stack: Python functions only.
mp transform --leaks -o two.folded folded two.bin
expect_rc 0 "transform folded"
heaviest=$(sort -t' ' -k2 -n two.folded | tail -1)
[ "$heaviest" = "<module>;main;fill $(sed -n 's/^<module>;main;fill //p' two.folded)" ] ||
	fail_ "the heaviest folded stack: $heaviest"
[ "${heaviest##* }" -ge 4000000 ] || fail_ "fill's bytes: $heaviest"

# pprof: the first flat row is a Python function, with its file and line.
if command -v go > /dev/null && go tool pprof -h > /dev/null 2>&1; then
	export PPROF_TMPDIR=$T HOME=$T GOCACHE=$T/gocache
	mp transform --leaks -o two.pb.gz pprof two.bin
	expect_rc 0 "transform pprof"
	go tool pprof -top two.pb.gz > top 2> pprof.err || fail_ "go tool pprof: $(cat pprof.err)"
	flat=$(awk '/flat%/ { getline; print $NF; exit }' top)
	[ "$flat" = fill ] || fail_ "pprof's first flat row: $(sed -n '/flat%/,+2p' top)"
	go tool pprof -top -lines two.pb.gz > lines 2> pprof.err || fail_ "go tool pprof -lines"
	awk '/flat%/ { getline; print; exit }' lines | grep -qE " fill $T/pkg/deep\.py:4\$" ||
		fail_ "pprof -lines: $(sed -n '/flat%/,+2p' lines)"
	grep -q '<unknown>' top && fail_ "pprof shows a Python function as <unknown>: $(grep -m1 '<unknown>' top)"
fi

# zlib and json: the C code's site is named with the Python function that called it.
cat > z.py <<'EOF'
import json
import zlib

keep = []


def make_compressor():
    return zlib.compressobj(9)


def encode():
    return json.dumps({"k%d" % i: [i] * 50 for i in range(400)})


def main():
    keep.append(make_compressor())
    keep.append(encode())


main()
EOF
mp run -q -o z.bin "$PY" z.py
expect_rc 0 "run python3 z.py"
mp stats -n 50 z.bin
expect_rc 0 "stats"
grep -qE "^	- deflateInit2_ called from make_compressor:$T/z\.py:8 -> [0-9.]+ KiB\$" out ||
	fail_ "stats: no deflateInit2_ called from make_compressor: $(grep -m2 deflate out)"
grep -qE "^	- _json\.cpython-3[0-9]+-[^ ]*\.so\+0x[0-9a-f]+ called from JSONEncoder\.iterencode:[^ ]*/json/encoder\.py:[0-9]+ -> " out ||
	fail_ "stats: no _json frame called from JSONEncoder.iterencode: $(grep -m2 _json out)"
"$MEMPROF" stats -n 50 --json -o z.json z.bin > /dev/null || fail_ "stats --json"
python3 - "$T/z.py" <<'PY' || fail_ "stats --json: $(head -c 800 z.json)"
import json, sys
rows = json.load(open("z.json"))["top_allocations_by_size"]
z = [r for r in rows if r["function"] == "deflateInit2_"]
assert z and z[0]["caller"] == {"function": "make_compressor", "file": sys.argv[1], "line": 8}, z
assert z[0]["module"].endswith("/libz.so.1"), z
PY
mp table -o z.html z.bin
expect_rc 0 "table"
facts z.html
fact "row - malloc deflateInit2_ called from make_compressor at $T/z\.py:8 bytes=[0-9]+ count=[0-9]+" z.html

# The flame graph folds in the page, as transform folded does, and shows
# every frame, as transform folded --all-frames does, at a click.
mp flamegraph --leaks -o two.html two.bin
expect_rc 0 "flamegraph --leaks"
facts two.html
fact 'fold group=\[python interpreter\] all_frames=0' two.html
mp transform --leaks --all-frames -o all.folded folded two.bin
expect_rc 0 "transform folded --all-frames"
check check_flamegraph_frames.py basic two.html two.folded all.folded
exit 0
