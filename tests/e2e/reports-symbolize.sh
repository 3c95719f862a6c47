#!/bin/bash
# Captures without symbols (memprof run --no-symbols, a hand-preloaded
# tracker) are symbolized at report time from their module records: every
# reporter names the same functions as for a symbolized capture; a missing
# file gets a warning and module+offset.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-html.sh"

mp run -q -o sym.bin "$WORKLOADS/allocs"
expect_rc 0 "run"
mp run -q --no-symbols -o raw.bin "$WORKLOADS/allocs"
expect_rc 0 "run --no-symbols"
"$MEMPROF" parse raw.bin > p || fail_ "parse"
grep -q '^HEADER .*flags=raw' p || fail_ "raw.bin is symbolized"
expect_count 0 '^SYMBOL ' p
MEMPROF_OUTPUT=$T/pre.bin LD_PRELOAD=$TRACKER_LIB "$WORKLOADS/allocs" > /dev/null || fail_ "preloaded allocs"

# The HTML reports: the same tree, the same rows.
for c in sym raw pre; do
	for r in "flamegraph --leaks" "flamegraph" "table --temporary-allocations"; do
		mp $r -f -o $c.html $c.bin
		expect_rc 0 "$r $c.bin"
		expect_no_err "$r $c.bin"
		facts $c.html
		grep -E '^(node|row|kinds) ' $c.html.facts > "$c.${r// /_}"
	done
done
for r in "flamegraph --leaks" "flamegraph" "table --temporary-allocations"; do
	for c in raw pre; do
		diff -u "sym.${r// /_}" "$c.${r// /_}" >&2 || fail_ "$r of $c.bin differs from the symbolized capture's"
	done
	grep -q 'make_kept\|churn' "raw.${r// /_}" || fail_ "$r: no function names"
	grep -q 'allocs+0x' "raw.${r// /_}" && fail_ "$r: module+offset left"
done

# The text reports.
for r in "summary -r 40" "tree" "stats"; do
	mp $r raw.bin
	expect_rc 0 "$r raw.bin"
	expect_no_err "$r raw.bin"
	for f in make_kept mapping; do
		expect_out "$f"
	done
	expect_not_out "allocs+0x"
	mv out raw.out
	mp $r sym.bin
	# The same lines naming functions (figures of time and pid differ between runs).
	diff -u <(grep -E 'make_kept|mapping|churn' out) <(grep -E 'make_kept|mapping|churn' raw.out) >&2 ||
		fail_ "$r: raw.bin differs from sym.bin"
done

# The binary gone: a warning naming it, module+offset instead.
cp "$WORKLOADS/allocs" gone
mp run -q --no-symbols -o gone.bin ./gone
expect_rc 0 "run --no-symbols ./gone"
rm gone
mp flamegraph gone.bin
expect_rc 0 "flamegraph without the binary"
expect_err "memprof: warning: capture has no symbols and '$T/gone' cannot be read here: showing module+offset"
expect_one_line_err
facts memprof-flamegraph-gone.html
fact 'node gone\+0x[0-9a-f]+;.*;gone\+0x[0-9a-f]+ total=10045/10 self=10045/10' memprof-flamegraph-gone.html
fact 'node gone\+0x[0-9a-f]+;__libc_start_main_impl;__libc_start_call_main.* total=23333/12 self=0/0' memprof-flamegraph-gone.html
mp tree gone.bin
expect_err "capture has no symbols and '$T/gone' cannot be read here: showing module+offset"
exit 0
