# Sourced by the debuginfod tests: a stripped program, a free port, a real
# debuginfod server on 127.0.0.1 and a server that never answers.
command -v debuginfod > /dev/null || skip_ "debuginfod not found (apt-get install debuginfod)"
command -v objcopy > /dev/null || skip_ "objcopy not found (apt-get install binutils)"
command -v python3 > /dev/null || skip_ "python3 not found (apt-get install python3)"
# Only the servers these tests start are asked, each with a cache of its own.
unset DEBUGINFOD_URLS DEBUGINFOD_TIMEOUT DEBUGINFOD_PROGRESS DEBUGINFOD_VERBOSE MEMPROF_DEBUGINFO_PATH

# stripped_prog NAME DEBUG: the allocs workload as ./NAME, stripped, its debug file at DEBUG;
# sets BUILD_ID.
stripped_prog() {
	cp "$WORKLOADS/allocs" "$1" && mkdir -p "$(dirname "$2")" &&
		objcopy --only-keep-debug "$1" "$2" && objcopy --strip-all "$1" ||
		framework_failure_ "cannot split the debug information of '$1'"
	BUILD_ID=$(readelf -n "$1" | sed -n 's/.*Build ID: *//p')
	[ -n "$BUILD_ID" ] || framework_failure_ "'$1' has no build-id"
}

# expect_kept_named CAPTURE: its tree names the allocs workload's make_kept at its
# source line, shows no module+offset frame, and says nothing on standard error.
expect_kept_named() {
	local kept
	kept=$(site make_kept "$WORKLOAD_SRC/allocs.c")
	mp tree "$1"
	expect_rc 0 "tree $1"
	grep -qE "main → make_kept  .*allocs\.c:$kept\$" out || { cat out >&2; fail_ "$1: make_kept not named"; }
	expect_not_out "+0x"
	expect_no_err "tree $1"
}

# free_port: a TCP port of 127.0.0.1 that nothing listens on (now).
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_http URL PID: until URL answers 200 (the server is up and has indexed), at most
# 30 s; fails at once when process PID is gone (its port was taken since free_port).
wait_http() {
	python3 - "$1" "$2" <<'EOF'
import os, sys, time, urllib.request
for _ in range(300):
    try:
        os.kill(int(sys.argv[2]), 0)
    except OSError:
        sys.exit(1)
    try:
        with urllib.request.urlopen(sys.argv[1], timeout=5) as r:
            if r.status == 200:
                sys.exit(0)
    except Exception:
        pass
    time.sleep(0.1)
sys.exit(1)
EOF
}

# start_debuginfod DIR: a debuginfod serving the ELF and DWARF files under DIR, on
# 127.0.0.1:$PORT, with its index in memory; SERVER_PID. Waits until it serves BUILD_ID.
start_debuginfod() {
	for try in 1 2 3; do
		PORT=$(free_port)
		debuginfod -F -p "$PORT" -d :memory: -t 0 -g 0 "$1" > "debuginfod.$try.log" 2>&1 &
		SERVER_PID=$!
		wait_http "http://127.0.0.1:$PORT/buildid/$BUILD_ID/debuginfo" "$SERVER_PID" && return
		kill "$SERVER_PID" 2> /dev/null
		wait "$SERVER_PID" 2> /dev/null
	done
	framework_failure_ "debuginfod did not serve '$BUILD_ID' (see $T/debuginfod.*.log)"
}

stop_server() {
	kill "$SERVER_PID" 2> /dev/null
	wait "$SERVER_PID" 2> /dev/null
}

# start_mute_server: a server on 127.0.0.1:$PORT that accepts connections and never
# answers, for at most 300 s; SERVER_PID.
start_mute_server() {
	PORT=$(free_port)
	python3 - "$PORT" > mute.log 2>&1 <<'EOF' &
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(64)
s.settimeout(1)
print("listening", flush=True)
held, end = [], time.time() + 300
while time.time() < end:
    try:
        held.append(s.accept()[0])
    except socket.timeout:
        pass
EOF
	SERVER_PID=$!
	for _ in $(seq 100); do
		grep -q listening mute.log && return
		sleep 0.1
	done
	framework_failure_ "the mute server did not start (see $T/mute.log)"
}
