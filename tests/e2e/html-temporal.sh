#!/bin/bash
# The temporal flame graph: a time window chosen by keyboard, sliders and
# dragging on the chart recomputes the graph (peak inside it, or leaks).
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-html.sh"

gen peak.json --report flamegraph --temporal --buckets 100
page flamegraph peak.json peak.html
gen leaks.json --report flamegraph --temporal --mode leaks --buckets 100
page flamegraph leaks.json leaks.html
check check_flamegraph.py temporal peak.html peak.json leaks.html leaks.json
exit 0
