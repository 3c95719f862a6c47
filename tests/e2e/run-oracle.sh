#!/bin/bash
# Oracles: on the same program, memprof's allocation count, bytes and leaks equal
# valgrind's and heaptrack's.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
command -v python3 > /dev/null || skip_ "python3 is not installed"

mp run -q -o o.bin "$WORKLOADS/oracle" 20000
expect_rc 0 "run oracle"
"$MEMPROF" stats --json -o o.json o.bin > /dev/null || fail_ "stats --json"
read -r allocs bytes leaked blocks < <(python3 -c '
import json, sys
d = json.load(open("o.json"))
print(d["total_num_allocations"], d["total_bytes_allocated"], d["leaked_bytes"], d["leaked_blocks"])')
frees=$(field frees "$("$MEMPROF" parse o.bin | grep ^TRAILER)")
[ "$allocs" -gt 10000 ] || fail_ "only $allocs allocations"
checked=0

if command -v valgrind > /dev/null; then
	keep -o vg.out -e vg.txt valgrind "$WORKLOADS/oracle" 20000
	expect_rc 0 "valgrind"
	usage=$(grep 'total heap usage' vg.txt)
	use=$(grep 'in use at exit' vg.txt)
	[ -n "$usage" ] && [ -n "$use" ] || fail_ "no heap summary from valgrind: $(cat vg.txt)"
	# "total heap usage: A allocs, F frees, B bytes allocated" (realloc is one of each)
	va=$(sed 's/.*usage: \([0-9,]*\) allocs, \([0-9,]*\) frees, \([0-9,]*\) bytes.*/\1 \2 \3/; s/,//g' <<<"$usage")
	vu=$(sed 's/.*exit: \([0-9,]*\) bytes in \([0-9,]*\) blocks.*/\1 \2/; s/,//g' <<<"$use")
	[ "$va" = "$allocs $frees $bytes" ] || fail_ "valgrind: $va (allocs frees bytes); memprof: $allocs $frees $bytes"
	[ "$vu" = "$leaked $blocks" ] || fail_ "valgrind in use at exit: $vu; memprof leaked: $leaked $blocks"
	checked=$((checked + 1))
fi

if command -v heaptrack > /dev/null && command -v zstd > /dev/null; then
	heaptrack -o "$T/heaptrack-capture" "$WORKLOADS/oracle" 20000 > ht.log 2>&1 ||
		fail_ "heaptrack failed: $(tail -3 ht.log)"
	f=$(ls "$T"/heaptrack-capture.*z* 2>/dev/null | head -1)
	[ -f "$f" ] || fail_ "heaptrack wrote no capture"
	# Exact totals from heaptrack's stream; allocations made by the C++ runtime
	# that heaptrack's own library brings in (through _dl_init) are left out.
	ht=$(python3 "$MEMPROF_SRCDIR/tests/e2e/heaptrack_totals.py" "$f") || fail_ "reading heaptrack's capture"
	[ "$ht" = "$allocs $bytes $leaked $blocks" ] ||
		fail_ "heaptrack: $ht (allocations bytes leaked blocks); memprof: $allocs $bytes $leaked $blocks"
	checked=$((checked + 1))
fi
[ "$checked" -gt 0 ] || skip_ "neither valgrind nor heaptrack is installed"
exit 0
