#!/bin/bash
# memprof live's and run --live's errors: usage, no terminal, no such process, no tracker, a
# tracker that records already, a second view; each one line and a non-zero status, the
# terminal given back, and the process left as it was.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-attachee.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-live.sh"

mp live
expect_rc 2 "no arguments"
mp live 12ab
expect_rc 2 "a bad pid"
expect_err "invalid process id '12ab'"
mp live 1 2
expect_rc 2 "two pids"
mp run --live --paused true
expect_rc 2 "--live with --paused"
expect_err "options '--live' and '--paused' do not go together"
mp run --live --reporter flamegraph true
expect_rc 2 "--live --reporter without -o"
expect_err "option '--reporter' with '--live' needs -o FILE"

# No terminal: said at once, and the program does not run.
mp live $$ < /dev/null
expect_rc 1 "live without a terminal"
expect_one_line_err
[ "$(cat err)" = "memprof: the live view needs a terminal: standard output is not one" ] ||
	fail_ "no terminal: $(cat err)"
mp run --live touch ran
expect_rc 1 "run --live without a terminal"
expect_one_line_err
expect_err "the live view needs a terminal: standard output is not one"
[ ! -e ran ] || fail_ "the program ran without a view"

# live_err NAME PID: memprof live PID on a terminal, its status in $rc and stderr in NAME.err.
live_err() {
	view_start "$1" sh -c 'exec "$0" live "$1" 2> "$2.err"' "$MEMPROF" "$2" "$1"
	view_rc "$1"
	cp "$1.err" err
	expect_one_line_err "memprof live $2"
	# The terminal is as it was: nothing of a view is left on it.
	screen "$1" | grep -q "q quit" && fail_ "the view is left on the terminal"
	return 0
}

true & gone=$!
wait $gone
live_err gone $gone
[ "$rc" -eq 1 ] || fail_ "a process that is gone: exit $rc"
[ "$(cat err)" = "memprof: no process $gone" ] || fail_ "gone: $(cat err)"

sleep 600 & untracked=$!
live_err untracked $untracked
[ "$rc" -eq 1 ] || fail_ "a process without a tracker: exit $rc"
expect_err "process $untracked has no memprof tracker listening (preload it with MEMPROF_OUTPUT, or start the program with 'memprof run --paused')"
kill -0 $untracked || fail_ "the untracked process died"
kill $untracked

# A tracker that records into its capture: refused; the capture goes on, whole.
start_target env MEMPROF_OUTPUT="$T/r.%p.bin" LD_PRELOAD="$TRACKER_LIB"
live_err recording $TARGET_PID
[ "$rc" -eq 1 ] || fail_ "a recording tracker: exit $rc"
[ "$(cat err)" = "memprof: process $TARGET_PID: already recording into '$T/r.$TARGET_PID.bin' (end it first with 'memprof ctl $TARGET_PID stop')" ] ||
	fail_ "recording: $(cat err)"
send_cmd "alloc 3 3333"
send_cmd "exit 0"
wait $TARGET_PID || fail_ "the recording service failed"
[ "$("$MEMPROF" parse "$T/r.$TARGET_PID.bin" | grep -c '^ALLOC .* size=3333 ')" -eq 3 ] ||
	fail_ "the capture lost allocations"
[ ! -s target.err ] || fail_ "the service wrote on stderr: $(cat target.err)"

# A second view of a watched process is refused; the first one goes on.
start_target env MEMPROF_PAUSED=1 MEMPROF_OUTPUT="$T/p.%p.bin" LD_PRELOAD="$TRACKER_LIB"
view_start first "$MEMPROF" live $TARGET_PID
wait_screen first has first "  running [0-9.]+ s$"
live_err second $TARGET_PID
[ "$rc" -eq 1 ] || fail_ "a second view: exit $rc"
expect_err "memprof: process $TARGET_PID: a live view (memprof live) is watching this process, at '"
send_cmd "alloc 7 7777"
wait_screen first row_is first 1 " +7 +7  command_alloc at attachee\.c *$"
keys first q
view_rc first
[ "$rc" -eq 0 ] || fail_ "the first view exited $rc"
paused $TARGET_PID
send_cmd "exit 0"
wait $TARGET_PID || fail_ "the watched service failed"
[ ! -s target.err ] || fail_ "the watched service wrote on stderr: $(cat target.err)"
[ ! -e "$T/p.$TARGET_PID.bin" ] || fail_ "a view wrote a capture"
exit 0
