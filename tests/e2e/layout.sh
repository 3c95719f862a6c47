#!/bin/bash
# The source layout: each lib/ folder includes only what its README allows, no
# module includes itself round a circle, no source file is over 800 lines.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"

python3 "$MEMPROF_SRCDIR/tools/layout.py" "$MEMPROF_SRCDIR" > out 2>&1 ||
	{ sed 's/^/  /' out >&2; fail_ "tools/layout.py found problems"; }
