#!/bin/bash
# memprof live PID on a service started with the tracker preloaded and paused: the view shows
# the heap and the top locations of a known workload as it allocates, sorts by the key
# pressed, filters by thread, and q leaves the service running, paused, its captures
# untouched (the next 'ctl start' writes capture 1 with exactly what came after).
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-attachee.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-live.sh"

start_target env MEMPROF_PAUSED=1 MEMPROF_OUTPUT="$T/d.%p.bin" LD_PRELOAD="$TRACKER_LIB"
P=$TARGET_PID
# Completion offers the processes whose tracker listens.
words=$(PATH="$(dirname "$MEMPROF"):$PATH" bash -c '. "$1"; COMP_WORDS=(memprof live ""); COMP_CWORD=2
	_memprof; printf "%s\n" "${COMPREPLY[@]}"' _ "$MEMPROF_SRCDIR/completions/memprof")
grep -qx "$P" <<< "$words" || fail_ "bash completion of 'memprof live' does not offer $P: $words"
view_start v "$MEMPROF" live "$P"
wait_screen v has v "  running [0-9.]+ s$"
title_is v "memprof live  pid $P  $ATTACHEE $T/shared/cmds" || fail_ "the title: $(line v 1)"
has v "^ +<Own> +Own% +Total +Total% +Allocs +Blocks  Location *$" || fail_ "no table heading"
has v "^q quit  o/t/a/b sort" || fail_ "no line of keys"

# 1000 blocks of 4096 bytes from command_alloc: the top of the table, by own memory.
send_cmd "alloc 1000 4096"
wait_screen v row_is v 1 "^ *3\.91 MiB +[0-9.]+% +3\.91 MiB +[0-9.]+% +1,000 +1,000  command_alloc at attachee\.c *$"
has v "^heap 3\.9[0-9] MiB in 1,0[0-9][0-9] blocks   peak 3\.9[0-9] MiB   RSS [0-9.]+ [KMG]iB   " ||
	fail_ "the figures line: $(line v 2)"
has v "^threads: all [0-9]+ +sorted by own$" || fail_ "the thread line: $(line v 3)"

# a: by allocations. The churn threads allocate without end: churn_alloc comes first,
# command_alloc (1000) after it.
keys v a
wait_screen v row_is v 1 "  churn_alloc at attachee\.c *$"
has v "^ +Own +Own% +Total +Total% +<Allocs> +Blocks  Location *$" || fail_ "allocations not marked"
screen v | awk '/  churn_alloc at /{c=NR} /  command_alloc at /{a=NR} END{exit !(c && a && c < a)}' ||
	fail_ "by allocations, command_alloc is not below churn_alloc"
# t: by total. What calls command_alloc holds its 3.91 MiB too: command_alloc is not first.
keys v t
wait_screen v has v "^ +Own +Own% +<Total> +Total% +Allocs +Blocks  Location *$"
row_is v 1 "^ *[0-9.]+ [KM]?i?B +[0-9.]+% +3\.91 MiB " || fail_ "by total, the first row: $(line v 5)"
row_is v 1 "command_alloc" && fail_ "by total, command_alloc is first"
# o: by own memory again.
keys v o
wait_screen v row_is v 1 "  command_alloc at attachee\.c *$"

# The reader thread (the process's main thread, tid = pid) made the 1000 blocks; a churn
# thread holds none of them.
# (Each Right is seen on the screen before the next, whatever a refresh does meanwhile.)
shown_thread() { line v 3 | sed 's/, live .*//; s/  .*//'; }
thread_moved() { [ "$(shown_thread)" != "$before" ]; }
for i in $(seq 12); do
	screen v > /dev/null
	has v "^thread [0-9]+ of [0-9]+: tid $P 'reader'" && break
	before=$(shown_thread)
	keys v Right
	wait_screen v thread_moved
done
has v "^thread [0-9]+ of [0-9]+: tid $P 'reader', live 3\.9[0-9] MiB" || fail_ "no reader thread: $(line v 3)"
wait_screen v row_is v 1 "^ *3\.91 MiB +[0-9.]+% +3\.91 MiB +[0-9.]+% +1,000 +1,000  command_alloc at attachee\.c *$"
before=$(shown_thread)
keys v Right
wait_screen v thread_moved
if has v "'churn-[12]'"; then
	screen v | grep -q "command_alloc" && fail_ "a churn thread shows command_alloc's blocks"
fi

# A narrower terminal: the view is laid out again, without the percentages.
tm resize-window -t v -x 80 -y 20
wait_screen v has v "^ +<Own> +Total +Allocs +Blocks  Location *$"
row_is v 1 "^ *3\.91 MiB +3\.91 MiB +1,000 +1,000  command_alloc at attachee\.c *$" ||
	fail_ "after the resize, row 1: $(line v 5)"
[ "$(LC_ALL=C.UTF-8 wc -L < v.screen)" -le 80 ] || fail_ "a line is wider than the terminal"

# q: the view ends, the service runs on, paused, and still answers.
keys v q
view_rc v
[ "$rc" -eq 0 ] || fail_ "memprof live exited $rc"
running "$P"
paused "$P"
send_cmd "alloc 2 2222"
# The live view was no capture: the next start is capture 1, with only what follows it.
mp ctl "$P" start
expect_rc 0 "ctl start after the view"
[ "$(cat out)" = "process $P: recording capture 1 into '$T/d.$P.bin'" ] || fail_ "start: $(cat out)"
send_cmd "alloc 3 333"
mp ctl "$P" stop
expect_rc 0 "ctl stop"
"$MEMPROF" parse "$T/d.$P.bin" | sed -n 's/^ALLOC .* size=\(333\|2222\) .*/\1/p' | sort | uniq -c |
	awk '{print $1 "x" $2}' > sizes
[ "$(cat sizes)" = "3x333" ] || fail_ "capture 1 holds $(tr '\n' ' ' < sizes)"
send_cmd "exit 0"
wait "$P" || fail_ "the service failed"
[ ! -s target.err ] || fail_ "the service wrote on stderr: $(cat target.err)"
exit 0
