#!/bin/bash
# lib/process/inject, ptrace method: 100 injections in a row into a target whose threads
# hammer malloc/free; dlopen returns the same handle each time, so entry counts calls
# 1..100 in one copy of the library, and the target ends normally.
. "${MEMPROF_SRCDIR:-.}/tests/e2e/init.sh"
. "$MEMPROF_SRCDIR/tests/e2e/lib-inject.sh"

start_target rs
inject -n 100 "$TPID" "$LIB" "$ENTRY" "write:$T/w/out.txt"
expect_rc 0 "100 injections"
[ "$(grep -c '^result 42$' out)" -eq 100 ] || fail_ "not 100 results of 42: $(sort out | uniq -c)"
for i in $(seq 100); do echo "call=$i arg=write:$T/w/out.txt pid=$TPID"; done >want.txt
match_diff want.txt w/out.txt
[ "$(grep -c "$LIB\$" /proc/"$TPID"/maps)" -ge 1 ] || fail_ "the library is not mapped"
[ "$(awk -v lib="$LIB" '$6 == lib && $3 == "00000000"' /proc/"$TPID"/maps | wc -l)" -eq 1 ] ||
	fail_ "the library is mapped more than once"
expect_alive "$TPID"
finish_target
exit 0
