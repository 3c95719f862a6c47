#!/bin/bash
# transform on real programs: every format sums to the figures of memprof
# stats (peak and leaks) on tests/workloads/allocs; the 4 threads of
# tests/workloads/threads are apart with --split-threads, 250 blocks of 64
# bytes each at worker_alloc; C++ names reach speedscope intact.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"

check_speedscope() { python3 "$MEMPROF_SRCDIR/tests/e2e/speedscope_check.py" "$@"; }
stat() {
	"$MEMPROF" stats --json -f -o stats.json "$1" >/dev/null || fail_ "stats --json $1"
	python3 -c 'import json, sys; d = json.load(open("stats.json")); print(" ".join(str(d[k]) for k in sys.argv[1:]))' "${@:2}"
}
# totals FORMAT FILE: "BYTES COUNT" of an export (count: - for folded, which has none).
totals() {
	case $1 in
	folded) awk '{ n += $NF } END { print n + 0, "-" }' "$2" ;;
	csv) awk -F, 'NR > 1 { b += $3; n += $2 } END { print b + 0, n + 0 }' "$2" ;;
	speedscope) check_speedscope "$2" | awk '$2 == "bytes" { b += $3 } $2 == "none" { n += $3 } END { print b + 0, n + 0 }' ;;
	esac
}

"$MEMPROF" run -q -o allocs.mprof "$WORKLOADS/allocs" > /dev/null || framework_failure_ "run allocs"
for view in peak leaks; do
	opt=
	[ $view = leaks ] && opt=--leaks
	if [ $view = peak ]; then want=$(stat allocs.mprof peak_memory_bytes peak_memory_blocks)
	else want=$(stat allocs.mprof leaked_bytes leaked_blocks); fi
	for f in folded csv speedscope; do
		mp transform $opt -o "allocs-$view.$f" $f allocs.mprof
		expect_rc 0 "transform $opt $f allocs"
		got=$(totals $f "allocs-$view.$f")
		[ "${got% -}" = "${want% *}" ] || [ "$got" = "$want" ] ||
			fail_ "$f $view: '$got', memprof stats says '$want'"
	done
done
# The leaks of allocs.c, by function: make_kept 10045 + main 1000 + copy 17.
grep -q ';main;make_kept 10045$' allocs-leaks.folded || fail_ "folded leaks: no make_kept 10045"
grep -qE ';main;copy;[^;]*strdup 17$' allocs-leaks.folded || fail_ "folded leaks: no copy;strdup 17"
grep -q '^CALLOC,1,1000,0,merged thread,main;' allocs-leaks.csv || fail_ "csv leaks: no calloc of main"

# 4 threads.
"$MEMPROF" run -q -o threads.mprof "$WORKLOADS/threads" > /dev/null || framework_failure_ "run threads"
mp transform --split-threads -o threads.folded folded threads.mprof
expect_rc 0 "transform --split-threads folded"
for i in 0 1 2 3; do
	grep -qE "^[0-9]+ \(worker-$i\);(.*;)?worker;worker_alloc 16000$" threads.folded ||
		fail_ "folded: worker-$i has not 16000 B at worker_alloc"
done
[ "$(totals folded threads.folded)" = "$(stat threads.mprof peak_memory_bytes) -" ] ||
	fail_ "folded --split-threads total: $(totals folded threads.folded)"
mp transform --split-threads -o threads.csv csv threads.mprof
[ "$(grep -c '^MALLOC,250,16000,[0-9]*,[0-9]* (worker-[0-3]),worker_alloc;' threads.csv)" = 4 ] ||
	fail_ "csv: not 4 rows of 250 blocks at worker_alloc"
mp transform --split-threads -o threads.speedscope speedscope threads.mprof
run check_speedscope threads.speedscope
expect_rc 0 "speedscope --split-threads check"
[ "$(grep -c '^sampled bytes 16000 Memory: [0-9]* (worker-[0-3])$' out)" = 4 ] ||
	fail_ "speedscope: not one memory profile of 16000 B per worker: $(cat out)"
[ "$(grep -c '^sampled none 250 Allocations: [0-9]* (worker-[0-3])$' out)" = 4 ] ||
	fail_ "speedscope: not one allocations profile of 250 per worker"
[ "$(grep -c '^sampled ' out)" = 10 ] || fail_ "speedscope: not 2 profiles for each of 5 threads"

# C++: demangled names with templates, spaces and parentheses, kept whole.
"$MEMPROF" run -q -o cxx.mprof "$WORKLOADS/cxx" > /dev/null || framework_failure_ "run cxx"
mp transform --leaks -o cxx.speedscope speedscope cxx.mprof
run check_speedscope cxx.speedscope
expect_rc 0 "speedscope of cxx"
grep -q '"name":"ns::Widget<int>::grow()"' cxx.speedscope || fail_ "no ns::Widget<int>::grow() frame"
mp transform --leaks -o - folded cxx.mprof
grep -qE ';ns::Widget<int>::grow\(\);operator new(\[\])?\(unsigned long\) 400$' out ||
	fail_ "folded: no ns::Widget<int>::grow();operator new(unsigned long) 400"
exit 0
