#!/bin/bash
# Every report of a capture whose deepest stack has 200,000 frames (a capture may come from
# anywhere, and a stack's depth has no bound in the format): no reporter follows a stack by
# recursion, so none runs out of its own stack; each succeeds, and the folded lines are whole.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"

python3 - <<'PY' || framework_failure_ "capture text"
n = 200000
with open("deep.txt", "w") as f:
    f.write('HEADER format=1.0 pid=7 ppid=1 main_tid=7 mode=run start_time=2026-11-25T08:00:00.000000Z '
            'flags=symbolized hostname="h" exe="/deep" argv=["/deep"]\n'
            'THREAD index=0 tid=7 name="deep"\n'
            'MODULE id=1 base=0x400000 path="/deep" build_id=- segments=[0x1000+0x4000:r-x]\n'
            'STRING id=1 "recurse"\nSTRING id=2 "main"\nSTRING id=3 "/deep.c"\n'
            'SYMBOL ip=0x401100 module=1 offset=0x1100 frames=["recurse" "/deep.c":3:1]\n'
            'SYMBOL ip=0x401200 module=1 offset=0x1200 frames=["main" "/deep.c":9:1]\n'
            'TRACE node=1 parent=0 ip=0x401200\n')
    for i in range(2, n + 1):
        f.write('TRACE node=%d parent=%d ip=0x401100\n' % (i, i - 1))
    f.write('TICK time_us=1000 rss=4096\n'
            'ALLOC thread=0 kind=malloc addr=0x1000 size=6000 stack=%d\n'
            'ALLOC thread=0 kind=malloc addr=0x9000 size=100 stack=%d\n'
            'TICK time_us=2000 rss=8192\n'
            'FREE thread=0 kind=free addr=0x9000\n'
            'TRAILER end_time=2026-11-25T08:00:00.003000Z exit_code=0 allocs=2 frees=1 '
            'bytes_allocated=6100 duration_us=3000 end=exit\n' % (n, n // 2))
PY
"$MKCAPTURE" -f -o deep.bin deep.txt || framework_failure_ "mkcapture"

ok() { # what, memprof arguments...
	local what=$1
	shift
	mp "$@"
	expect_rc 0 "$what"
}
ok stats stats deep.bin
ok "stats --json" stats --json -o - deep.bin
ok summary summary deep.bin
ok tree tree deep.bin
ok "tree --leaks" tree --leaks deep.bin
ok parse parse --stacks deep.bin
ok diff diff deep.bin deep.bin
for view in "" --leaks --temporary-allocations; do
	ok "flamegraph $view" flamegraph -f $view -o f.html deep.bin
	ok "table $view" table -f $view -o t.html deep.bin
done
ok "flamegraph --temporal" flamegraph -f --temporal -o f.html deep.bin
for format in pprof speedscope csv; do
	ok "transform $format" transform -f -o out.$format $format deep.bin
done
# At the peak: main and 99,999 frames of recurse (100 bytes), then main and 199,999 (6000).
for split in "" --split-threads; do
	ok "transform folded $split" transform -f $split -o folded.txt folded deep.bin
	[ "$(wc -l < folded.txt)" = 2 ] || fail_ "folded $split: $(wc -l < folded.txt) lines"
	n=0
	for want in "99999 100" "199999 6000"; do
		n=$((n + 1))
		line=$(sed -n ${n}p folded.txt)
		got="$(echo "$line" | tr ';' '\n' | grep -c '^recurse') ${line##* }"
		[ "$got" = "$want" ] || fail_ "folded $split, line $n: $got (frames of recurse, bytes), expected $want"
	done
done
exit 0
