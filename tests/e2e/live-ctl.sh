#!/bin/bash
# memprof live next to memprof ctl and the life of the process: while a view watches, ctl
# status says so, start and snapshot are refused, stop ends the view's stream (the view says
# so); Ctrl-C and SIGTERM end a view like q; a process that exits while watched is shown as
# exited, its last figures kept until q.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-attachee.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-live.sh"

ctl() { mp ctl "$TARGET_PID" "$@"; }

start_target env MEMPROF_PAUSED=1 MEMPROF_OUTPUT="$T/d.%p.bin" LD_PRELOAD="$TRACKER_LIB"
P=$TARGET_PID

# ctl while a view watches.
view_start v "$MEMPROF" live $P
wait_screen v has v "  running [0-9.]+ s$"
ctl status
expect_rc 0 "status while watched"
grep -qE "^process $P: streaming to a live view \(memprof live\) at '/tmp/memprof-live-[^/]+/stream' for [0-9.]+ s, 0 captures written$" out ||
	fail_ "status: $(cat out)"
ctl start
expect_rc 1 "start while watched"
expect_one_line_err
expect_err "memprof: process $P: a live view (memprof live) is watching this process, at '"
ctl snapshot
expect_rc 1 "snapshot while watched"
expect_err "memprof: process $P: a live view (memprof live) is watching this process: there is no capture to snapshot"
send_cmd "alloc 5 5555"
wait_screen v row_is v 1 " +5 +5  command_alloc at attachee\.c *$"
ctl stop
expect_rc 0 "stop while watched"
[ "$(cat out)" = "process $P: stopped streaming to the live view" ] || fail_ "stop: $(cat out)"
wait_screen v has v "  tracking stopped after [0-9.]+ s$"
row_is v 1 " +5 +5  command_alloc at attachee\.c *$" || fail_ "the last figures are gone: $(line v 5)"
paused $P
keys v q
view_rc v
[ "$rc" -eq 0 ] || fail_ "the view of a stopped stream exited $rc"

# Ctrl-C is a key of the view (the terminal is raw): it quits, and reaches no other process.
view_start c "$MEMPROF" live $P
wait_screen c has c "  running [0-9.]+ s$"
keys c C-c
view_rc c
[ "$rc" -eq 0 ] || fail_ "Ctrl-C: exit $rc"
running $P
paused $P

# SIGTERM (and SIGINT, SIGHUP) end the view as q does.
view_start s "$MEMPROF" live $P
wait_screen s has s "  running [0-9.]+ s$"
vpid=$(tm list-panes -t s -F '#{pane_pid}')
live_pid=$(pgrep -P "$vpid" -x memprof || true)
[ -n "$live_pid" ] || live_pid=$vpid # the shell ran it with exec
kill -TERM "$live_pid"
view_rc s
[ "$rc" -eq 0 ] || fail_ "SIGTERM: exit $rc"
screen s | grep -q "q quit" && fail_ "the view is left on the terminal after SIGTERM"
running $P
paused $P

# The process exits while watched: the view says so and keeps its figures until q.
view_start e "$MEMPROF" live $P
wait_screen e has e "  running [0-9.]+ s$"
send_cmd "alloc 9 999"
wait_screen e row_is e 1 " +9 +9  command_alloc at attachee\.c *$"
echo "exit 4" > cmds
wait $P; st=$?
[ "$st" -eq 4 ] || fail_ "the service exited $st, expected 4"
wait_screen e has e "  exited with status 4 after [0-9.]+ s$"
row_is e 1 " +9 +9  command_alloc at attachee\.c *$" || fail_ "the figures are gone: $(line e 5)"
keys e q
view_rc e
[ "$rc" -eq 0 ] || fail_ "the view of an exited process exited $rc"
[ ! -s target.err ] || fail_ "the service wrote on stderr: $(cat target.err)"
[ "$(ls "$T"/d.* 2> /dev/null)" = "" ] || fail_ "a capture was written"

# Under memprof run --paused: the view streams to its own collector, not run's; run's first
# capture is still capture 1, with what came after the view.
start_target "$MEMPROF" run --paused -o "$T/run.bin"
RUN_PID=$TARGET_PID
TARGET_PID=$(sed -n "s/^memprof: .* runs as pid \([0-9]*\) with tracking paused; .*/\1/p" target.err)
[ -n "$TARGET_PID" ] || fail_ "memprof run --paused did not say the program's pid: $(cat target.err)"
P=$TARGET_PID
view_start p "$MEMPROF" live $P
wait_screen p has p "  running [0-9.]+ s$"
send_cmd "alloc 4 4444"
wait_screen p row_is p 1 " +4 +4  command_alloc at attachee\.c *$"
keys p q
view_rc p
[ "$rc" -eq 0 ] || fail_ "the view of a memprof run --paused program exited $rc"
paused $P
ctl start
expect_rc 0 "start after the view, under memprof run"
[ "$(cat out)" = "process $P: recording capture 1 into '$T/run.bin'" ] || fail_ "start: $(cat out)"
send_cmd "alloc 2 2222"
ctl stop
expect_rc 0 "stop under memprof run"
send_cmd "exit 0"
wait $RUN_PID || fail_ "memprof run --paused failed"
# (memprof run completes its captures when the program ended.)
[ "$("$MEMPROF" parse "$T/run.bin" | grep -cE '^ALLOC .* size=(2222|4444) ')" -eq 2 ] ||
	fail_ "run's capture does not hold exactly the 2 blocks after the view"
exit 0
