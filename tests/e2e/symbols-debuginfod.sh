#!/bin/bash
# A stripped program whose debug file only a debuginfod server has (a real
# one, started here on 127.0.0.1): with DEBUGINFOD_URLS pointing at it, its
# functions are named with file:line, in the capture (memprof run) and when
# a capture without symbols is reported, even with the program gone;
# without it, one line says which module has no names and how to get them.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-debuginfod.sh"

stripped_prog prog srv/prog.debug
kept=$(site make_kept "$WORKLOAD_SRC/allocs.c")
calloc=$(site calloc "$WORKLOAD_SRC/allocs.c")
hint_re='^memprof: note: no debug information for [0-9]+ modules? \((.*, )?prog[,) ].*: some frames show module\+offset instead of a function, none has a source line; to get them, install their debug symbols \(Debian.s -dbgsym packages\)'

# expect_named CAPTURE: the tree names prog's functions at their lines.
expect_named() {
	mp tree "$1"
	expect_rc 0 "tree $1"
	grep -qE "main → make_kept  .*allocs\.c:$kept\$" out || { cat out >&2; fail_ "$1: make_kept not named"; }
	grep -qE "main  .*allocs\.c:$calloc\$" out || { cat out >&2; fail_ "$1: main not named"; }
	expect_not_out "prog+0x"
}

# No server: prog's frames are module+offset, and one line says why and what to do.
DEBUGINFOD_CACHE_PATH=$T/cache0 mp run -o none.bin ./prog
expect_rc 0 "run without a server"
expect_count 1 "$hint_re or set DEBUGINFOD_URLS to a debuginfod server\$" err
expect_count 1 'debug information' err
mp tree none.bin
expect_out "prog+0x"
expect_not_out "make_kept"

start_debuginfod srv
export DEBUGINFOD_URLS=http://127.0.0.1:$PORT

# Collection time: the capture holds the names (and is read with the server gone).
DEBUGINFOD_CACHE_PATH=$T/cache1 mp run -o served.bin ./prog
expect_rc 0 "run with a server"
grep -E "no debug information.*[(, ]prog[,) ]" err && fail_ "prog reported without debug information"
[ -s cache1/"$BUILD_ID"/debuginfo ] || fail_ "nothing fetched into the client's cache"

# Report time: a capture without symbols, the program here, then gone.
DEBUGINFOD_URLS= mp run -q --no-symbols -o raw.bin ./prog
expect_rc 0 "run --no-symbols"
DEBUGINFOD_URLS= mp run -q --no-symbols -o gone.bin "$PWD/prog"
expect_rc 0 "run --no-symbols (to be gone)"
mv prog prog.kept
DEBUGINFOD_CACHE_PATH=$T/cache2 expect_named gone.bin
expect_no_err "tree of a capture whose program is gone"
mv prog.kept prog
DEBUGINFOD_CACHE_PATH=$T/cache3 expect_named raw.bin
expect_no_err "tree of a capture without symbols"

stop_server
DEBUGINFOD_CACHE_PATH=$T/cache4 expect_named served.bin
expect_no_err "tree of a capture with symbols"

# Without the server, report time gives the same one line (in a reporter's words).
unset DEBUGINFOD_URLS
DEBUGINFOD_CACHE_PATH=$T/cache5 mp tree raw.bin
expect_rc 0 "tree without a server"
expect_count 1 "${hint_re/memprof: note: /memprof: warning: capture has no symbols and } or set DEBUGINFOD_URLS to a debuginfod server\$" err
expect_count 1 'debug information' err
exit 0
