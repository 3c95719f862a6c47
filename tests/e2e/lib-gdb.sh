# Sourced by the tests of the gdb method (attach-gdb, inject-gdb) after init.sh: a skip when
# gdb is missing, and GDB_LIMIT: what gdb said when it could not set a stopped thread's
# registers here ("" when it can). gdb must set them to call functions in a process, and
# gdb 13.1 on a CPU with AMX cannot ("Couldn't write extended state status: Bad address"),
# whatever memprof does: the tests then check that memprof says so, and test the rest.
command -v gdb > /dev/null || skip_ "gdb is not installed (tools/setup.sh check installs it)"

# One gdb run on a process of our own: write a vector register (part of the extended state
# that gdb writes back around each call) and detach.
keep_bg -n gdb-probe-target "$INJECT_TARGET" pause
probe_pid_=$!
wait_until 60 grep -q ready gdb-probe-target.out || framework_failure_ "the gdb probe's target did not start"
keep -n gdb-probe timeout 60 gdb -batch -nx -nw -iex 'set debuginfod enabled off' -iex 'set auto-solib-add off' \
	-p "$probe_pid_" -ex 'set $xmm0.v2_int64[0] = 0' -ex detach
kill "$probe_pid_"
wait "$probe_pid_" 2> /dev/null
# (Only this failure counts: any other, the test meets again and reports.)
GDB_LIMIT=$(cat gdb-probe.out gdb-probe.err | grep -m1 'extended state status')
# The line memprof (or inject-tool) writes for it, about process PID.
gdb_limit_error() {
	printf '%s' "gdb cannot call functions in process $1 on this machine: it cannot set the thread's registers" \
		" (gdb said \"$GDB_LIMIT\": a limitation of gdb with this kernel and CPU, seen with AMX);" \
		" use --method ptrace, the default"
}
