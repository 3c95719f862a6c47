#!/bin/bash
# The table page: sorting by every column, filtering, virtual scrolling,
# CSV download, the hostile symbol name as text, theme and statistics.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-html.sh"

gen split.json --report table --split-threads --stacks 3000
page table split.json split.html
gen leaks.json --report table --mode leaks
page table leaks.json leaks.html
check check_table.py basic split.html split.json leaks.html leaks.json
exit 0
