#!/bin/bash
# Programs we did not write run to the end under memprof, with their own output and status.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"

checked=0
real() { # name, expected status, minimum allocations, program...
	local name=$1 want=$2 min=$3; shift 3
	keep -n plain "$@"
	[ "$rc" -eq "$want" ] || framework_failure_ "$name: exits $rc without memprof"
	keep -n tracked "$MEMPROF" run -q -f -o r.bin "$@"
	expect_rc "$want" "$name: memprof run"
	cmp -s plain.out tracked.out || fail_ "$name: stdout differs under memprof"
	cmp -s plain.err tracked.err || fail_ "$name: stderr differs under memprof: $(head -3 tracked.err)"
	n=$("$MEMPROF" parse r.bin | grep -c '^ALLOC')
	[ "$n" -ge "$min" ] || fail_ "$name: only $n allocations recorded, expected $min or more"
	t=$("$MEMPROF" parse r.bin | grep '^TRAILER')
	[ "$(field exit_code "$t")" = "$want" ] || fail_ "$name: trailer $t"
	checked=$((checked + 1))
}
if [ -x /usr/bin/python3 ]; then
	# pymalloc serves small objects from its own arenas: malloc sees arenas and big blocks.
	real python3 0 1000 /usr/bin/python3 -c 'd = [{str(i): list(range(i % 50))} for i in range(20000)]; del d; print(sum(range(100)))'
	real "python3 failing" 3 500 /usr/bin/python3 -c 'import sys; print("bye", file=sys.stderr); sys.exit(3)'
fi
if command -v sqlite3 > /dev/null; then
	{ echo 'create table t(k integer primary key, v text);'
	  for i in $(seq 1 300); do echo "insert into t(v) values ('row $i');"; done
	  echo 'select count(*), sum(length(v)) from t;'; } > s.sql
	real sqlite3 0 300 sqlite3 :memory: ".read s.sql"
fi
head -c 400000 /dev/urandom | base64 > data.txt
# gzip works in static buffers: it allocates nothing, and memprof must say so.
real gzip 0 0 gzip -9 -c data.txt
if command -v xz > /dev/null; then
	real xz 0 5 xz -6 -c data.txt
fi
real "sort (fails)" 2 1 sort /nonexistent-file
[ "$checked" -gt 2 ] || skip_ "not enough of python3, sqlite3, xz installed"
exit 0
