#!/bin/bash
# The flame graph page in headless Chromium: frames drawn, zoom and history,
# search totals, tooltips, orientation, theme, statistics, memory CSV, and the
# hostile symbol name shown as text.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-html.sh"

gen fg.json --report flamegraph --since-attach --stacks 400
page flamegraph fg.json fg.html
check check_flamegraph.py basic fg.html fg.json
exit 0
