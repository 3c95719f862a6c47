#!/bin/bash
# The flame graph page with --split-threads (thread filter, merged view,
# history) and with --inverted.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-html.sh"

gen split.json --report flamegraph --split-threads
page flamegraph split.json split.html
gen inv.json --report flamegraph --inverted
page flamegraph inv.json inv.html
check check_flamegraph.py threads split.html split.json inv.html inv.json
exit 0
