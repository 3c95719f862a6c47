#!/bin/bash
# lib/process/inject, ptrace method: each failure names its cause and fix, and leaves the
# target running, untraced and unharmed.
. "${MEMPROF_SRCDIR:-.}/tests/e2e/init.sh"
. "$MEMPROF_SRCDIR/tests/e2e/lib-inject.sh"

# expect_fail MESSAGE ARGS...: the injection fails with exactly "inject-tool: MESSAGE".
expect_fail() {
	msg=$1; shift
	inject "$@"
	expect_rc 1 "inject $*"
	expect_one_line_err "inject $*"
	printf 'inject-tool: %s\n' "$msg" >want.err
	match_diff want.err err
}

# no such process: a pid that was just reaped
sh -c 'exit 0' & gone=$!; wait $gone
expect_fail "cannot attach to $gone: no such process; check the process id with ps" \
	"$gone" "$LIB" "$ENTRY" x

# a zombie: its parent (exec'd into sleep) never reaps it
sh -c 'sleep 0 & exec sleep 30' & zparent=$!
MP_PIDS="$MP_PIDS $zparent"
has_zombie_child() { [ "$(ps -o stat= --ppid "$1" 2>/dev/null | cut -c1)" = Z ]; }
wait_for has_zombie_child $zparent || framework_failure_ "no zombie"
zpid=$(ps -o pid= --ppid $zparent | tr -d ' ')
expect_fail "cannot attach to $zpid: it is a zombie (it has exited and its parent $zparent has not reaped it); there is nothing left to profile" \
	"$zpid" "$LIB" "$ENTRY" x
kill $zparent

# statically linked
static=$MEMPROF_BUILDDIR/tests/workloads/inject-target-static
if [ -x "$static" ]; then
	spawn static "$static" pause
	spid=$HPID
	expect_fail "cannot attach to $spid: it is statically linked: memprof attach needs a dynamically linked program (use \`memprof run\` on a dynamic build)" \
		"$spid" "$LIB" "$ENTRY" x
	expect_alive "$spid"
	kill $spid
else
	warn_ "$ME_: no static C library (libc.a) at configure time: the statically linked case is not run"
fi

start_target rs

# already traced by another tracer
"$INJECT_TOOL" --trace "$TPID" 3 >tracer.out &
tracer=$!
wait_for grep -q tracing tracer.out || framework_failure_ "the second tracer did not attach"
expect_fail "cannot attach to $TPID: process $TPID is already traced by $tracer (inject-tool); detach that debugger or tracer first" \
	"$TPID" "$LIB" "$ENTRY" x
wait $tracer
expect_alive "$TPID"

# another user's process, injector without privileges as a third uid
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	share target "$INJECT_TARGET" # (a copy nobody may run: see share in init.sh)
	spawn nobody setpriv --reuid=65534 --regid=65534 --clear-groups "$target" pause
	npid=$HPID
	expect_fail "cannot attach to $npid: the process belongs to uid 65534 and memprof runs as uid 65533 without CAP_SYS_PTRACE; run memprof as that user or as root" \
		-u 65533 "$npid" "$LIB" "$ENTRY" x
	expect_alive "$npid"
	kill $npid
	# the same user, but the process made itself not dumpable
	spawn undumpable setpriv --reuid=65534 --regid=65534 --clear-groups "$target" pause undumpable
	upid=$HPID
	expect_fail "cannot attach to $upid: the process is not dumpable (a setuid, setgid or file-capability program, or it called prctl(PR_SET_DUMPABLE, 0)); run memprof as root" \
		-u 65534 "$upid" "$LIB" "$ENTRY" x
	expect_alive "$upid"
	kill $upid
else
	warn_ "$ME_: not root or no setpriv: the other-user case is not run"
fi

# a library that does not exist: dlopen's own reason
expect_fail "cannot load '$T/none.so' into process $TPID: $T/none.so: cannot open shared object file: No such file or directory; check that the file exists in the process's file system and is a shared library for its machine" \
	"$TPID" "$T/none.so" "$ENTRY" x
expect_alive "$TPID"

# a file that is not a library, and a library without the function (checked before attaching)
echo 'not ELF' >notlib.so
expect_fail "cannot load '$T/notlib.so' into process $TPID: '$T/notlib.so' is not an ELF file" \
	"$TPID" "$T/notlib.so" "$ENTRY" x
expect_fail "cannot call 'no_such_entry' in process $TPID: '$LIB' exports no function 'no_such_entry'" \
	"$TPID" "$LIB" no_such_entry x

# the gdb method without gdb
PATH=/nonexistent inject -m gdb "$TPID" "$LIB" "$ENTRY" x
expect_rc 1 "gdb method without gdb"
expect_file err "inject-tool: cannot run gdb: No such file or directory; install the Debian package 'gdb' or use --method ptrace"
expect_alive "$TPID"

# entry crashes: the call is abandoned, the thread restored
inject "$TPID" "$LIB" "$ENTRY" crash:
expect_rc 1 "crashing entry"
expect_err "inject-tool: the call of $ENTRY in process $TPID crashed with SIGSEGV at pc 0x"
expect_err "; it was abandoned and the thread's registers restored"
expect_alive "$TPID"

# entry does not return in time
inject -t 1500 "$TPID" "$LIB" "$ENTRY" sleep:30
expect_rc 1 "sleeping entry"
expect_file err "inject-tool: the call of $ENTRY in process $TPID did not return within 1500 ms; it was abandoned and the thread's registers restored"
expect_alive "$TPID"

# after all that, the target still works: one good injection, then its normal end
inject "$TPID" "$LIB" "$ENTRY" "write:$T/w/out.txt"
expect_rc 0 "injection after the failures"
expect_out "result 42"
finish_target

# no thread ever at a safe point: both threads wait on a lock (futex)
spawn stuck "$INJECT_TARGET" stuck
kpid=$HPID
expect_fail "cannot attach to $kpid: no safe point within 300 ms (the threads were always inside the C library, the allocator or the dynamic loader, or waiting on a lock); retry, or use --method gdb" \
	-t 300 "$kpid" "$LIB" "$ENTRY" x
expect_alive "$kpid"
kill $kpid

# the target exits during the injection
spawn exit "$INJECT_TARGET" pause
epid=$HPID
expect_fail "process $epid exited during injection" "$epid" "$LIB" "$ENTRY" exit:3
wait $epid; est=$?
[ $est -eq 3 ] || fail_ "the target's exit status is $est, expected 3 (from entry's _exit)"
exit 0
