#!/usr/bin/env python3
"""Checks of the template expansion (share/templates/README.md) and of the shipped templates.

    check_render.py [--renderer PROGRAM] FIXTURE_DIR TEMPLATE_DIR SCRATCH_DIR

FIXTURE_DIR holds page.html (with a.css, b.js, c.html), data.json and expected.html:
the renderer must produce expected.html byte for byte. Then every error the
specification names, then the shipped templates: they expand, load nothing
from outside, and their scripts never turn text into markup.

PROGRAM is a renderer with render.py's interface (the C one is
tests/tools/htmlrender); by default render.py itself. Another renderer is
also compared with render.py on every input here: the same status and, on
success, the same bytes.
"""
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RENDER = os.path.join(HERE, "render.py")
DATA_OPEN = b'<script type="application/json" id="memprof-data">'


def fail(msg):
    sys.stderr.write("FAIL: %s\n" % msg)
    sys.exit(1)


RENDERER = [sys.executable, RENDER]
PREFIX = "render.py: "


def render(template, data, out, renderer=None):
    p = subprocess.run((renderer or RENDERER) + [template, data, out], capture_output=True, timeout=60)
    return p.returncode, p.stderr.decode("utf-8", "replace")


def same_as_reference(what, template, data, out):
    """Another renderer's result (already in out, status rc) against render.py's."""
    if RENDERER[-1] == RENDER:
        return
    ref = out + ".reference"
    rc_ref, _ = render(template, data, ref, [sys.executable, RENDER])
    got = open(out, "rb").read() if os.path.exists(out) else None
    want = open(ref, "rb").read() if os.path.exists(ref) else None
    if (got is None) != (want is None) or got != want:
        fail("%s: the output differs from render.py's (status of render.py %d)" % (what, rc_ref))


def data_text(page):
    start = page.index(DATA_OPEN) + len(DATA_OPEN)
    return page[start:page.index(b"</script>", start)]


def fixture(fix, scratch):
    out = os.path.join(scratch, "fixture.html")
    rc, err = render(os.path.join(fix, "page.html"), os.path.join(fix, "data.json"), out)
    if rc != 0 or err:
        fail("fixture: status %d, stderr %r" % (rc, err))
    same_as_reference("fixture", os.path.join(fix, "page.html"), os.path.join(fix, "data.json"), out)
    with open(out, "rb") as f:
        got = f.read()
    with open(os.path.join(fix, "expected.html"), "rb") as f:
        if got != f.read():
            fail("fixture: the output differs from expected.html")
    text = data_text(got)
    for c in (b"<", b">", b"&", "\u2028".encode(), "\u2029".encode()):
        if c in text:
            fail("fixture: %r left unescaped in the data" % c)
    with open(os.path.join(fix, "data.json"), encoding="utf-8") as f:
        if json.loads(text.decode("utf-8")) != json.load(f):
            fail("fixture: the data element does not parse back to the data")


ERRORS = [
    # (what, template text, files, data text, message part)
    ("missing include", "<!--memprof:include none.js-->\n<!--memprof:data-->\n", {}, None, "cannot read include"),
    ("script end in a script", "<!--memprof:include x.js-->\n<!--memprof:data-->\n",
     {"x.js": "var s = '</SCRIPT>';\n"}, None, "contains '</script'"),
    ("comment in a script", "<!--memprof:include x.js-->\n<!--memprof:data-->\n",
     {"x.js": "var s = '<!--';\n"}, None, "contains '<!--'"),
    ("style end in a style", "<!--memprof:include x.css-->\n<!--memprof:data-->\n",
     {"x.css": "a{}</style>\n"}, None, "contains '</style'"),
    ("directive in an HTML include", "<!--memprof:include x.html-->\n",
     {"x.html": "<!--memprof:data-->\n"}, None, "contains '<!--memprof:'"),
    ("unknown directive", "<!--memprof:includ x.css-->\n<!--memprof:data-->\n", {"x.css": ""}, None, ":1: bad directive"),
    ("path in an include", "<!--memprof:data-->\n<!--memprof:include ../x.js-->\n", {}, None, ":2: bad directive"),
    ("other extension", "<!--memprof:data-->\n<!--memprof:include x.txt-->\n", {"x.txt": ""}, None, ":2: bad directive"),
    ("directive inside a line", "<p><!--memprof:data--></p>\n", {}, None, ":1: bad directive"),
    ("no data directive", "<p></p>\n", {}, None, "has 0 data directives"),
    ("two data directives", "<!--memprof:data-->\n<!--memprof:data-->\n", {}, None, "has 2 data directives"),
    ("invalid JSON", "<!--memprof:data-->\n", {}, '{"version":1,}', "data is not UTF-8 JSON"),
    ("not UTF-8", "<!--memprof:data-->\n", {}, b'{"version":1,"s":"\xff"}', "data is not UTF-8 JSON"),
    ("another version", "<!--memprof:data-->\n", {}, '{"version":2}', "not a version 1 report"),
    ("a boolean version", "<!--memprof:data-->\n", {}, '{"version":true}', "not a version 1 report"),
    ("a version string", "<!--memprof:data-->\n", {}, '{"version":"1"}', "not a version 1 report"),
    ("the last version counts", "<!--memprof:data-->\n", {}, '{"version":1,"version":2}', "not a version 1 report"),
    ("not an object", "<!--memprof:data-->\n", {}, '[{"version":1}]', "not a version 1 report"),
    ("NaN", "<!--memprof:data-->\n", {}, '{"version":1,"x":NaN}', "data is not UTF-8 JSON"),
    ("Infinity", "<!--memprof:data-->\n", {}, '{"version":1,"x":-Infinity}', "data is not UTF-8 JSON"),
    ("extra data", "<!--memprof:data-->\n", {}, '{"version":1} {}', "data is not UTF-8 JSON"),
    ("byte order mark", "<!--memprof:data-->\n", {}, b'\xef\xbb\xbf{"version":1}', "data is not UTF-8 JSON"),
    ("control character", "<!--memprof:data-->\n", {}, '{"version":1,"s":"a\tb"}', "data is not UTF-8 JSON"),
    ("a surrogate in UTF-8", "<!--memprof:data-->\n", {}, b'{"version":1,"s":"\xed\xa0\x80"}', "data is not UTF-8 JSON"),
    ("an overlong encoding", "<!--memprof:data-->\n", {}, b'{"version":1,"s":"\xc0\xbc"}', "data is not UTF-8 JSON"),
    ("a leading zero", "<!--memprof:data-->\n", {}, '{"version":01}', "data is not UTF-8 JSON"),
    ("empty data", "<!--memprof:data-->\n", {}, ' \n', "data is not UTF-8 JSON"),
    ("missing template", None, {}, None, "cannot read template"),
]

# Inputs that must work, the same with every renderer.
GOOD = [
    ("version 1.0", "<!--memprof:data-->", {}, ' \t{"version":1.0,"s":"\\ud800 \\u2028 <&>"}\r\n '),
    ("version 1e0 and nesting", "x\n <!--memprof:data-->\t\r\ny", {}, '{"version":1e0,"a":[[[{"b":[]}]]],"c":{}}'),
    ("key escapes", "<!--memprof:data-->\n", {}, '{"versio\\u006e":1,"v":"\xe2\x80\xa8\xe2\x80\xa9"}'),
    ("empty includes", "<!--memprof:include e.css-->\n<!--memprof:include e.js-->\n<!--memprof:include e.html-->\n"
     "<!--memprof:data-->\n", {"e.css": "", "e.js": "", "e.html": ""}, '{"version":1}'),
    ("CRLF lines", "<p>\r\n<!--memprof:include x.js-->\r\n<!--memprof:data-->\r\n", {"x.js": "a\r\nb"}, '{"version":1}'),
]


def errors(scratch):
    for i, (what, template, files, data, msg) in enumerate(ERRORS):
        d = os.path.join(scratch, "error%d" % i)
        os.makedirs(d)
        for name, text in files.items():
            with open(os.path.join(d, name), "w") as f:
                f.write(text)
        if template is not None:
            with open(os.path.join(d, "t.html"), "w") as f:
                f.write(template)
        data = '{"version":1}' if data is None else data
        with open(os.path.join(d, "data.json"), "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode())
        out = os.path.join(d, "out.html")
        rc, err = render(os.path.join(d, "t.html"), os.path.join(d, "data.json"), out)
        if rc != 1 or msg not in err or not err.startswith(PREFIX) or err.count("\n") != 1:
            fail("%s: status %d, stderr %r (expected 1 and %r)" % (what, rc, err, msg))
        if os.path.exists(out):
            fail("%s: an output file was written" % what)
        if msg.startswith("cannot read") and os.path.join(d, "t.html" if template is None else "none.js") not in err:
            fail("%s: the error does not name the path tried: %r" % (what, err))
    for i, (what, template, files, data) in enumerate(GOOD):
        d = os.path.join(scratch, "good%d" % i)
        os.makedirs(d)
        for name, text in files.items():
            with open(os.path.join(d, name), "w", newline="") as f:
                f.write(text)
        with open(os.path.join(d, "t.html"), "w", newline="") as f:
            f.write(template)
        with open(os.path.join(d, "data.json"), "wb") as f:
            f.write(data.encode())
        out = os.path.join(d, "out.html")
        rc, err = render(os.path.join(d, "t.html"), os.path.join(d, "data.json"), out)
        if rc != 0 or err:
            fail("%s: status %d, stderr %r" % (what, rc, err))
        same_as_reference(what, os.path.join(d, "t.html"), os.path.join(d, "data.json"), out)


def templates(tdir, scratch):
    for name in ("flamegraph.html", "table.html"):
        data = os.path.join(scratch, name + ".json")
        report = name.split(".")[0]
        subprocess.run([sys.executable, os.path.join(HERE, "gen_data.py"), "--report", report, "-o", data],
                       check=True, timeout=60)
        out = os.path.join(scratch, name)
        rc, err = render(os.path.join(tdir, name), data, out)
        if rc != 0 or err:
            fail("%s: status %d, stderr %r" % (name, rc, err))
        same_as_reference(name, os.path.join(tdir, name), data, out)
        with open(out, "rb") as f:
            page = f.read()
        if b"<!--memprof:" in page or page.count(DATA_OPEN) != 1:
            fail("%s: directives left, or not one data element" % name)
        if page.lower().count(b"<script") != 4 or page.lower().count(b"</script") != 4:
            fail("%s: expected the data element and three scripts" % name)
        if b"Content-Security-Policy" not in page or b"default-src 'none'" not in page:
            fail("%s: no strict Content-Security-Policy" % name)
    # Nothing loads from outside, and no text becomes markup.
    for f in sorted(os.listdir(tdir)):
        if not f.endswith((".html", ".js", ".css")):
            continue
        with open(os.path.join(tdir, f), encoding="utf-8") as fh:
            text = fh.read()
        bad = re.findall(r"(?i:https?://)|\bsrc\s*=|\bhref\s*=\s*[\"']|(?<![\w.])url\(|@import", text)
        if bad:
            fail("%s: refers to outside resources: %s" % (f, bad[:3]))
        bad = re.findall(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|srcdoc", text)
        if bad:
            fail("%s: uses %s" % (f, bad[0]))


def main():
    global RENDERER, PREFIX
    args = sys.argv[1:]
    if args[:1] == ["--renderer"]:
        RENDERER = [os.path.abspath(args[1])]
        PREFIX = os.path.basename(args[1]) + ": "
        args = args[2:]
    fix, tdir, scratch = args[:3]
    fixture(fix, scratch)
    errors(scratch)
    templates(tdir, scratch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
