#!/bin/bash
# memprof parse --stacks: each allocation's frames, from the SYMBOL record its ip had when its
# trace node was made, whatever malloc's fresh memory holds: a module's "unloaded" mark was once
# read uninitialised, and glibc's MALLOC_PERTURB_ changed the frames printed.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"

# parse_stacks OUT CAPTURE: parse -s under three fillings of fresh memory, which must agree.
parse_stacks() {
	for fill in 0 165 90; do
		MALLOC_PERTURB_=$fill "$MEMPROF" parse -s "$2" > "$1.$fill" 2> err || fail_ "parse -s $2"
		expect_no_err "parse -s $2"
	done
	cmp -s "$1.0" "$1.165" && cmp -s "$1.0" "$1.90" ||
		{ diff -u "$1.0" "$1.165" | head -20 >&2; fail_ "parse -s $2 depends on MALLOC_PERTURB_"; }
	mv "$1.0" "$1"
}

# Every format version of the golden capture (tests/data/basic.txt): the same stacks (the
# captures of formats 1.0 and 2.0 have fewer allocations: basic.txt had no "Format 3.0" part).
for f in basic raw basic-v3 raw-v3 basic-v2 raw-v2 basic-v1; do
	parse_stacks "$f.out" "$TESTDATA/$f.mprof"
	sed -n 's/.* stack=\([0-9]*\) frames=/\1 /p' "$f.out" | sort | uniq -c > "$f.frames"
	case $f in
	raw | *-v3) match_diff basic.frames "$f.frames" ;;
	raw-v2 | basic-v1) match_diff basic-v2.frames "$f.frames" ;;
	esac
done
cat > expected <<'END'
      1 0 []
      1 1 ["libc.so.6+0x29d90"]
      5 2 ["main","libc.so.6+0x29d90"]
      3 3 ["make_node","main","main","libc.so.6+0x29d90"]
      1 4 ["std::vector<int>::push_back(int const&)","main","libc.so.6+0x29d90"]
      2 6 ["make_node","main","<stack truncated>"]
END
match_diff expected basic-v2.frames
cat > expected <<'END'
      1 0 []
      1 1 ["libc.so.6+0x29d90"]
      5 2 ["main","libc.so.6+0x29d90"]
     43 3 ["make_node","main","main","libc.so.6+0x29d90"]
    271 4 ["std::vector<int>::push_back(int const&)","main","libc.so.6+0x29d90"]
      2 6 ["make_node","main","<stack truncated>"]
END
match_diff expected basic.frames

# A library unloaded, another loaded at its place: the same ip has the first one's symbol in
# the nodes made before, the second one's in the nodes made after (its SYMBOL record follows).
"$MKCAPTURE" -f -o reuse.mprof "$TESTDATA/plugins.txt" || framework_failure_ "mkcapture"
parse_stacks reuse.out reuse.mprof
grep '^ALLOC' reuse.out | sed 's/.* size=//' > got
cat > expected <<'END'
10 stack=1 frames=["old_alloc"]
20 stack=2 frames=["new_alloc"]
30 stack=1 frames=["old_alloc"]
END
match_diff expected got
exit 0
