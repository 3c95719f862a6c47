#!/bin/bash
# C++ as a user reads it (tests/workloads/maps.cc: fill() called from two
# lines of main, filling a std::map): the tree tells the two calls apart by
# their lines, the top location is the user's fill(), not std::allocator's
# plumbing, no line is wider than the terminal (COLUMNS, 160 in a pipe),
# templates are shortened unless --full-names, --raw-leaf gives the raw leaf
# back, and pprof names the program and its function.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"

src=$WORKLOAD_SRC/maps.cc
fill_line=$(site fill "$src")
first=$(grep -n 'CALL:first' "$src" | cut -d: -f1)
second=$(grep -n 'CALL:second' "$src" | cut -d: -f1)
mp run -q -o maps.bin "$WORKLOADS/maps"
expect_rc 0 "run maps"

# widest FILE: the widest line, in characters (box drawing and "…" count one).
widest() { python3 -c 'import sys; print(max((len(l.rstrip("\n")) for l in open(sys.argv[1], encoding="utf-8")), default=0))' "$1"; }

# The tree: two siblings, told apart by the line of each call.
mp tree --leaks maps.bin
expect_rc 0 "tree --leaks"
expect_no_err "tree --leaks"
expect_count 1 "── [0-9.]+ KiB \([0-9.]+ %\) main:$first → fill\(int, char const\*\)  ([^ ]*/)?maps\.cc:$fill_line\$" out
expect_count 1 "── [0-9.]+ KiB \([0-9.]+ %\) main:$second → fill\(int, char const\*\)  ([^ ]*/)?maps\.cc:$fill_line\$" out
# Below fill, the vector's growth: its plumbing stays in the tree, shortened.
expect_count 2 '── [0-9.]+ KiB \([0-9.]+ %\) std::vector<…>::push_back\(long&&\) → ' out
[ "$(widest out)" -le 160 ] || fail_ "tree: a line of $(widest out) characters in a pipe"
COLUMNS=100 "$MEMPROF" tree --leaks maps.bin > narrow || fail_ "tree with COLUMNS=100"
[ "$(widest narrow)" -le 100 ] || fail_ "tree: a line of $(widest narrow) characters with COLUMNS=100"
grep -qE "main:$first → fill\(int, char const\*\)" narrow || fail_ "COLUMNS=100 cut the call's line: $(grep -m1 "main:$first" narrow)"
# --whole-paths: no chain folded into "… N more …".
mp tree --leaks --whole-paths --full-names maps.bin
expect_rc 0 "tree --whole-paths"
expect_not_out "more …"
expect_out "std::vector<long, std::allocator<long> >::push_back(long&&) → "

# stats: the allocation site is the user's fill(), not the allocator's.
mp stats maps.bin
expect_rc 0 "stats"
top=$(grep -A1 'largest allocating locations (by size)' out | tail -1)
case "$top" in
*"- fill(int, char const*):"*"maps.cc:$fill_line -> "*) ;;
*) fail_ "the top location by size is '$top', expected fill() at maps.cc:$fill_line" ;;
esac
[ "$(widest out)" -le 160 ] || fail_ "stats: a line of $(widest out) characters"
"$MEMPROF" stats --json -o s.json maps.bin > /dev/null || fail_ "stats --json"
python3 - "$fill_line" <<'PY' || fail_ "stats --json: $(head -c 600 s.json)"
import json, sys
top = json.load(open("s.json"))["top_allocations_by_size"][0]
assert top["function"] == "fill(int, char const*)" and top["line"] == int(sys.argv[1]), top
PY
# --raw-leaf: the innermost frame as recorded, libstdc++'s operator new.
mp stats --raw-leaf maps.bin
expect_rc 0 "stats --raw-leaf"
grep -A1 'largest allocating locations (by size)' out | tail -1 | grep -qF -- "- operator new(unsigned long) -> " ||
	fail_ "--raw-leaf: $(grep -A1 'largest allocating locations (by size)' out | tail -1)"

# summary: fill() owns what it allocated; names shortened, lines fitted.
mp summary -r 40 --leaks maps.bin
expect_rc 0 "summary"
grep -qE '^│ fill\(int, char const\*\) at [^ ]*maps\.cc +│ +[0-9.]+ KiB │ +[0-9.]+ % │ +[0-9.]+ KiB │' out ||
	fail_ "summary: fill's row: $(grep -m1 'fill(' out)"
grep -q 'std::map<…>::operator\[\]' out || fail_ "summary: no shortened std::map<…>::operator[]"
[ "$(widest out)" -le 160 ] || fail_ "summary: a line of $(widest out) characters"
COLUMNS=120 "$MEMPROF" summary -r 40 --leaks maps.bin > narrow || fail_ "summary with COLUMNS=120"
[ "$(widest narrow)" -le 120 ] || fail_ "summary: a line of $(widest narrow) characters with COLUMNS=120"
# --full-names: whole names, nothing cut.
mp summary -r 40 --leaks --full-names maps.bin
expect_rc 0 "summary --full-names"
expect_out "std::map<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >, std::vector<long"
[ "$(widest out)" -gt 160 ] || fail_ "--full-names: nothing wider than 160 columns"
# The counts are the same whatever the view.
[ "$(grep -c '' out)" -eq "$(COLUMNS=90 "$MEMPROF" summary -r 40 --leaks maps.bin | grep -c '')" ] ||
	fail_ "summary: --full-names changed the rows"

# pprof: the program is the first mapping (pprof's "File:"), and the flat
# row is fill().
if command -v go > /dev/null && go tool pprof -h > /dev/null 2>&1; then
	export PPROF_TMPDIR=$T HOME=$T GOCACHE=$T/gocache
	mp transform --leaks -o maps.pb.gz pprof maps.bin
	expect_rc 0 "transform pprof"
	go tool pprof -top maps.pb.gz > top 2> pprof.err || fail_ "go tool pprof: $(cat pprof.err)"
	grep -qx 'File: maps' top || fail_ "pprof's File: line: $(head -3 top)"
	flat=$(awk '/flat%/ { getline; $1 = $2 = $3 = $4 = $5 = ""; sub(/^ +/, ""); print; exit }' top)
	[ "$flat" = "fill(int, char const*)" ] || fail_ "pprof's first flat row is '$flat': $(sed -n '/flat%/,+3p' top)"
fi
exit 0
