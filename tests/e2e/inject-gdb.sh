#!/bin/bash
# lib/process/inject-gdb, the gdb method: injection at an allocator's entry, ten times in
# a row, and its failures (missing library, crashing entry, entry that exits the process,
# no allocation at all, a gdb that cannot make calls here) explained from gdb's output, the
# target left running or its exit reported.
. "${MEMPROF_SRCDIR:-.}/tests/e2e/init.sh"
. "$MEMPROF_SRCDIR/tests/e2e/lib-inject.sh"
. "$MEMPROF_SRCDIR/tests/e2e/lib-gdb.sh"

start_target rs
if [ -n "$GDB_LIMIT" ]; then
	# gdb 13.1 on a CPU with AMX: one line that says so and what to do; the target runs on
	# as if nothing happened.
	inject -m gdb "$TPID" "$LIB" "$ENTRY" "write:$T/w/out.txt"
	expect_rc 1 "gdb that cannot make calls"
	expect_file err "inject-tool: $(gdb_limit_error "$TPID")"
	[ ! -e w/out.txt ] || fail_ "the entry ran: $(cat w/out.txt)"
	expect_alive "$TPID"
	finish_target
else
	inject -m gdb -n 10 "$TPID" "$LIB" "$ENTRY" "write:$T/w/out.txt"
	expect_rc 0 "10 gdb injections"
	[ "$(grep -c '^result 42$' out)" -eq 10 ] || fail_ "not 10 results of 42: $(cat out)"
	for i in $(seq 10); do echo "call=$i arg=write:$T/w/out.txt pid=$TPID"; done >want.txt
	match_diff want.txt w/out.txt
	expect_alive "$TPID"

	inject -m gdb "$TPID" "$T/none.so" "$ENTRY" x
	expect_rc 1 "gdb: missing library"
	expect_file err "inject-tool: cannot load '$T/none.so' into process $TPID: $T/none.so: cannot open shared object file: No such file or directory; check that the file exists in the process's file system and is a shared library for its machine"
	expect_alive "$TPID"

	inject -m gdb "$TPID" "$LIB" "$ENTRY" crash:
	expect_rc 1 "gdb: crashing entry"
	expect_file err "inject-tool: the call in process $TPID crashed; gdb abandoned it and restored the thread's registers"
	expect_alive "$TPID"

	inject -m gdb -v -t 4000 "$TPID" "$LIB" "$ENTRY" sleep:30
	expect_rc 1 "gdb: sleeping entry"
	expect_err "inject-tool: the call in process $TPID did not return within 4000 ms; gdb abandoned it and restored the thread's registers (gdb said: "
	expect_alive "$TPID"

	finish_target
fi

spawn stuck "$INJECT_TARGET" stuck
kpid=$HPID
inject -m gdb -t 3000 "$kpid" "$LIB" "$ENTRY" x
expect_rc 1 "gdb: target that never allocates"
expect_file err "inject-tool: cannot attach to $kpid: no safe point within 3000 ms (no thread entered malloc, calloc, realloc or free); retry while the program allocates, or use --method ptrace"
expect_alive "$kpid"
kill $kpid

[ -z "$GDB_LIMIT" ] ||
	skip_ "gdb cannot make calls here ($GDB_LIMIT): its refusal and the wait for a safe point were tested, not the calls"
start_target rs
inject -m gdb "$TPID" "$LIB" "$ENTRY" exit:5
expect_rc 1 "gdb: entry exits"
expect_file err "inject-tool: process $TPID exited during injection"
exec 3>&-
wait "$TPID"; est=$?
[ $est -eq 5 ] || fail_ "the target's exit status is $est, expected 5 (from entry's _exit)"
exit 0
