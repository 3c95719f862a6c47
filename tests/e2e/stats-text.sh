#!/bin/bash
# stats on a hand-built capture: every figure, exactly (see tests/data/README).
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-reports.sh"

app_capture
mp stats app.mprof
expect_rc 0 "stats"
expect_no_err "stats"
cat > expected <<'OUT'
Capture: app.mprof
Command line: /usr/bin/app --size '3 MB'
PID: 5000
Start time: 2026-11-22T08:00:00.000000Z
Duration: 35.000 ms
Exit status: 0

Total allocations:
	8

Total memory allocated:
	4.004 MiB

Total frees:
	5

Unknown frees:
	1 (of memory allocated before tracking started, or not seen)

Peak memory usage:
	4.004 MiB in 7 blocks, at 10.000 ms

Leaked memory (still allocated at the end):
	1.500 MiB in 4 blocks

Histogram of allocation size:
	min: 64 B
	--------------------------------------------
	      < 128 B : 4 ▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇▇
	            … : 0
	  < 8.000 KiB : 1 ▇▇▇▇▇▇▇
	            … : 0
	  < 2.000 MiB : 2 ▇▇▇▇▇▇▇▇▇▇▇▇▇
	  < 4.000 MiB : 1 ▇▇▇▇▇▇▇
	--------------------------------------------
	max: 2.000 MiB

Allocator type distribution:
	 malloc: 6
	 calloc: 1
	 mmap: 1

Allocations by thread:
	- 5000 (app): 6 allocations, 1.004 MiB, 3 frees
	- 5001 (worker): 2 allocations, 3.000 MiB, 2 frees

Top 5 largest allocating locations (by size):
	- worker_main:/src/app.c:70 -> 2.000 MiB
	- build_index:/src/app.c:30 -> 1.000 MiB
	- libparse.so.1+0x2000 -> 1.000 MiB
	- load_config:/src/app.c:20 -> 4.062 KiB
	- parse_token:/src/parse.c:12 -> 300 B

Top 5 largest allocating locations (by number of allocations):
	- parse_token:/src/parse.c:12 -> 3
	- load_config:/src/app.c:20 -> 2
	- worker_main:/src/app.c:70 -> 1
	- build_index:/src/app.c:30 -> 1
	- libparse.so.1+0x2000 -> 1

Top 5 allocating modules (by size):
	- /usr/bin/app: 3.004 MiB total | 4 allocations
	- /usr/lib/libparse.so.1: 1.000 MiB total | 4 allocations

Top 5 allocating modules (by number of allocations):
	- /usr/bin/app: 3.004 MiB total | 4 allocations
	- /usr/lib/libparse.so.1: 1.000 MiB total | 4 allocations
OUT
match_diff expected out

# -n shortens every top list.
mp stats -n 2 app.mprof
expect_rc 0 "stats -n 2"
[ "$(grep -c '^	- .* -> ' out)" -eq 4 ] || fail_ "-n 2: not two entries per location list"
expect_out "Top 2 largest allocating locations (by size):"
expect_not_out "load_config:/src/app.c:20 -> 4.062 KiB"

# --no-mmap: the mapping and its munmap are left out of everything.
mp stats --no-mmap app.mprof
expect_rc 0 "stats --no-mmap"
expect_out "Mappings: left out (--no-mmap), 2 events ignored"
grep -A1 '^Total allocations:' out | grep -qx '	7' || fail_ "--no-mmap: not 7 allocations"
grep -A1 '^Total frees:' out | grep -qx '	4' || fail_ "--no-mmap: not 4 frees"
grep -A1 '^Unknown frees:' out | grep -q '^	1 ' || fail_ "--no-mmap: the munmap counted as unknown"
expect_out "	3.004 MiB in 6 blocks, at 10.000 ms"
expect_out "	1.000 MiB in 3 blocks"
expect_not_out "mmap: 1"
expect_not_out "libparse.so.1+0x2000"

# Section titles are bold on a terminal only, and never with NO_COLOR.
grep -q $'\033' out && fail_ "colours in a pipe"
if command -v script >/dev/null; then
	env -u NO_COLOR TERM=xterm script -qec "exec '$MEMPROF' stats app.mprof" /dev/null > raw 2>&1
	grep -qF $'\033[1mTotal allocations:\033[0m' raw || fail_ "no bold title on a terminal"
	env NO_COLOR=1 TERM=xterm script -qec "exec '$MEMPROF' stats app.mprof" /dev/null > raw 2>&1
	grep -q $'\033' raw && fail_ "colours despite NO_COLOR"
	tr -d '\r' < raw | diff -u expected - >&2 || fail_ "stats on a terminal differs"
fi

# Standard input works like a file.
mp stats - < app.mprof
expect_rc 0 "stats -"
expect_out "Capture: -"
expect_out "	4.004 MiB in 7 blocks, at 10.000 ms"
exit 0
