#!/bin/bash
# memprof flamegraph --diff: two versions of tests/workloads/versions.c, the
# leak fixed (3 blocks of 1024 bytes less) and twice the work (10 blocks of
# 500 bytes more). The page's tree merges both captures by location; in
# headless Chromium it draws the new capture's widths, work in red, and with
# "Widths: base" the base's, leak_bug in blue; the chart draws both captures'
# memory on one axis.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-html.sh"

mp run -q -o before.bin "$WORKLOADS/versions" 3 10
expect_rc 0 "run versions 3 10"
mp run -q -o after.bin "$WORKLOADS/versions" 0 20
expect_rc 0 "run versions 0 20"
mp flamegraph --diff before.bin after.bin
expect_rc 0 "flamegraph --diff"
expect_no_err "flamegraph --diff"
[ "$(cat out)" = "Wrote memprof-flamegraph-diff-after.html" ] || fail_ "stdout: $(cat out)"
p=memprof-flamegraph-diff-after.html
facts $p
fact 'report flamegraph mode=peak inverted=0 split=0 temporal=0 threshold=0' $p
fact 'diff base=before.bin' $p
fact 'meta capture=after.bin' $p
fact 'node <root> total=20000/25 base=18072/18' $p
fact 'node .*;main;cache total=10000/5 self=10000/5 base=10000/5' $p
fact 'node .*;main;work total=10000/20 self=10000/20 base=5000/10' $p
fact 'node .*;main;leak_bug total=0/0 self=0/0 base=3072/3' $p
# Both captures' memory over time, for the chart.
fact 'memory points=[1-9][0-9]* last_us=[0-9]+' $p
fact 'base_memory points=[1-9][0-9]* last_us=[0-9]+' $p
# The leaks: only leak_bug changed.
mp flamegraph --leaks --diff before.bin -o leaks.html after.bin
expect_rc 0 "flamegraph --leaks --diff"
facts leaks.html
fact 'report flamegraph mode=leaks .*' leaks.html
fact 'node <root> total=10000/5 base=13072/8' leaks.html
no_fact 'node .*;work .*' leaks.html
# A capture against itself: every node the same on both sides.
mp flamegraph --diff after.bin -o self.html after.bin
facts self.html
[ "$(grep -c '^node ' self.html.facts)" -gt 3 ] || fail_ "self diff: no nodes"
! grep '^node ' self.html.facts | grep -vE ' total=([0-9]+/[0-9]+) .*base=\1$' ||
	fail_ "self diff: a node differs"

# Bad uses: one-line errors, exit 2 for usage, 1 for a bad base.
mp flamegraph --diff before.bin --temporal after.bin
expect_rc 2 "--diff --temporal"
expect_err "memprof flamegraph: options '--diff' and '--temporal' cannot be combined"
mp flamegraph --diff before.bin --split-threads after.bin
expect_rc 2 "--diff --split-threads"
expect_err "memprof flamegraph: options '--diff' and '--split-threads' cannot be combined"
mp flamegraph --diff nope.bin -o nope.html after.bin
expect_rc 1 "--diff with a missing base"
expect_err "memprof: cannot open 'nope.bin': No such file or directory"
expect_one_line_err
mp table --diff before.bin after.bin
expect_rc 2 "table --diff"

# In the browser: the general checks, then the differential ones.
check check_capture.py flamegraph --shot diff --names cache,work --zoom work $p
check check_flamegraph_diff.py basic --grown work --gone leak_bug $p
exit 0
