#!/bin/bash
# memprof serve with curl, against a service whose tracker was preloaded paused: every
# endpoint (start with settings, snapshot, stop, status, report, flamegraph with
# ?leaks=1, table, stats as text and JSON), 409 for a report while recording, the
# errors (400, 404, 405), one log line per request, the process's end ending the server;
# then who may ask: another user is refused (403), and so is a tracker of another user;
# a listen address that is not loopback needs --token-file, whose token a request must
# carry (401 without it or with a wrong one).
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-attachee.sh"
command -v curl > /dev/null || skip_ "curl is not installed"

SERVE_PID=
# serve [OPTIONS...]: memprof serve OPTIONS TARGET_PID in the background, $URL its address.
serve() {
	rm -f url serve.err
	"$MEMPROF" serve "$@" "$TARGET_PID" > url 2> serve.err &
	SERVE_PID=$!
	wait_until 60 eval '[ -s url ] || ! kill -0 $SERVE_PID 2> /dev/null'
	URL=$(cat url)
	[ -n "$URL" ] || fail_ "memprof serve did not start: $(cat serve.err)"
}
NREQ=0
# req METHOD PATH [CURL ARGS...]: the status code in $code, the body in ./body, headers in ./headers.
req() {
	local m=$1 p=$2
	shift 2
	code=$(curl -s -X "$m" -D headers -o body -w '%{http_code}' "$@" "$URL$p")
	NREQ=$((NREQ + 1))
}
expect_code() { [ "$code" = "$1" ] || fail_ "$2: HTTP $code, expected $1: $(head -c 300 body)"; }

start_target env MEMPROF_PAUSED=1 MEMPROF_OUTPUT="$T/svc.%p.%n.bin" LD_PRELOAD="$TRACKER_LIB"
serve --prefix /jobs/7/profiler
case "$URL" in http://127.0.0.1:[0-9]*/jobs/7/profiler/) ;; *) fail_ "the URL is '$URL'" ;; esac

req GET status
expect_code 200 "status"
grep -q '"status":"paused","message":"paused, 0 captures written"' body || fail_ "status: $(cat body)"
req GET report
expect_code 404 "report before any capture"
grep -q 'no capture yet' body || fail_ "report before any capture: $(cat body)"

req POST 'start?memory_interval_ms=5&max_depth=32'
expect_code 200 "start"
D=$T/svc.$TARGET_PID.1.bin
grep -qF "\"status\":\"recording\",\"message\":\"recording capture 1 into '$D'\"" body || fail_ "start: $(cat body)"
req POST start
expect_code 409 "a second start"
grep -q 'already recording' body || fail_ "a second start: $(cat body)"
send_cmd "alloc 10 1000"
for what in report flamegraph table stats; do
	req GET "$what"
	expect_code 409 "$what while recording"
	grep -q 'a capture is recording.*POST /jobs/7/profiler/stop first' body || fail_ "$what while recording: $(cat body)"
done
req POST snapshot
expect_code 200 "snapshot"
grep -qF "snapshot 1 written to '$D.snap.1'" body || fail_ "snapshot: $(cat body)"
send_cmd "alloc 2 2222"
req POST stop
expect_code 200 "stop"
grep -qF "\"status\":\"stopped\",\"message\":\"stopped: '$D' is complete\"" body || fail_ "stop: $(cat body)"
req POST stop
expect_code 409 "a second stop"

# The capture: the file itself, complete, with the start's settings.
req GET report
expect_code 200 "report"
cmp -s body "$D" || fail_ "/report is not '$D'"
grep -qi '^content-type: application/octet-stream' headers || fail_ "report's type: $(cat headers)"
grep -qi "^content-disposition: inline; filename=\"svc.$TARGET_PID.1.bin\"" headers || fail_ "report's name: $(cat headers)"
"$MEMPROF" parse body > p || fail_ "the capture served cannot be read"
grep -q '^HEADER .* max_depth=32 interval_ms=5 ' p || fail_ "the start's settings: $(grep ^HEADER p)"
[ "$("$MEMPROF" parse body | grep -c '^ALLOC .* size=\(1000\|2222\) ')" = 12 ] || fail_ "the capture's allocations"
req GET 'flamegraph?leaks=1'
expect_code 200 "flamegraph"
grep -qi '^content-type: text/html' headers || fail_ "flamegraph's type"
grep -q '"report":"flamegraph","mode":"leaks"' body || fail_ "the flame graph is not of the leaks"
req GET 'flamegraph?leaks=0&inverted=1'
expect_code 200 "flamegraph, inverted"
grep -q '"mode":"peak","temporary_threshold":0,"inverted":true' body || fail_ "the flame graph is not the inverted peak"
req GET table
expect_code 200 "table"
grep -q '"report":"table"' body || fail_ "/table is not a table"
req GET stats
expect_code 200 "stats"
grep -q '^Total allocations since attach:\|^Total allocations:' body || fail_ "stats: $(head -12 body)"
grep -qF "Capture: $D" body || fail_ "stats is not of '$D': $(head -3 body)"
req GET 'stats?format=json'
expect_code 200 "stats as JSON"
grep -qi '^content-type: application/json' headers || fail_ "stats' JSON type"
python3 -c 'import json, sys; d = json.load(open("body")); sys.exit(d["total_num_allocations"] < 12)' ||
	fail_ "stats as JSON: $(head -c 300 body)"

# The asker's errors.
req GET 'flamegraph?bogus=1'
expect_code 400 "an unknown reporter parameter"
grep -q "unknown parameter 'bogus' for flamegraph" body || fail_ "unknown parameter: $(cat body)"
req GET 'flamegraph?temporary_allocation_threshold=x'
expect_code 400 "a bad reporter value"
grep -q "invalid value 'x' for --temporary-allocation-threshold" body || fail_ "bad value: $(cat body)"
req GET 'stats?format=xml'
expect_code 400 "a bad format"
req POST 'start?max_depth=0'
expect_code 400 "start with max_depth=0"
grep -q "invalid value '0' for max_depth (1 to 1024)" body || fail_ "max_depth=0: $(cat body)"
req POST 'start?nothing=1'
expect_code 400 "start with an unknown parameter"
req GET start
expect_code 405 "GET start"
grep -qi '^allow: POST' headers || fail_ "405 without Allow: POST"
req GET nothing
expect_code 404 "an unknown endpoint"
req GET ../status
expect_code 404 "outside the prefix"

# One log line per request, and the server ends with the process.
send_cmd "exit 0"
wait "$TARGET_PID"
wait_until 60 eval '! kill -0 $SERVE_PID 2> /dev/null'
! kill -0 $SERVE_PID 2> /dev/null || fail_ "memprof serve outlived the process"
wait $SERVE_PID || fail_ "memprof serve exited $? at the process's end"
n=$(grep -cE '^memprof serve: 127\.0\.0\.1:[0-9]+ "(GET|POST) /[^"]*" [0-9]{3} [0-9]+ ms$' serve.err)
[ "$n" = "$NREQ" ] || { cat serve.err >&2; fail_ "$n log lines for $NREQ requests"; }
grep -q '"GET /jobs/7/profiler/flamegraph" 200 ' serve.err || fail_ "the log does not name the request"
grep -q "has ended" serve.err || fail_ "no word of the process's end"

# Not loopback: --token-file is required, and its token checked (constant-time compare).
start_target env MEMPROF_PAUSED=1 MEMPROF_OUTPUT="$T/tok.%p.bin" LD_PRELOAD="$TRACKER_LIB"
mp serve --listen 0.0.0.0:0 "$TARGET_PID"
expect_rc 2 "a listen address that is not loopback, without a token"
expect_err "'0.0.0.0:0' is not a loopback address: listening there needs --token-file"
printf 'a-token-of-32-characters-exactly\n' > token
chmod 644 token
mp serve --listen 0.0.0.0:0 --token-file token "$TARGET_PID"
expect_rc 1 "a token file others may read"
expect_err "may be read by other users"
chmod 600 token
serve --listen 0.0.0.0:0 --token-file token
URL=${URL/0.0.0.0/127.0.0.1}
req GET status
expect_code 401 "no token"
grep -qi '^www-authenticate: Bearer' headers || fail_ "401 without WWW-Authenticate"
req GET status -H 'Authorization: Bearer a-token-of-32-characters-exactlY'
expect_code 401 "a wrong token"
grep -q 'not the right one' body || fail_ "a wrong token: $(cat body)"
req GET status -H 'Authorization: Bearer a-token'
expect_code 401 "a short token"
req GET status -H 'Authorization: Bearer a-token-of-32-characters-exactly'
expect_code 200 "the token"
kill $SERVE_PID
wait $SERVE_PID

# Another user: refused by the server (403), and the server of another user's process.
if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null; then
	ASUSER=(setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all --bounding-set=-all)
	serve
	# (curl's output through a pipe: the scratch directory is not nobody's to write in.)
	"${ASUSER[@]}" curl -s -w '\n%{http_code}' "${URL}status" > reply
	code=$(tail -1 reply)
	head -n -1 reply > body
	[ "$code" = 403 ] || fail_ "a request of another user: HTTP $code: $(cat body)"
	grep -q 'refused: the request comes from user [0-9]*; memprof serve answers user 0' body ||
		fail_ "another user: $(cat body)"
	req GET status
	expect_code 200 "root's request"
	kill $SERVE_PID
	wait $SERVE_PID
	"${ASUSER[@]}" "$MEMPROF" serve "$TARGET_PID" > out 2> err
	rc=$?
	expect_rc 1 "memprof serve of another user's process"
	expect_one_line_err
	expect_err "only that user or root may control it"
fi
send_cmd "exit 0"
wait "$TARGET_PID"
exit 0
