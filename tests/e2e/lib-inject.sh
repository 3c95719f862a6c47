# Sourced by the tests of lib/process/inject after init.sh: the driver, the target, the
# fixture library, and a skip when this machine does not let us ptrace.
[ -x "${INJECT_TOOL:-}" ] || framework_failure_ "INJECT_TOOL is not built: run this through 'make check'"
[ -x "${INJECT_TARGET:-}" ] || framework_failure_ "INJECT_TARGET is not built"
[ -f "${INJECT_FIXTURE:-}" ] || framework_failure_ "INJECT_FIXTURE '${INJECT_FIXTURE:-}' is not built"
[ "$(uname -m)" = x86_64 ] || skip_ "memprof attach supports x86_64 only, this is $(uname -m)"
why=$("$INJECT_TOOL" --probe); st=$?
[ $st -eq 77 ] && skip_ "$why"
[ $st -eq 0 ] || framework_failure_ "inject-tool --probe failed with status $st"

LIB=$INJECT_FIXTURE
ENTRY=mp_fixture_entry
# The targets of these tests may run as nobody: let them write here.
chmod 755 "$T"
mkdir -m 1777 w

# Processes started by the test die with it, also when it fails half-way.
MP_PIDS=
mp_kill_pids() { [ -z "$MP_PIDS" ] || kill -9 $MP_PIDS 2>/dev/null; }
eval "$(trap -p EXIT | sed "s/' EXIT\$/; mp_kill_pids' EXIT/")"

# inject ARGS...: run the driver; output in ./out and ./err, status in $rc.
inject() { run "$INJECT_TOOL" "$@"; }

wait_for() { wait_until 60 "$@"; } # wait_for CMD...: up to 60 s for CMD to succeed
# spawn NAME CMD...: start CMD in the background with its output in NAME.out and wait
# for its "ready"; HPID is its pid.
spawn() {
	name=$1; shift
	"$@" >"$name.out" 2>&1 &
	HPID=$!
	MP_PIDS="$MP_PIDS $HPID"
	wait_for grep -q ready "$name.out" || framework_failure_ "'$*' did not start"
}
blocked_in_read() { # a thread of $1 sits in read(2)
	grep -q '^0 ' /proc/"$1"/task/*/syscall 2>/dev/null
}

# start_target ORDER: start `inject-target run` on a FIFO, expecting $EXPECTED through it;
# returns once it is ready and its reader is blocked in read(); TPID is its pid and fd 3
# holds the FIFO's writing end.
EXPECTED='bytes written after the injection'
start_target() {
	rm -f fifo
	mkfifo fifo || framework_failure_ "mkfifo"
	exec 3<>fifo
	keep_bg -n target "$INJECT_TARGET" run fifo "$EXPECTED" 25 "$1" 3>&-
	TPID=$!
	MP_PIDS="$MP_PIDS $TPID"
	wait_for grep -q ready target.out || framework_failure_ "the target did not start"
	wait_for blocked_in_read "$TPID" || framework_failure_ "the target's reader never blocked in read()"
}

# finish_target: feed the FIFO, close it, and check that the target ends as if nothing happened.
finish_target() {
	printf '%s' "$EXPECTED" >&3
	exec 3>&-
	wait "$TPID"; trc=$?
	cat >expected.out <<EOT
ready
sleep 10
sleep 20
pipe: got '$EXPECTED'
sleeper: 25 sleeps, 0 short or interrupted
worker 0: 0 corrupted or failed blocks
worker 1: 0 corrupted or failed blocks
spawner: threads came and went
EOT
	match_diff expected.out target.out
	[ "$trc" -eq 0 ] || fail_ "the target exited with status $trc"
	[ ! -s target.err ] || fail_ "the target wrote to stderr: $(cat target.err)"
}

# expect_alive PID: running, not stopped, not traced.
expect_alive() {
	[ -r /proc/"$1"/status ] || fail_ "process $1 is gone"
	state=$(awk '/^State:/ { print $2 }' /proc/"$1"/status)
	tracer=$(awk '/^TracerPid:/ { print $2 }' /proc/"$1"/status)
	case $state in
	t|T|Z|X) fail_ "process $1 is in state $state after the injection" ;;
	esac
	[ "$tracer" = 0 ] || fail_ "process $1 is still traced by $tracer"
}

# expect_line FILE LINE: FILE holds exactly LINE.
expect_file() {
	printf '%s\n' "$2" >want.txt
	match_diff want.txt "$1"
}
