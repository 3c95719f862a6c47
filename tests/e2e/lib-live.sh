# Sourced by the live tests after init.sh: the view runs in a tmux server of the test's own
# (its socket in the scratch directory), in windows of a fixed size; the tests read the screen
# with capture-pane and type with send-keys. Every wait polls the screen (or a file) with a
# generous limit: nothing depends on how fast the machine is.
command -v tmux > /dev/null || skip_ "tmux is needed to drive the live view"

TMUX_SOCK=$T/tmux.sock
tm() { tmux -S "$TMUX_SOCK" "$@"; }
# The server goes with the test, whatever its end (init.sh's cleanup_ keeps the status).
trap 'st_=$?; tm kill-server > /dev/null 2>&1; (exit $st_); cleanup_' EXIT

# view_start NAME CMD...: run CMD in a new 120x30 window NAME; its exit status goes to NAME.rc,
# and the window stays (with what CMD left on it) until the test ends.
view_start() {
	local name=$1 cmd
	shift
	printf -v cmd '%q ' "$@"
	rm -f "$T/$name.rc"
	tm -f /dev/null new-session -d -s "$name" -x 120 -y 30 -c "$T" \
		"$cmd; echo \$? > '$T/$name.rc'; exec sleep 3600" || framework_failure_ "tmux new-session $name"
}
# screen NAME: the window's text into NAME.screen (and on stdout).
screen() { tm capture-pane -p -t "$1" > "$T/$1.screen" 2> /dev/null; cat "$T/$1.screen"; }
# line NAME N: line N (from 1) of the window, as last captured by screen.
line() { sed -n "$2p" "$T/$1.screen"; }
# wait_screen NAME CMD...: capture NAME until CMD (run on it) succeeds; fail after 60 s.
wait_screen() {
	local name=$1
	shift
	for i in $(seq 600); do
		screen "$name" > /dev/null
		"$@" && return 0
		sleep 0.1
	done
	sed 's/^/  screen: /' "$T/$name.screen" >&2
	fail_ "the view '$name' never showed what '$*' wants"
}
# title_is NAME TEXT: the window's title (line 1 of the last captured screen) is TEXT, or,
# where the window is too narrow for it, TEXT cut with a mark (… or ~) before the state on the
# right: so a test does not depend on how long the paths it names are.
title_is() {
	local l cut mark
	l=$(line "$1" 1)
	case $l in "$2  "*) return 0 ;; esac
	for mark in "…" "~"; do
		cut=${l%%"$mark  "*}
		[ "$cut" != "$l" ] && [ ${#cut} -lt ${#2} ] && [ "${2:0:${#cut}}" = "$cut" ] && return 0
	done
	return 1
}
# has NAME PATTERN: the last captured screen has a line matching the extended regex.
has() { grep -qE -- "$2" "$T/$1.screen"; }
# row_is NAME N PATTERN: table row N (from 1; screen line N + 4) matches the extended regex.
row_is() { line "$1" $(($2 + 4)) | grep -qE -- "$3"; }
# keys NAME KEY...: type into the window.
keys() { local name=$1; shift; tm send-keys -t "$name" "$@"; }
# view_rc NAME: wait for the command of window NAME to end; its status in $rc.
view_rc() {
	wait_until 60 [ -s "$T/$1.rc" ]
	[ -s "$T/$1.rc" ] || { screen "$1" | sed 's/^/  screen: /' >&2; fail_ "the view '$1' did not end"; }
	rc=$(cat "$T/$1.rc")
}
# paused PID: the tracker of PID says it is paused (no capture, no live stream).
paused() {
	"$MEMPROF" ctl "$1" status > ctl.out 2>&1 || fail_ "ctl status: $(cat ctl.out)"
	grep -q "^process $1: paused, " ctl.out || fail_ "process $1 is not paused: $(cat ctl.out)"
}
