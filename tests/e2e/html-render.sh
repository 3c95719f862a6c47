#!/bin/bash
# The template expansion of share/templates/README.md: the reference renderer
# against its golden fixture, every error it must report, and the shipped
# templates (self-contained, no markup from text).
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
command -v python3 >/dev/null 2>&1 || skip_ "python3 is not installed"
export PYTHONDONTWRITEBYTECODE=1

timeout -k 10 120 python3 "$MEMPROF_SRCDIR/tests/browser/check_render.py" \
	"$TESTDATA/render" "$MEMPROF_SRCDIR/share/templates" "$T" || fail_ "check_render.py"
exit 0
