# Sourced by the html-*.sh and the HTML reporters' tests after init.sh: the
# browser test tools (tests/browser/). Skips when python3 is missing; the
# browser checks skip when chromium is (after the checks before them ran).
command -v python3 >/dev/null 2>&1 || skip_ "python3 is not installed"
python3 -c 'import sys; sys.exit(sys.version_info < (3, 7))' || skip_ "python3 is older than 3.7"
CHROMIUM=${CHROMIUM:-$(command -v chromium || true)}
export CHROMIUM
# Keep the source tree clean (and usable read-only, as in distcheck).
export PYTHONDONTWRITEBYTECODE=1
BROWSER_DIR=$MEMPROF_SRCDIR/tests/browser
TEMPLATES=$MEMPROF_SRCDIR/share/templates

# gen OUT.json ARGS...: report data from the deterministic generator.
gen() {
	out=$1; shift
	python3 "$BROWSER_DIR/gen_data.py" "$@" -o "$out" || framework_failure_ "gen_data.py $* failed"
}
# page TEMPLATE DATA.json OUT.html: expand a template with the reference renderer.
page() {
	python3 "$BROWSER_DIR/render.py" "$TEMPLATES/$1.html" "$2" "$3" || fail_ "render.py $1 $2 failed"
}
# check SCRIPT ARGS...: a browser check under a time limit; its screenshots are
# kept in ./artifacts and copied to the build tree's tests/artifacts/<test>/.
check() {
	[ -n "$CHROMIUM" ] && [ -x "$CHROMIUM" ] || skip_ "chromium is not installed (Debian package 'chromium')"
	script=$1; shift
	mkdir -p artifacts
	timeout -k 10 300 python3 "$BROWSER_DIR/$script" --artifacts artifacts "$@"
	st=$?
	dest=$MEMPROF_BUILDDIR/tests/artifacts/$ME_
	mkdir -p "$dest" && cp artifacts/*.png "$dest"/ 2>/dev/null
	[ $st -eq 0 ] || { tail -20 artifacts/chromium.log | sed 's/^/  chromium: /' >&2; fail_ "$script $1 (status $st)"; }
}
# facts PAGE.html: the data embedded in a report page as lines, in PAGE.html.facts
# (tests/browser/report_data.py says what they are).
facts() {
	python3 "$BROWSER_DIR/report_data.py" "$1" > "$1.facts" || fail_ "report_data.py $1"
}
# fact REGEX PAGE.html: a line of the page's facts matches the extended regex, whole.
fact() {
	grep -qxE -- "$1" "$2.facts" || { sed 's/^/  fact: /' "$2.facts" >&2; fail_ "$2: no fact matches '$1'"; }
}
no_fact() {
	! grep -qxE -- "$1" "$2.facts" || fail_ "$2: a fact matches '$1'"
}
