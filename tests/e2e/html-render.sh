#!/bin/bash
# The template expansion of share/templates/README.md: the reference renderer
# and the C one (lib/report/html-template through tests/tools/htmlrender)
# against the golden fixture, every error they must report, and the shipped
# templates (self-contained, no markup from text); the C one gives render.py's
# bytes.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
command -v python3 >/dev/null 2>&1 || skip_ "python3 is not installed"
export PYTHONDONTWRITEBYTECODE=1

mkdir py c
timeout -k 10 120 python3 "$MEMPROF_SRCDIR/tests/browser/check_render.py" \
	"$TESTDATA/render" "$MEMPROF_SRCDIR/share/templates" "$T/py" || fail_ "check_render.py"
timeout -k 10 120 python3 "$MEMPROF_SRCDIR/tests/browser/check_render.py" --renderer "$HTMLRENDER" \
	"$TESTDATA/render" "$MEMPROF_SRCDIR/share/templates" "$T/c" || fail_ "check_render.py --renderer htmlrender"
# The golden fixture, byte for byte, once more without Python in between.
"$HTMLRENDER" "$TESTDATA/render/page.html" "$TESTDATA/render/data.json" fixture.html || fail_ "htmlrender"
cmp fixture.html "$TESTDATA/render/expected.html" || fail_ "the C renderer differs from expected.html"
exit 0
