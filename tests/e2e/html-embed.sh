#!/bin/bash
# The reports inside iframes (one sandboxed, without storage) with the dark
# colour scheme preferred: no errors, dark by default, zoom and history work.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-html.sh"

gen fg.json --report flamegraph
page flamegraph fg.json fg.html
gen table.json --report table
page table table.json table.html
check check_embed.py basic fg.html fg.json table.html table.json
exit 0
