#!/bin/bash
# Python threads carry their threading.Thread names (w0..w3), read by the
# tracker from the interpreter's objects (no Python code run in the
# program): in stats, in each thread's tree of a --split-threads flame
# graph, and in the page's thread selector; the main thread keeps its OS
# name. On each CPython 3.11 to 3.13 there is (lib-python.sh).
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-html.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-python.sh"

# Worker i keeps 5 bytearrays of 100000 + 1000 i bytes (each a malloc of one
# byte more); w3 gets its name after it was made, before it starts.
cat > workers.py <<'EOF2'
import threading

kept = []


def work(i):
    for _ in range(5):
        kept.append(bytearray(100000 + 1000 * i))


threads = [threading.Thread(target=work, args=(i,), name="w%d" % i) for i in range(3)]
threads.append(threading.Thread(target=work, args=(3,), name="not-yet"))
threads[3].name = "w3"
for t in threads:
    t.start()
for t in threads:
    t.join()
EOF2

for py in $pythons; do
	v=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	mp run -q -o "t$v.bin" "$py" workers.py
	expect_rc 0 "run $py"
	mp stats "t$v.bin"
	expect_rc 0 "stats ($v)"
	for i in 0 1 2 3; do
		expect_count 1 "^	- [0-9]+ \\(w$i\\): " out
	done
	expect_count 0 'not-yet' out
	grep -qE "^	- [0-9]+ \\(python3[.0-9]*\\): " out || fail_ "$v: the main thread is not named python3"

	mp flamegraph --leaks --split-threads -o "t$v.html" "t$v.bin"
	expect_rc 0 "flamegraph --split-threads ($v)"
	facts "t$v.html"
	for i in 0 1 2 3; do
		fact "node w$i \\(tid [0-9]+\\);(.*;)?work total=$((5 * (100001 + 1000 * i)))/5 self=0/0" "t$v.html"
	done
	# (and work in no other thread)
	expect_count 4 "^node [^;]*;(.*;)?work total=" "t$v.html.facts"
done
# Named at their first Python frames, not at the next tick: with no tick in the whole run
# (the drain's first sample a minute away), as when threads start within the first
# interval (their names used to wait for a tick that a short run never got).
for py in $pythons; do
	v=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	mp run -q --memory-interval-ms 60000 -o "n$v.bin" "$py" workers.py
	expect_rc 0 "run $py, no tick"
	mp stats "n$v.bin"
	expect_rc 0 "stats ($v, no tick)"
	for i in 0 1 2 3; do
		expect_count 1 "^	- [0-9]+ \\(w$i\\): " out
	done
done
# The page's thread selector names them.
for py in $pythons; do
	v=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	check check_capture.py flamegraph --shot "threads-$v" --thread-names w0,w1,w2,w3 "t$v.html"
done
exit 0
