#!/bin/bash
# The HTML pages of a process tree in a browser: a shell and its three
# children (tests/workloads/family.c), their flame graph and table, with the
# process selector and the apart/merged toggle (tests/browser/check_processes.py).
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-html.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-family.sh"

family_run s.bin -q
expect_rc 0 "run --follow-fork bash family.sh"
mp flamegraph -o fg.html --children s.bin
expect_rc 0 "flamegraph --children"
mp table -o tb.html --children s.bin
expect_rc 0 "table --children"
python3 "$BROWSER_DIR/report_data.py" fg.html --json fg.json > /dev/null || fail_ "report_data.py fg.html"
python3 "$BROWSER_DIR/report_data.py" tb.html --json tb.json > /dev/null || fail_ "report_data.py tb.html"
check check_processes.py flamegraph fg.html fg.json
check check_processes.py table tb.html tb.json
exit 0
