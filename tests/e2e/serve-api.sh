#!/bin/bash
# memprof serve for a process whose tracker was loaded by the in-process API (the Python
# package: dlopen, no LD_PRELOAD): its last capture is served, and a start through the
# control socket puts the hooks in again (GOT patching) and records the program's
# allocations into /tmp/memprof-UID/, which a stop makes complete.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-python.sh"
command -v curl > /dev/null || skip_ "curl is not installed"
export PYTHONPATH=$MEMPROF_BUILDDIR/python
unset MEMPROF_LIBDIR LD_PRELOAD
py=${pythons# }
py=${py%% *}

cat > job.py <<'PY'
import sys, time
import memprof

keep = []


def first():
    keep.append(bytearray(300000))


def churn():
    keep.append(bytearray(70000))
    del keep[1:-50]


with memprof.Tracker("first.bin"):
    first()
print("ready", flush=True)
while True:
    churn()
    time.sleep(0.005)
PY
"$py" job.py > job.out 2> job.err &
JOB=$!
wait_until 60 grep -qs ready job.out
grep -q ready job.out || fail_ "the job did not start: $(cat job.err)"
"$MEMPROF" serve "$JOB" > url 2> serve.err &
SERVE=$!
wait_until 60 eval '[ -s url ] || ! kill -0 $SERVE 2> /dev/null'
URL=$(cat url)
[ -n "$URL" ] || fail_ "memprof serve did not start: $(cat serve.err)"
get() { code=$(curl -s -o body -w '%{http_code}' "$@"); }

get "${URL}status"
[ "$code" = 200 ] && grep -qF "paused, 1 capture written, the last into '$T/first.bin'" body || fail_ "status: $code $(cat body)"
get "${URL}report"
[ "$code" = 200 ] && cmp -s body first.bin || fail_ "report of the API's capture: $code"
get -X POST "${URL}start"
[ "$code" = 200 ] || fail_ "start: $code $(cat body)"
capture=$(sed -n "s/.*recording capture 2 into '\([^']*\)'.*/\1/p" body)
case "$capture" in "/tmp/memprof-$(id -u)/"*".$JOB.2.bin") ;; *) fail_ "the capture went to '$capture'" ;; esac
sleep 0.5
get -X POST "${URL}stop"
[ "$code" = 200 ] || fail_ "stop: $code $(cat body)"
get "${URL}stats?format=json"
[ "$code" = 200 ] || fail_ "stats: $code $(cat body)"
"$py" - "$T/job.py" <<'PY' || fail_ "the capture started through memprof serve: $(head -c 500 body)"
import json, sys
d = json.load(open("body"))
top = d["top_allocations_by_size"][0]
sys.exit(0 if top["function"] == "churn" and top["file"] == sys.argv[1] and top["count"] >= 10 else top)
PY
"$MEMPROF" parse "$capture" | grep -q '^TRAILER .* end=detach' || fail_ "'$capture' is not complete"
rm -f "$capture"
kill $JOB
wait $JOB 2> /dev/null
wait_until 60 eval '! kill -0 $SERVE 2> /dev/null'
wait $SERVE || fail_ "memprof serve exited $? when the job ended"
exit 0
