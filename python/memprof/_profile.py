"""memprof.profile: a decorator that profiles each call of a function (a task) and
writes its HTML report, for a workflow engine to show on the task's page."""
import collections
import datetime
import functools
import itertools
import os
import warnings

from . import _render
from ._tracker import Tracker

Profile = collections.namedtuple("Profile", "capture report error")
Profile.__doc__ = """What one profiled call left: the capture's path, the report's path
(None without a reporter, or when it failed), and the reporter's message when it failed."""

_counter = itertools.count(1)


class ReportWarning(UserWarning):
    """The report of a profiled call could not be made (the call's result is unaffected)."""


def profile(function=None, *, reporter="flamegraph", reporter_args=(), output_dir="memprof_bin",
            on_report=None, **tracker_args):
    """Profile each call of the decorated function with a Tracker, then write the HTML
    report reporter ("flamegraph", "table", or None for none) with reporter_args (the
    reporter's options, ["--leaks"] ...) next to the capture, in output_dir:
    FUNCTION.YYYYmmddHHMMSS.PID.N.bin and memprof-REPORTER-FUNCTION....html.

        @memprof.profile(reporter="flamegraph", reporter_args=["--leaks"], follow_fork=True)
        def task(...): ...

    Bare (@memprof.profile) works too. The function's value and exceptions pass through;
    the capture is complete and its report written even when the call raised. What a call
    left is the wrapper's .last (a Profile: capture, report, error) and is given to
    on_report(profile) when set (to embed the report in a page). A report that cannot be
    made is a ReportWarning, never the call's failure. tracker_args go to Tracker
    (native_traces, follow_fork, memory_interval_ms, trace_python_allocators, ...)."""
    if reporter is not None and reporter not in _render.REPORTERS:
        raise ValueError(f"unknown reporter {reporter!r} (flamegraph, table or None)")
    reporter_args = list(reporter_args or ())

    def decorate(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            os.makedirs(output_dir, exist_ok=True)
            stamp = datetime.datetime.now().strftime("%Y%m%d%H%M%S")
            capture = os.path.join(os.path.abspath(output_dir), f"{func.__name__}.{stamp}.{os.getpid()}.{next(_counter)}.bin")
            try:
                with Tracker(capture, **tracker_args):
                    return func(*args, **kwargs)
            finally:
                wrapper.last = _report(capture)
                if on_report is not None:
                    on_report(wrapper.last)

        wrapper.last = None
        return wrapper

    def _report(capture):
        if reporter is None:
            return Profile(capture, None, None)
        try:
            return Profile(capture, _render.report(reporter, capture, None, reporter_args), None)
        except (_render.ReportError, ValueError) as e:
            warnings.warn(f"memprof {reporter} of '{capture}': {e}", ReportWarning, stacklevel=3)
            return Profile(capture, None, str(e))

    return decorate(function) if function is not None else decorate
