#!/bin/bash
# C++: operator new in the stacks, demangled names.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"

mp run -q -o x.bin "$WORKLOADS/cxx"
expect_rc 0 "run cxx"
expect_out "cxx done"
"$MEMPROF" parse --stacks x.bin > p || fail_ "parse"
# new int[100]: libstdc++'s operator new[] tail-calls operator new, so either is innermost.
expect_count 1 '^ALLOC .*size=400 .*frames=\["operator new(\[\])?\(unsigned long\)","ns::Widget<int>::grow\(\)","main"' p
# The vector doubles from 1 to 1024 longs: 11 allocations through operator new, under grow().
expect_count 11 '^ALLOC .*frames=\["operator new\(unsigned long\)","std::[^"]*",.*"ns::Widget<int>::grow\(\)","main"' p
expect_count 1 '^ALLOC .*size=101 .*"make_string' p
exit 0
