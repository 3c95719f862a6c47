#!/bin/bash
# summary on a terminal: colours (never with NO_COLOR, never in a pipe), the
# default number of rows fits the terminal, the table fits its width.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-reports.sh"

# Thirty functions with a long source path.
file=/src/a/rather/long/path/to/the/sources/of/many.c
{
	echo 'HEADER format=1.0 pid=1 main_tid=1 mode=run flags=symbolized argv=["/bin/many"]'
	echo 'MODULE id=1 base=0x400000 path="/bin/many" build_id=- segments=[0x1000+0x10000:r-x]'
	echo "STRING id=1 \"$file\""
	for i in $(seq 1 30); do echo "STRING id=$((i + 1)) \"fn$i\""; done
	for i in $(seq 1 30); do
		printf 'SYMBOL ip=0x%x module=1 offset=0x%x frames=[#%d #1:%d:0]\n' \
			$((0x401000 + 16 * i)) $((0x1000 + 16 * i)) $((i + 1)) "$i"
		printf 'TRACE node=%d parent=0 ip=0x%x\n' "$i" $((0x401000 + 16 * i))
		printf 'ALLOC thread=0 kind=malloc addr=0x%x size=%d stack=%d\n' $((0x10000 * i)) $((1000 * i)) "$i"
	done
} | mkcap many.mprof

# Not a terminal: 24 lines assumed, so 19 rows; nothing coloured or cut.
mp summary many.mprof
expect_rc 0 "summary in a pipe"
[ "$(grep -c '^│ fn' out)" -eq 19 ] || fail_ "not 19 rows in a pipe"
[ "$(tail -1 out)" = "11 more locations (-r 30 shows them all)" ] || fail_ "footer: $(tail -1 out)"
grep -q $'\033' out && fail_ "colours in a pipe"
expect_out "│ fn30 at $file │"

command -v script >/dev/null || skip_ "script (util-linux) is needed for a terminal"
# tty ROWS COLS [ENV...]: run summary on a terminal of that size; output in ./out without \r.
tty() {
	local rows=$1 cols=$2
	shift 2
	env -u NO_COLOR TERM=xterm "$@" script -qec \
		"stty rows $rows cols $cols; exec '$MEMPROF' summary many.mprof" /dev/null > raw 2>&1
	rc=$?
	tr -d '\r' < raw > out
}

tty 16 110
expect_rc 0 "summary on a terminal"
[ "$(grep -c '^│ ' out)" -eq 11 ] || fail_ "not 16 - 5 = 11 rows on a 16-line terminal"
grep -q $'\033\\[35mfn30\033\\[0m at ' out || fail_ "no magenta function on a terminal"
grep -q $'\033\\[1m<Total Memory>\033\\[0m' out || fail_ "no bold header on a terminal"
# fn30 holds 30000 of 465000 bytes: 6.45 %, green.
grep -q $'\033\\[32m29.297 KiB\033\\[0m' out || fail_ "no green size for fn30 on a terminal"
# Every line of the table is exactly as wide as the terminal; locations are cut.
python3 - <<'PY' || fail_ "the table does not fit 110 columns"
import re, sys
lines = [re.sub(r"\x1b\[[0-9;]*m", "", l) for l in open("out", encoding="utf-8").read().splitlines()]
table = [l for l in lines if l[:1] in "┏┃┡│└"]
widths = {len(l) for l in table}
if widths != {110}:
    sys.exit(f"widths {widths}")
if not all("…" in l for l in table if l.startswith("│ fn")):
    sys.exit("a long location was not cut")
PY

tty 12 200
[ "$(grep -c '^│ ' out)" -eq 10 ] || fail_ "not at least 10 rows on a 12-line terminal"
tty 60 200
[ "$(grep -c '^│ ' out)" -eq 30 ] || fail_ "not all 30 rows on a 60-line terminal"
expect_not_out "more location"

tty 16 200 NO_COLOR=1
expect_rc 0 "summary with NO_COLOR"
grep -q $'\033' out && fail_ "colours despite NO_COLOR"
tty 16 200 TERM=dumb
grep -q $'\033' out && fail_ "colours on a dumb terminal"
exit 0
