#!/usr/bin/env python3
"""Reference implementation of the template expansion of share/templates/README.md.

    render.py TEMPLATE DATA OUTPUT

TEMPLATE is a template file (e.g. share/templates/flamegraph.html); its
includes are read from the same directory. DATA is the report data, one JSON
value (surrounding white space is ignored). OUTPUT is the self-contained page
("-" for standard output). The C renderer produces the same bytes for the
same inputs. Exit status 0 on success, 1 on any error (one line on stderr).
"""
import json
import os
import re
import sys

INCLUDE = re.compile(rb"<!--memprof:include ([A-Za-z0-9_][A-Za-z0-9_.-]*\.(css|js|html))-->")
DATA = b"<!--memprof:data-->"
MARK = b"<!--memprof:"
# What an included file must not contain (ASCII case-insensitive): it would
# end its element early or change how the HTML parser reads script text.
# An HTML include is markup shared by templates, copied as it is, without directives.
FORBIDDEN = {b"css": (b"</style",), b"js": (b"</script", b"<script", b"<!--"), b"html": (MARK,)}
WRAP = {b"css": (b"<style>\n", b"</style>\n"), b"js": (b"<script>\n", b"</script>\n"), b"html": (b"", b"")}
ESCAPES = [(b"<", b"\\u003c"), (b">", b"\\u003e"), (b"&", b"\\u0026"),
           ("\u2028".encode(), b"\\u2028"), ("\u2029".encode(), b"\\u2029")]


class RenderError(Exception):
    pass


def escape_json(text):
    """The writer-side escaping rule: nothing in the data can end the script element."""
    for raw, esc in ESCAPES:
        text = text.replace(raw, esc)
    return text


def no_constant(name):
    raise ValueError("%s is not JSON" % name)


def data_element(data):
    try:
        # Strict JSON: Python's NaN and Infinity extensions are refused.
        value = json.loads(data.decode("utf-8"), parse_constant=no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise RenderError("data is not UTF-8 JSON: %s" % e)
    version = value.get("version") if isinstance(value, dict) else None
    if isinstance(version, bool) or version != 1:
        raise RenderError("data is not a version 1 report object")
    return (b'<script type="application/json" id="memprof-data">' + escape_json(data.strip(b" \t\r\n"))
            + b"</script>\n")


def include(directory, name, ext):
    path = os.path.join(directory, name.decode())
    try:
        with open(path, "rb") as f:
            body = f.read()
    except OSError as e:
        raise RenderError("cannot read include '%s': %s" % (path, e.strerror))
    low = body.lower()
    for bad in FORBIDDEN[ext]:
        if bad in low:
            raise RenderError("include '%s' contains '%s'" % (path, bad.decode()))
    if body and not body.endswith(b"\n"):
        body += b"\n"
    return WRAP[ext][0] + body + WRAP[ext][1]


def render(template_path, data):
    directory = os.path.dirname(template_path) or "."
    try:
        with open(template_path, "rb") as f:
            template = f.read()
    except OSError as e:
        raise RenderError("cannot read template '%s': %s" % (template_path, e.strerror))
    out = []
    ndata = 0
    # Lines end at "\n" only; the last one may lack it.
    lines = [l + b"\n" for l in template.split(b"\n")]
    lines[-1] = lines[-1][:-1]
    for lineno, line in enumerate(lines, 1):
        if MARK not in line:
            out.append(line)
            continue
        directive = line.rstrip(b"\n").strip(b" \t\r")
        m = INCLUDE.fullmatch(directive)
        if m:
            out.append(include(directory, m.group(1), m.group(2)))
        elif directive == DATA:
            ndata += 1
            out.append(data_element(data))
        else:
            raise RenderError("%s:%d: bad directive" % (template_path, lineno))
    if ndata != 1:
        raise RenderError("'%s' has %d data directives, expected one" % (template_path, ndata))
    return b"".join(out)


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: render.py TEMPLATE DATA OUTPUT\n")
        return 2
    template, data_path, output = argv
    try:
        with open(data_path, "rb") as f:
            data = f.read()
    except OSError as e:
        sys.stderr.write("render.py: cannot read '%s': %s\n" % (data_path, e.strerror))
        return 1
    try:
        page = render(template, data)
    except RenderError as e:
        sys.stderr.write("render.py: %s\n" % e)
        return 1
    if output == "-":
        sys.stdout.buffer.write(page)
    else:
        with open(output, "wb") as f:
            f.write(page)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
