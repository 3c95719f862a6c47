#!/bin/bash
# lib/process/inject, ptrace method: the library is loaded, entry runs in the target with
# our argument and returns 42, and the target carries on unharmed: its interrupted read()
# and nanosleep() restart, its allocating threads see no corruption, same output and status.
. "${MEMPROF_SRCDIR:-.}/tests/e2e/init.sh"
. "$MEMPROF_SRCDIR/tests/e2e/lib-inject.sh"

for order in rs sr; do
	start_target "$order"
	inject "$TPID" "$LIB" "$ENTRY" "write:$T/w/out-$order.txt"
	expect_rc 0 "injection ($order)"
	expect_out "result 42"
	expect_file "w/out-$order.txt" "call=1 arg=write:$T/w/out-$order.txt pid=$TPID"
	expect_alive "$TPID"
	grep -q "^$(printf '[0-9a-f]*-[0-9a-f]* r-xp .*')$LIB\$" /proc/"$TPID"/maps ||
		fail_ "'$LIB' is not mapped in the target"
	finish_target
done

# A signal that reaches the calling thread during the call is held back, then delivered.
spawn pause "$INJECT_TARGET" pause
PAUSE_PID=$HPID
inject "$PAUSE_PID" "$LIB" "$ENTRY" raise:
expect_rc 0 "injection that raises SIGUSR1"
expect_out "result 44"
wait_for grep -q SIGUSR1 pause.out || fail_ "the SIGUSR1 raised during the call was not delivered"
printf 'ready\nSIGUSR1\n' >want.txt
match_diff want.txt pause.out
expect_alive "$PAUSE_PID"
kill "$PAUSE_PID"

# The library replaced on disk (an upgrade) between two injections: the loaded copy is used.
cp "$LIB" w/fx.so
spawn replaced "$INJECT_TARGET" pause
inject "$HPID" "$T/w/fx.so" "$ENTRY" "write:$T/w/fx.txt"
expect_rc 0 "injection of a copy"
cp "$LIB" w/fx.new && mv w/fx.new w/fx.so
inject "$HPID" "$T/w/fx.so" "$ENTRY" "write:$T/w/fx.txt"
expect_rc 0 "injection after the file was replaced"
expect_out "result 42"
printf 'call=1 arg=write:%s pid=%s\ncall=2 arg=write:%s pid=%s\n' "$T/w/fx.txt" "$HPID" "$T/w/fx.txt" "$HPID" >want.txt
match_diff want.txt w/fx.txt
expect_alive "$HPID"
kill "$HPID"

# Injected while running its own code: every register (general, SSE) and errno comes back.
spawn spin "$INJECT_TARGET" spin
SPIN_PID=$HPID
inject -n 20 "$SPIN_PID" "$LIB" "$ENTRY" "write:$T/w/spin.txt"
expect_rc 0 "20 injections into a spinning thread"
[ "$(grep -c '^result 42$' out)" -eq 20 ] || fail_ "not 20 results of 42: $(cat out)"
kill -TERM "$SPIN_PID"
wait "$SPIN_PID"; st=$?
printf 'ready\nspin: 0 register or errno mismatches\n' >want.txt
match_diff want.txt spin.out
[ $st -eq 0 ] || fail_ "the spinning target exited with status $st"

# Another user's process, as that user without privileges: allowed by the classic rules.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	# (Copies nobody may run and load: see share in init.sh.)
	share target "$INJECT_TARGET"
	share lib "$LIB"
	spawn nobody setpriv --reuid=65534 --regid=65534 --clear-groups "$target" pause
	NPID=$HPID
	inject -u 65534 "$NPID" "$lib" "$ENTRY" "write:$T/w/nobody.txt"
	expect_rc 0 "injection as nobody into nobody's process"
	expect_out "result 42"
	expect_file w/nobody.txt "call=1 arg=write:$T/w/nobody.txt pid=$NPID"
	expect_alive "$NPID"
	kill "$NPID"
else
	warn_ "$ME_: not root or no setpriv: the same-user-as-nobody case is not run"
fi
exit 0
