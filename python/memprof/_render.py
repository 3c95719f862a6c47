"""Reports of a capture, made by the memprof command (the one this package came with, or
$MEMPROF): each runs in a process of its own, never in the profiled one."""
import json as _json
import os
import subprocess

from . import _paths

REPORTERS = ("flamegraph", "table")


class ReportError(RuntimeError):
    """memprof could not make the report: its message, one line."""


def memprof_command():
    """The memprof program: $MEMPROF, else the one this package was built or installed with."""
    return os.environ.get("MEMPROF") or _paths.MEMPROF


def _run(args):
    try:
        p = subprocess.run([memprof_command(), *args], capture_output=True, text=True,
                           env={k: v for k, v in os.environ.items() if k != "LD_PRELOAD"})
    except OSError as e:
        raise ReportError(f"cannot run '{memprof_command()}': {e.strerror}") from None
    if p.returncode != 0:
        msg = (p.stderr.strip().splitlines() or [f"exit status {p.returncode}"])[-1]
        raise ReportError(msg)
    return p.stdout


def stats(capture, *, json=False):
    """The figures of a capture: the text of 'memprof stats', or with json=True its JSON
    document as a dict."""
    capture = os.fspath(capture)
    if json:
        return _json.loads(_run(["stats", "--json", "-o", "-", capture]))
    return _run(["stats", capture])


def report(reporter, capture, output=None, args=(), *, force=True):
    """Write the HTML report reporter ("flamegraph" or "table") of a capture, with the
    reporter's own arguments (["--leaks"], ...), to output (default: next to the capture,
    memprof-REPORTER-NAME.html); returns its path. force: replace an existing report."""
    if reporter not in REPORTERS:
        raise ValueError(f"unknown reporter {reporter!r} (flamegraph or table)")
    args = [str(a) for a in args]
    for a in args:
        if a in ("-o", "-f", "--force") or a.startswith(("--output", "-o")):
            raise ValueError(f"reporter argument {a!r}: the output is given apart")
    capture = os.fspath(capture)
    if output is None:
        base = os.path.splitext(os.path.basename(capture))[0]
        output = os.path.join(os.path.dirname(os.path.abspath(capture)), f"memprof-{reporter}-{base}.html")
    output = os.fspath(output)
    _run([reporter, *(["-f"] if force else []), "-o", output, *args, capture])
    return output


def flamegraph(capture, output=None, args=(), **kw):
    """report("flamegraph", ...)."""
    return report("flamegraph", capture, output, args, **kw)


def table(capture, output=None, args=(), **kw):
    """report("table", ...)."""
    return report("table", capture, output, args, **kw)
