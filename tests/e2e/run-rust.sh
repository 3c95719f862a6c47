#!/bin/bash
# A Rust program: its functions are named as Rust names them (both manglings demangled, no
# hashes), and its allocations, in threads too, are counted exactly.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"

command -v rustc > /dev/null || skip_ "no rustc to build a Rust program"
cat > keep.rs <<'RS'
use std::thread;
#[inline(never)]
fn make_blocks(t: usize) -> Vec<Vec<u8>> {
    let mut kept = Vec::with_capacity(500);
    for i in 0..500 {
        kept.push(vec![t as u8; 5000 + t * 1000 + i % 3]);
    }
    kept
}
fn main() {
    let workers: Vec<_> = (0..3).map(|t| thread::spawn(move || make_blocks(t).len())).collect();
    let made: usize = workers.into_iter().map(|w| w.join().unwrap()).sum();
    let leak = Box::leak(std::hint::black_box(vec![7u8; 4321]).into_boxed_slice());
    println!("{} {}", made, leak.len());
}
RS
keep -n rustc rustc -g -C opt-level=1 -o keep keep.rs
[ "$rc" -eq 0 ] || framework_failure_ "rustc: $(cat rustc.err)"
mp run -f -o k.bin ./keep
expect_rc 0 "memprof run"
[ "$(cat out)" = "1500 4321" ] || fail_ "the program's output: $(cat out)"
"$MEMPROF" parse --stacks k.bin > p || fail_ "parse"
# Each thread's 500 blocks, from make_blocks by its demangled path (v0 or legacy, whichever
# this rustc uses), and the leaked box from main.
for t in 0 1 2; do
	n=$(grep -cE "^ALLOC .*size=$((500 + t * 100))[012] .*\"keep::make_blocks\"" p)
	[ "$n" = 500 ] || fail_ "thread $t: $n blocks from keep::make_blocks, expected 500"
done
expect_count 1 '^ALLOC .*size=4321 .*"keep::main"' p
# No name left mangled, nor with legacy mangling's hash.
if grep -E '^SYMBOL ' p | grep -qE '"_R[A-Za-z0-9_]+"|::h[0-9a-f]{16}"|\$LT\$|\$u7b\$'; then
	fail_ "mangled names left: $(grep -E '^SYMBOL ' p | grep -E '"_R|::h[0-9a-f]{16}"|\$LT\$|\$u7b\$' | head -3)"
fi
# The leaked box is never freed; every block of make_blocks is, with its vector.
b=$(sed -n 's/^ALLOC .* block=\([0-9]*\) size=4321 .*/\1/p' p)
! grep -q "^FREE .* block=$b\$" p || fail_ "the leaked box was freed"
[ "$(grep -c '^FREE ' p)" -ge 1500 ] || fail_ "only $(grep -c '^FREE ' p) frees"
exit 0
