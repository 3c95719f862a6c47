#!/bin/bash
# The README's three integration shapes of the Python package, each a file in
# examples/python/ that the README shows verbatim, run here from the build tree: a task
# decorator whose flame graph of the leaks is embedded in a page, components profiled
# by configuration (with trace_python_allocators), and a job's own profiling endpoints
# driven with curl (409 while recording).
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-python.sh"
export PYTHONPATH=$MEMPROF_BUILDDIR/python
unset MEMPROF_LIBDIR LD_PRELOAD
EX=$MEMPROF_SRCDIR/examples/python
command -v curl > /dev/null || skip_ "curl is not installed"

for f in task components endpoints; do
	python3 -c 'import sys; sys.exit(open(sys.argv[1]).read() not in open(sys.argv[2]).read())' \
		"$EX/$f.py" "$MEMPROF_SRCDIR/README.md" || fail_ "README.md does not show examples/python/$f.py as it is"
done

for py in $pythons; do
	rm -rf memprof_bin ./*.bin ./*.html
	# The task decorator.
	run "$py" "$EX/task.py"
	expect_rc 0 "$py task.py"
	read -r keys capture report size < out
	[ "$keys" = 10 ] || fail_ "$py task.py: the task's value: $(cat out)"
	case "$capture" in "$T/memprof_bin/build_index."*.bin) ;; *) fail_ "$py task.py: capture '$capture'" ;; esac
	[ -f "$capture" ] && grep -q '"mode":"leaks"' "$report" || fail_ "$py task.py: no flame graph of the leaks at '$report'"
	[ "$size" -eq "$(wc -c < "$report")" ] || fail_ "$py task.py: the page holds $size bytes of the report, not $(wc -c < "$report")"
	[ ! -s err ] || fail_ "$py task.py: stderr: $(cat err)"

	# Components by configuration: only those named are profiled.
	PROFILE=cache run "$py" "$EX/components.py"
	expect_rc 0 "$py components.py"
	[ ! -e parser.bin ] || fail_ "$py components.py: parser was profiled without being named"
	read -r name bytes < out
	[ "$name" = cache ] && [ "$bytes" -ge 2000000 ] || fail_ "$py components.py: $(cat out)"
	PROFILE=parser,cache run "$py" "$EX/components.py"
	expect_rc 0 "$py components.py, both"
	[ "$(cut -d' ' -f1 out | tr '\n' ' ')" = "parser cache " ] || fail_ "$py components.py: $(cat out)"
	# trace_python_allocators: the parser's 10000 small lists are allocations of their own.
	n=$("$MEMPROF" parse parser.bin | grep -c '^ALLOC')
	[ "$n" -ge 10000 ] || fail_ "$py components.py: parser.bin has $n allocations, expected 10000 or more"

	# The job's endpoints.
	"$py" "$EX/endpoints.py" 0 > job.out 2> job.err &
	job=$!
	wait_until 60 grep -q '^port ' job.out
	port=$(sed -n 's/^port //p' job.out)
	[ -n "$port" ] || fail_ "$py endpoints.py did not start: $(cat job.err)"
	url=http://127.0.0.1:$port
	code() { curl -s -o body -w '%{http_code}' "$@"; }
	[ "$(code "$url/stats")" = 404 ] || fail_ "$py endpoints: /stats before any capture"
	[ "$(code -X POST "$url/start")" = 200 ] || fail_ "$py endpoints: POST /start: $(cat body)"
	[ "$(code -X POST "$url/start")" = 409 ] || fail_ "$py endpoints: a second POST /start"
	[ "$(code "$url/report")" = 409 ] && grep -q 'POST /stop first' body || fail_ "$py endpoints: /report while recording"
	sleep 0.3
	[ "$(code -X POST "$url/stop")" = 200 ] || fail_ "$py endpoints: POST /stop: $(cat body)"
	[ "$(code "$url/report")" = 200 ] || fail_ "$py endpoints: /report"
	cmp -s body job.bin || fail_ "$py endpoints: /report is not the capture"
	"$MEMPROF" parse body | grep -q '^TRAILER .* end=detach' || fail_ "$py endpoints: the capture is not complete"
	[ "$(code "$url/flamegraph")" = 200 ] && grep -q '"mode":"leaks"' body || fail_ "$py endpoints: /flamegraph"
	[ "$(code "$url/stats")" = 200 ] && grep -q '^Total allocations since attach:' body || fail_ "$py endpoints: /stats: $(head -5 body)"
	# The job's allocations are in it: 10000-byte bytearrays, from its job() function.
	"$MEMPROF" stats --json -o - job.bin 2> /dev/null | grep -q '"function": "job"' || fail_ "$py endpoints: the job's allocations are not in the capture"
	kill "$job"
	wait "$job" 2> /dev/null
done
exit 0
