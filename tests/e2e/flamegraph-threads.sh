#!/bin/bash
# memprof flamegraph on captures of the threads, cxx and dlopens workloads:
# split threads (one subtree per thread, the thread view in the browser),
# demangled C++ names, a library unloaded before the end.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-html.sh"

# Four workers of 250 x 64 bytes, all live at the peak; 4321 bytes in main.
mp run -q -o t.bin "$WORKLOADS/threads"
expect_rc 0 "run threads"
mp flamegraph --split-threads t.bin
expect_rc 0 "flamegraph --split-threads"
p=memprof-flamegraph-t.html
facts $p
fact 'report flamegraph mode=peak inverted=0 split=1 temporal=0 threshold=0' $p
for i in 0 1 2 3; do
	fact "node worker-$i \\(tid [0-9]+\\);.*;worker;worker_alloc total=16000/250 self=16000/250" $p
	fact "node worker-$i \\(tid [0-9]+\\);[^;]+ total=16000/250 self=0/0" $p
done
fact 'node threads \(tid [0-9]+\);.*;main total=4321/1 self=4321/1' $p
[ "$(grep -c '^node worker-.*;worker_alloc total' $p.facts)" -eq 4 ] || fail_ "worker_alloc in other threads"
# Thread 1 is the first worker; the merged view adds the four up.
check check_capture.py flamegraph --shot threads-worker --thread 1 --names worker_alloc,worker \
	--search alloc $p
check check_capture.py flamegraph --shot threads-merged --names worker_alloc,main --zoom worker_alloc $p
mp flamegraph -o merged.html t.bin
facts merged.html
fact 'report flamegraph mode=peak inverted=0 split=0 .*' merged.html
fact '.*;worker;worker_alloc total=64000/1000 self=64000/1000' merged.html

# C++: operator new under ns::Widget<int>::grow(), demangled; the vector's
# last two buffers (4096 and 8192 bytes) are live together at the peak.
mp run -q -o x.bin "$WORKLOADS/cxx"
expect_rc 0 "run cxx"
mp flamegraph -o x.html x.bin
expect_rc 0 "flamegraph cxx"
facts x.html
fact '.*;main;ns::Widget<int>::grow\(\);operator new(\[\])?\(unsigned long\) total=400/1 self=400/1' x.html
fact '.*;main;ns::Widget<int>::grow\(\);std::vector<long, std::allocator<long> >::push_back\(long const&\) total=12288/2 self=0/0' x.html
# The boxes name it without its template arguments (the data and the tooltip have them).
fact 'location function=ns::Widget<int>::grow\(\) short=ns::Widget<…>::grow\(\) .*' x.html
check check_capture.py flamegraph --shot cxx --names 'ns::Widget<…>::grow()' \
	--zoom 'ns::Widget<…>::grow()' --search widget x.html

# dlopen: dlwork_alloc's kept block, from a library unloaded since, still named.
mp run -q -o d.bin "$WORKLOADS/dlopens" "$WORKLOADS/.libs/libdlwork.so"
expect_rc 0 "run dlopens"
mp flamegraph --leaks -o d.html d.bin
expect_rc 0 "flamegraph dlopens"
facts d.html
fact '.*;main;dlwork_alloc total=4444/1 self=4444/1' d.html
fact '.*;__libc_start_call_main;main total=5555/1 self=5555/1' d.html
check check_capture.py flamegraph --shot dlopen-leaks --names dlwork_alloc,main --zoom dlwork_alloc d.html
exit 0
