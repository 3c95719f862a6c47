#!/bin/bash
# memprof flamegraph on a capture of tests/workloads/allocs: peak, leaks,
# temporary and inverted, with the workload's exact numbers in the embedded
# data, and each page in headless Chromium (frames drawn, zoom, search).
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-html.sh"

mp run -q -o a.bin "$WORKLOADS/allocs"
expect_rc 0 "run allocs"
CALL='_start;__libc_start_main_impl;__libc_start_call_main'

# Peak (see tests/workloads/allocs.c): the 3-page mapping, make_kept's ten
# blocks and the calloc of main are live when mmap returns.
mp flamegraph a.bin
expect_rc 0 "flamegraph"
expect_no_err
[ "$(cat out)" = "Wrote memprof-flamegraph-a.html" ] || fail_ "stdout: $(cat out)"
facts memprof-flamegraph-a.html
fact 'report flamegraph mode=peak inverted=0 split=0 temporal=0 threshold=0' memprof-flamegraph-a.html
fact 'node <root> total=23333/12' memprof-flamegraph-a.html
fact "node $CALL;main;mapping total=12288/1 self=12288/1" memprof-flamegraph-a.html
fact "node $CALL;main;make_kept total=10045/10 self=10045/10" memprof-flamegraph-a.html
fact "node $CALL;main total=1000/1 self=1000/1" memprof-flamegraph-a.html
fact 'meta peak_bytes=23333' memprof-flamegraph-a.html
fact 'meta total_allocations=1023' memprof-flamegraph-a.html
# 10045 + 32000 + 10+100+1000 + 1000 + 4096+128+256+4096+4096 + 200 + 12288 + 17 + 64
fact 'meta total_bytes=69396' memprof-flamegraph-a.html
fact 'meta leaked_bytes=11062' memprof-flamegraph-a.html
fact 'meta leaked_blocks=12' memprof-flamegraph-a.html
fact 'meta exit=exited with status 0' memprof-flamegraph-a.html
fact 'meta capture=a.bin' memprof-flamegraph-a.html
fact "meta argv=$WORKLOADS/allocs" memprof-flamegraph-a.html
fact 'meta since_attach=false' memprof-flamegraph-a.html
fact 'meta unknown_frees=0' memprof-flamegraph-a.html
fact 'meta pid=[0-9]+' memprof-flamegraph-a.html
fact 'meta start=20[0-9]{2}-[01][0-9]-[0-3][0-9]T[0-9:]{8}\.[0-9]{3}Z' memprof-flamegraph-a.html
no_fact '.*churn.*' memprof-flamegraph-a.html
check check_capture.py flamegraph --shot allocs-peak --names main,mapping,make_kept \
	--zoom make_kept --search mapping memprof-flamegraph-a.html

# Leaks: make_kept's 10 blocks (1000..1009 bytes), the calloc, the strdup.
mp flamegraph --leaks -o leaks.html a.bin
expect_rc 0 "flamegraph --leaks"
facts leaks.html
fact 'report flamegraph mode=leaks .*' leaks.html
fact 'node <root> total=11062/12' leaks.html
fact "node $CALL;main;make_kept total=10045/10 self=10045/10" leaks.html
fact "node $CALL;main total=1000/1 self=1000/1" leaks.html
fact "node $CALL;main;copy;[_A-Za-z]*strdup total=17/1 self=17/1" leaks.html
no_fact '.*mapping.*' leaks.html
check check_capture.py flamegraph --shot allocs-leaks --names make_kept,main \
	--zoom main --search kept leaks.html

# Temporary: everything freed right after (threshold 1 and 0 alike here).
for t in "--temporary-allocations:1" "--temporary-allocation-threshold 0:0"; do
	mp flamegraph -f ${t%:*} -o temp.html a.bin
	expect_rc 0 "flamegraph ${t%:*}"
	facts temp.html
	fact "report flamegraph mode=temporary inverted=0 split=0 temporal=0 threshold=${t#*:}" temp.html
	# 32000 + 12288 + 4096+128+256+4096+4096 + 1110 + 200 + 64 in 1011
	fact 'node <root> total=58334/1011' temp.html
	fact "node $CALL;main;churn total=32000/1000 self=32000/1000" temp.html
	fact "node $CALL;main;mapping total=12288/1 self=12288/1" temp.html
	fact "node $CALL;main;zero_realloc total=64/1 self=64/1" temp.html
	no_fact '.*make_kept.*' temp.html
done
check check_capture.py flamegraph --shot allocs-temporary --names churn,aligned,grow_chain \
	--zoom churn --search grow temp.html

# Inverted: the allocating functions at the root, their callers below.
mp flamegraph --inverted -o inv.html a.bin
expect_rc 0 "flamegraph --inverted"
facts inv.html
fact 'report flamegraph mode=peak inverted=1 .*' inv.html
fact 'node <root> total=23333/12' inv.html
fact 'node make_kept total=10045/10 self=0/0' inv.html
fact 'node make_kept;main total=10045/10 self=0/0' inv.html
fact 'node mapping total=12288/1 self=0/0' inv.html
fact 'node main total=1000/1 self=0/0' inv.html
fact 'node main;__libc_start_call_main;__libc_start_main_impl;_start total=1000/1 self=1000/1' inv.html
check check_capture.py flamegraph --shot allocs-inverted --names make_kept,mapping,main \
	--zoom mapping --search start inv.html

# --no-mmap leaves the mapping out: the peak is then posix_memalign's block
# with make_kept's and the calloc.
mp flamegraph --no-mmap -o nommap.html a.bin
expect_rc 0 "flamegraph --no-mmap"
facts nommap.html
fact 'node <root> total=15141/12' nommap.html
fact "node $CALL;main;aligned total=4096/1 self=4096/1" nommap.html
no_fact '.*mapping.*' nommap.html
exit 0
