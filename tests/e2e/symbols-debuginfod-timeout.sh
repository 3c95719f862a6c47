#!/bin/bash
# A debuginfod server that accepts and never answers does not hang memprof:
# the first lookup waits DEBUGINFOD_TIMEOUT (per try of the client), a
# warning says the servers are not asked again, and the rest of the run,
# and its reports, go on without them.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-debuginfod.sh"

stripped_prog prog dbg/prog.debug
start_mute_server
export DEBUGINFOD_URLS=http://127.0.0.1:$PORT DEBUGINFOD_CACHE_PATH=$T/cache DEBUGINFOD_TIMEOUT=1
stalled="memprof: warning: no debuginfod server in DEBUGINFOD_URLS answered in 1 s (DEBUGINFOD_TIMEOUT sets this wait): not asked again"
expect_stalled() {
	[ "$(grep -cxF -- "$stalled" err)" -eq 1 ] || { cat err >&2; fail_ "$1: no line '$stalled'"; }
}
# (timeout: a hang fails the test instead of stopping the suite.)
run timeout 120 "$MEMPROF" run -o a.bin ./prog
expect_rc 0 "run with a mute server"
expect_stalled run
expect_count 1 '^memprof: note: no debug information for [0-9]+ modules? \((.*, )?prog[,) ].*: the servers in DEBUGINFOD_URLS did not answer in time$' err
grep -vxF -- "$stalled" err | grep -q warning && fail_ "other warnings"

# The same at report time, for a capture without symbols.
DEBUGINFOD_URLS= mp run -q --no-symbols -o raw.bin ./prog
expect_rc 0 "run --no-symbols"
run timeout 120 "$MEMPROF" tree raw.bin
expect_rc 0 "tree with a mute server"
expect_stalled tree
expect_count 1 '^memprof: warning: capture has no symbols and no debug information for [0-9]+ modules? \((.*, )?prog[,) ].*: the servers in DEBUGINFOD_URLS did not answer in time$' err
expect_out "prog+0x"
stop_server
exit 0
