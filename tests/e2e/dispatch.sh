#!/bin/bash
# The dispatcher: overview, version, unknown commands, exit statuses, stdout checks.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"

mp
expect_rc 2 "bare memprof"
expect_err "usage: memprof"
expect_err "parse"

mp --version
expect_rc 0 --version
expect_out "memprof 0.1.0 (capture format 4.0)"

mp --help
expect_rc 0 --help
expect_out "usage: memprof"
for c in $("$MEMPROF" --list-cmds); do expect_out "   $c "; done

mp help
expect_rc 0 "help"
expect_out "usage: memprof"

mp --list-cmds
expect_rc 0 --list-cmds
expect_out parse
sort -c out || fail_ "--list-cmds is not sorted"

mp pars
expect_rc 2 "a misspelt command"
expect_err "memprof: 'pars' is not a memprof command"
expect_err "the most similar command is 'parse'"

mp xyzzy
expect_rc 2 "an unknown command"
expect_err "'xyzzy' is not a memprof command"
grep -q "most similar" err && fail_ "no suggestion expected for xyzzy"

mp --frobnicate
expect_rc 2 "an unknown global option"
expect_err "unknown option '--frobnicate'"

mp help xyzzy
expect_rc 2 "help for an unknown command"

mp parse -h
expect_rc 0 "parse -h"
expect_out "usage: memprof parse [--stacks] FILE"

mp parse --bogus x
expect_rc 2 "an unknown command option"
expect_err "memprof parse: unknown option '--bogus'"

mp parse a b
expect_rc 2 "too many operands"
expect_err "unexpected argument 'b'"

mp parse --list-opts
expect_rc 0 "--list-opts"
expect_out "-h"

# A full disk on stdout is an error, not a silent success.
if [ -w /dev/full ]; then
	keep -o /dev/full "$MEMPROF" --version
	expect_rc 1 "--version to a full disk"
	expect_err "write error on standard output"
	keep -o /dev/full "$MEMPROF" parse "$TESTDATA/basic.mprof"
	expect_rc 1 "parse to a full disk"
	expect_err "write error on standard output"
fi

# A reader that goes away early is not an error.
{
	echo 'HEADER pid=1'
	echo 'TRACE node=1 parent=0 ip=0x401000'
	for i in $(seq 1 2000); do echo "ALLOC thread=0 kind=malloc addr=$((4096 + i * 16)) size=$i stack=1"; done
} > big.txt
"$MKCAPTURE" -o big.mprof big.txt || framework_failure_ "mkcapture"
"$MEMPROF" parse big.mprof 2>err | head -1 > first
st=${PIPESTATUS[0]}
[ "$st" -eq 0 ] || fail_ "parse into a closed pipe exited $st"
expect_no_err "parse into a closed pipe"
grep -q '^HEADER' first || fail_ "head did not get the header"
exit 0
