#!/bin/bash
# Hostile text from a capture, end to end through the C renderer: a symbol
# named </script><script>alert(1)</script>, markup in a source path, a
# module path, a thread name, the command line and the host name, U+2028
# and an invalid byte. The pages keep it all as text: one data element,
# nothing can close it, no dialog opens in headless Chromium.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-html.sh"

cat > hostile.txt <<'CAP'
HEADER format=1.0 pid=666 ppid=1 main_tid=666 mode=run start_time=2026-11-22T08:00:00.000000Z flags=symbolized hostname="<b>host</b>" exe="/usr/bin/evil" argv=["/usr/bin/evil","</script><script>alert(1)</script>","<img src=x onerror=alert(3)>","a\xe2\x80\xa8b"]
THREAD index=0 tid=666 name="<svg onload=alert(4)>"
MODULE id=1 base=0x400000 path="/opt/<iframe src=javascript:alert(5)>/evil" build_id=- segments=[0x1000+0x4000:r-x]
STRING id=1 "main"
STRING id=2 "/src/</script><!--x.c"
STRING id=3 "</script><script>alert(1)</script>"
STRING id=4 "bad\xffbyte\xe2\x80\xa9&amp;"
SYMBOL ip=0x401100 module=1 offset=0x1100 frames=["main" "/src/</script><!--x.c":10:1]
SYMBOL ip=0x401200 module=1 offset=0x1200 frames=["</script><script>alert(1)</script>" "/src/</script><!--x.c":20:1]
SYMBOL ip=0x401300 module=1 offset=0x1300 frames=["bad\xffbyte\xe2\x80\xa9&amp;" ?:0:0]
TRACE node=1 parent=0 ip=0x401100
TRACE node=2 parent=1 ip=0x401200
TRACE node=3 parent=1 ip=0x401300
TICK time_us=10000 rss=2000000
ALLOC thread=0 kind=malloc addr=0x1000 size=6000 stack=2
ALLOC thread=0 kind=malloc addr=0x2000 size=3000 stack=3
ALLOC thread=0 kind=malloc addr=0x3000 size=1000 stack=1
TICK time_us=20000 rss=3000000
TRAILER end_time=2026-11-22T08:00:00.030000Z exit_code=0 allocs=3 frees=0 bytes_allocated=10000 duration_us=30000 end=exit
CAP
"$MKCAPTURE" -f -o h.bin hostile.txt || framework_failure_ "mkcapture"

for r in flamegraph table; do
	mp $r h.bin
	expect_rc 0 "$r"
	p=memprof-$r-h.html
	[ "$(cat out)" = "Wrote $p" ] || fail_ "stdout: $(cat out)"
	# One data element; markup only from the template: the data closes nothing.
	python3 - "$p" <<'PY' || fail_ "$p: the data element is not safe"
import sys
page = open(sys.argv[1], "rb").read()
opener = b'<script type="application/json" id="memprof-data">'
assert page.count(opener) == 1, "data elements"
start = page.index(opener) + len(opener)
data = page[start:page.index(b"</script>", start)]
for bad in (b"<", b">", b"&", "\u2028".encode(), "\u2029".encode()):
    assert bad not in data, "%r in the data" % bad
assert page.lower().count(b"<script") == 4 and page.lower().count(b"</script") == 4, "script elements"
assert b"<img" not in page and b"<iframe" not in page and b"<svg" not in page, "injected markup"
data.decode("utf-8")
PY
	facts $p
	fact 'meta argv=/usr/bin/evil </script><script>alert\(1\)</script> <img src=x onerror=alert\(3\)> a.b' $p
	fact 'meta hostname=<b>host</b>' $p
done
fact 'node main;</script><script>alert\(1\)</script> total=6000/1 self=6000/1' memprof-flamegraph-h.html
fact 'node main;bad.byte.&amp; total=3000/1 self=3000/1' memprof-flamegraph-h.html
fact 'row - malloc </script><script>alert\(1\)</script> at /src/</script><!--x.c:20 bytes=6000 count=1' memprof-table-h.html
grep -qF 'bad\ufffdbyte\u2029\u0026amp;' memprof-flamegraph-h.html || fail_ "the invalid byte is not U+FFFD"
check check_capture.py hostile --shot hostile-flamegraph memprof-flamegraph-h.html
check check_capture.py hostile --shot hostile-table memprof-table-h.html
mp flamegraph --split-threads -o threads.html h.bin
expect_rc 0 "flamegraph --split-threads"
check check_capture.py hostile --shot hostile-threads --names '<svg onload=alert(4)> (tid 666)' threads.html
exit 0
