#!/bin/bash
# diff: two versions of tests/workloads/versions.c, before (3 blocks leaked
# by leak_bug) and after the fix (none), differ in exactly that site, by
# exactly 3072 bytes and 3 blocks in the peak, the leaks and the allocations;
# the other way round it is growth; a capture against itself shows nothing.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"

"$MEMPROF" run -q -o before.mprof "$WORKLOADS/versions" 3 > /dev/null || framework_failure_ "run versions 3"
"$MEMPROF" run -q -o after.mprof "$WORKLOADS/versions" 0 > /dev/null || framework_failure_ "run versions 0"
# rows: the table's body with the source directory left out (a build out of
# the source tree, as distcheck's, records a relative path) and spaces squeezed.
rows() { sed -n 's/^│ \(.*\) │$/\1/p' out | sed 's|at [^ ]*/versions\.c|at versions.c|' | tr -s ' '; }

mp diff before.mprof after.mprof
expect_rc 0 "diff before after"
expect_no_err "diff before after"
cat > expected <<OUT
Base: before.mprof ($WORKLOADS/versions 3)
New:  after.mprof ($WORKLOADS/versions 0)
Peak memory: 17.648 KiB in 18 allocations -> 14.648 KiB in 15 allocations (-3.000 KiB, -3)
Leaked memory: 12.766 KiB in 8 allocations -> 9.766 KiB in 5 allocations (-3.000 KiB, -3)
All allocations: 17.648 KiB in 18 allocations -> 14.648 KiB in 15 allocations (-3.000 KiB, -3)
By allocation site (Δ: new - base; Peak, Leaked, Allocations: new):
OUT
head -6 out > head
match_diff expected head
grep -q '^┃ Location  *┃  *Δ Peak ┃  *Peak ┃  *Δ Leaked ┃  *Leaked ┃ Δ Allocations ┃ Allocations ┃$' out ||
	fail_ "table header: $(sed -n 8p out)"
[ "$(rows)" = "leak_bug at versions.c │ -3.000 KiB │ 0 B │ -3.000 KiB │ 0 B │ -3 │ 0" ] ||
	fail_ "rows: $(rows)"

# The other way round: growth, with a plus.
mp diff after.mprof before.mprof
expect_rc 0 "diff after before"
[ "$(rows)" = "leak_bug at versions.c │ +3.000 KiB │ 3.000 KiB │ +3.000 KiB │ 3.000 KiB │ +3 │ 3" ] ||
	fail_ "reversed rows: $(rows)"
expect_out "Peak memory: 14.648 KiB in 15 allocations -> 17.648 KiB in 18 allocations (+3.000 KiB, +3)"

# A capture against itself: no site, zero changes.
mp diff before.mprof before.mprof
expect_rc 0 "diff of a capture with itself"
expect_out "No allocation site changed its peak, leaked memory or allocations."
expect_out "Peak memory: 17.648 KiB in 18 allocations -> 17.648 KiB in 18 allocations (0 B, 0)"
[ -z "$(rows)" ] || fail_ "self diff rows: $(rows)"

# JSON: every figure, to a file next to NEW or to standard output.
mp diff --json before.mprof after.mprof
expect_rc 0 "diff --json"
[ "$(cat out)" = "Wrote memprof-diff-after.json" ] || fail_ "--json: $(cat out)"
python3 - memprof-diff-after.json > out <<'PY' || fail_ "--json: unreadable"
import json, sys
d = json.load(open(sys.argv[1]))
print(d["captures"]["base"]["path"], d["captures"]["new"]["path"])
t = d["totals"]
print("totals", [(k, t["base"][k]["bytes"], t["new"][k]["bytes"], t["change"][k]["bytes"], t["change"][k]["count"])
                 for k in ("peak", "leaked", "allocated")])
for r in d["locations"]:
    print(r["function"], r["file"].endswith("/versions.c"), [(k, r["base"][k], r["new"][k], r["change"][k])
                                                   for k in ("peak", "leaked", "allocated")])
PY
cat > expected <<'OUT'
before.mprof after.mprof
totals [('peak', 18072, 15000, -3072, -3), ('leaked', 13072, 10000, -3072, -3), ('allocated', 18072, 15000, -3072, -3)]
leak_bug True [('peak', {'bytes': 3072, 'count': 3}, {'bytes': 0, 'count': 0}, {'bytes': -3072, 'count': -3}), ('leaked', {'bytes': 3072, 'count': 3}, {'bytes': 0, 'count': 0}, {'bytes': -3072, 'count': -3}), ('allocated', {'bytes': 3072, 'count': 3}, {'bytes': 0, 'count': 0}, {'bytes': -3072, 'count': -3})]
OUT
match_diff expected out
mp diff --json -o - after.mprof after.mprof
expect_rc 0 "diff --json -o -"
python3 -c 'import json, sys; d = json.load(sys.stdin); sys.exit(len(d["locations"]))' < out ||
	fail_ "self diff --json has locations"

# Sorted by the largest absolute change: app.txt against a capture where
# build_index grew by 1 MiB and main's calloc disappeared.
. "${MEMPROF_SRCDIR}/tests/e2e/lib-reports.sh"
app_capture
sed -e 's/size=1048576 stack=3/size=2097152 stack=3/' -e '/kind=calloc/d' -e '/addr=0x4000$/d' \
	"$TESTDATA/app.txt" > changed.txt
mkcap changed.mprof changed.txt
mp diff app.mprof changed.mprof
expect_rc 0 "diff app changed"
[ "$(rows | cut -d' ' -f1 | tr '\n' ' ')" = "build_index load_config " ] || fail_ "sorted rows: $(rows)"
rows | grep -qx 'build_index at /src/app.c │ +1.000 MiB │ 2.000 MiB │ +1.000 MiB │ 2.000 MiB │ 0 │ 1' ||
	fail_ "build_index row: $(rows)"
rows | grep -qx 'load_config at /src/app.c │ 0 B │ 4.000 KiB │ 0 B │ 0 B │ -1 │ 1' ||
	fail_ "load_config row: $(rows)"
mp diff -r 1 app.mprof changed.mprof
[ "$(tail -1 out)" = "1 more location (-r 2 shows them all)" ] || fail_ "-r 1: $(tail -1 out)"
exit 0
