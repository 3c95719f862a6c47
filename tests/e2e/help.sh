#!/bin/bash
# Every command has -h, --help (its man page), --list-opts and completions.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"

man=$MEMPROF_SRCDIR/man
cmds=$("$MEMPROF" --list-cmds) || fail_ "--list-cmds"
[ -n "$cmds" ] || fail_ "no commands listed"
for c in $cmds; do
	mp "$c" -h
	expect_rc 0 "$c -h"
	head -1 out | grep -q "^usage: memprof $c" || fail_ "'$c -h' does not start with its usage line"
	[ -f "$man/memprof-$c.1" ] || fail_ "no man page man/memprof-$c.1"
	grep -q "^\.B memprof $c" "$man/memprof-$c.1" || fail_ "memprof-$c.1 has no SYNOPSIS for '$c'"
	grep -q "^\.B $c\$" "$man/memprof.1" || fail_ "memprof.1 does not list '$c'"
	mp "$c" --list-opts
	expect_rc 0 "$c --list-opts"
	# The usage line and the man page's SYNOPSIS name the same options.
	for o in $(grep -o -- '--[a-z-]*' out | grep -v -- '--help'); do
		grep -q -- "${o//-/\\\\-}" "$man/memprof-$c.1" || fail_ "memprof-$c.1 does not document $o"
	done
	if command -v man >/dev/null; then
		MANPAGER=cat MANWIDTH=80 mp "$c" --help
		expect_rc 0 "$c --help"
		grep -qi "memprof-$c" out || fail_ "'$c --help' did not show its man page"
		MANPAGER=cat MANWIDTH=80 keep -o out2 "$MEMPROF" help "$c"
		expect_rc 0 "help $c"
		cmp -s out out2 || fail_ "'help $c' and '$c --help' differ"
	fi
done
# Every man page of a command belongs to a listed command.
for f in "$man"/memprof-*.1; do
	c=$(basename "$f" .1); c=${c#memprof-}
	grep -qx "$c" <<<"$cmds" || fail_ "man page for '$c', which is not a command"
done

# Completions: syntax, and they offer commands and options.
bash -n "$MEMPROF_SRCDIR/completions/memprof" || fail_ "bash completion has a syntax error"
bindir=$(dirname "$MEMPROF")
complete_words() {
	PATH="$bindir:$PATH" bash -c '
		. "$1"; shift
		COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 ))
		_memprof; printf "%s\n" "${COMPREPLY[@]}"' _ "$MEMPROF_SRCDIR/completions/memprof" "$@"
}
complete_words memprof pa | grep -qx parse || fail_ "bash completion does not offer 'parse'"
for c in $cmds; do
	complete_words memprof "$c" - | grep -qx -- -h || fail_ "bash completion offers no options for '$c'"
done
[ "$(complete_words memprof transform s | tr '\n' ' ')" = "speedscope " ] ||
	fail_ "bash completion does not offer transform's formats"

if command -v zsh >/dev/null; then
	zsh -n "$MEMPROF_SRCDIR/completions/_memprof" || fail_ "zsh completion has a syntax error"
fi
exit 0
