"""memprof.Tracker: a capture of what the code inside a with block allocates."""
import ctypes
import errno
import os

from . import _native


class Tracker:
    """Record every allocation the process makes while the with block runs, with its
    Python and native stack, into the capture file_name (memray.Tracker's arguments):

        with memprof.Tracker("job.bin"):
            run_job()

    native_traces: memprof always records the native frames with the Python ones; the
    argument is taken for memray's sake and changes nothing. follow_fork: forked children
    are tracked too, each into file_name.<pid>. memory_interval_ms: how often the time and
    the resident memory are sampled. trace_python_allocators: every object of the
    interpreter's memory and object domains is recorded on its own instead of pymalloc's
    arenas. aggregate: totals per stack instead of every event, as 'memprof run --aggregate'
    writes them (by the collector of 'memprof run --paused', or by the tracker itself when
    it writes the file and records every event: not with sampling_interval). overwrite: replace an
    existing file (else FileExistsError). max_depth: frames kept per stack (default 128).
    sampling_interval: record a sample of the allocations, one per that many bytes allocated
    on average (an int, or a str with k or M: "512k", the value for a service), and let the
    reports estimate the rest (memprof-run(1), Sampled tracking); 0, the default, records
    every one.

    file_name None: where the tracker's configuration says (MEMPROF_OUTPUT, or the collector
    of memprof run --paused), else /tmp/memprof-UID/PROGRAM.PID.N.bin. One capture at a time
    in a process: entering a second Tracker while one records raises RuntimeError."""

    def __init__(self, file_name=None, *, native_traces=True, follow_fork=False,
                 memory_interval_ms=10, trace_python_allocators=False, aggregate=False,
                 overwrite=False, max_depth=None, sampling_interval=0):
        if file_name is not None:
            file_name = os.path.abspath(os.fspath(file_name))
        if not isinstance(memory_interval_ms, int) or not 1 <= memory_interval_ms <= 3600000:
            raise ValueError(f"memory_interval_ms must be an integer from 1 to 3600000, not {memory_interval_ms!r}")
        if max_depth is not None and (not isinstance(max_depth, int) or not 1 <= max_depth <= 1024):
            raise ValueError(f"max_depth must be an integer from 1 to 1024, not {max_depth!r}")
        self.sampling_interval = _bytes(sampling_interval, "sampling_interval", 1 << 30)
        self.file_name = file_name
        self.native_traces = native_traces
        self.follow_fork = follow_fork
        self.memory_interval_ms = memory_interval_ms
        self.trace_python_allocators = trace_python_allocators
        self.aggregate = aggregate
        self.overwrite = overwrite
        self.max_depth = max_depth
        self.path = file_name
        self.duration = None

    def _options(self):
        return _native.Options(
            size=ctypes.sizeof(_native.Options),
            memory_interval_ms=self.memory_interval_ms,
            max_depth=self.max_depth or 0,
            follow_fork=int(bool(self.follow_fork)),
            trace_python_allocators=int(bool(self.trace_python_allocators)),
            aggregate=int(bool(self.aggregate)),
            overwrite=int(bool(self.overwrite)),
            sampling_interval=self.sampling_interval)

    def __enter__(self):
        opts = self._options()
        path = self.file_name.encode() if self.file_name is not None else None
        # (Made before the start: the status' 4 KiB buffer is no allocation of the program's.)
        st = _native.Status(size=ctypes.sizeof(_native.Status))
        try:
            _native.call("start", path, ctypes.byref(opts))
        except OSError as e:
            raise _start_error(e, self) from None
        if self.file_name is None:
            _native.call("status", ctypes.byref(st))
            self.path = st.path.decode(errors="surrogateescape") or None
        return self

    def __exit__(self, *exc):
        try:
            _native.call("stop")
        except OSError as e:
            if e.errno == errno.EIO:
                raise OSError(e.errno, f"the capture '{self.path}' stopped before the end of the "
                              "with block (the disk is full, or the program closed its file)") from None
            raise
        self.duration = _native.status().duration_us / 1e6
        return False

    def snapshot(self, path=None):
        """What the capture holds now, as a complete capture at path (default: the capture's
        path with .snap.N), while recording goes on."""
        return snapshot(path)

    def __repr__(self):
        return f"<memprof.Tracker {self.path!r}>"


def _bytes(value, name, most):
    """A number of bytes: an int, or a str of digits with k (KiB) or M (MiB) after them."""
    n = value
    if isinstance(value, str):
        units = {"k": 1 << 10, "K": 1 << 10, "M": 1 << 20}
        digits, mul = (value[:-1], units[value[-1]]) if value[-1:] in units else (value, 1)
        n = int(digits) * mul if digits.isdigit() else None
    if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= most:
        raise ValueError(f"{name} must be a number of bytes from 0 to {most} (an int, or a str "
                         f"with k or M), not {value!r}")
    return n


def _start_error(e, t):
    if e.errno == errno.EBUSY:
        return RuntimeError("No more than one Tracker instance can be active at the same time "
                            "(a memprof capture is recording in this process)")
    if e.errno == errno.EEXIST:
        return FileExistsError(e.errno, "the capture exists (overwrite=True replaces it)", t.file_name)
    if e.errno == errno.ENOTSUP and t.aggregate and (t.sampling_interval or not t.trace_python_allocators):
        return ValueError("aggregate=True with sampling needs a collector (the program run by "
                          "'memprof run --paused', and file_name None): the tracker aggregates "
                          "the capture it writes itself only when it records every event")
    if e.errno == errno.ENOTSUP and t.trace_python_allocators:
        return ValueError("trace_python_allocators=True needs the interpreter's pymalloc or malloc "
                          "allocator (not the debug hooks of PYTHONMALLOC=debug or -X dev)")
    if e.errno == errno.EPERM and t.trace_python_allocators:
        return RuntimeError("trace_python_allocators=True needs the GIL")
    return OSError(e.errno, f"cannot start the capture: {e.strerror}", t.file_name)


def start(file_name=None, **kwargs):
    """Start a capture, as Tracker(file_name, **kwargs).__enter__() does; stop() ends it."""
    return Tracker(file_name, **kwargs).__enter__()


def stop():
    """Stop the capture recording in this process (started by start(), a Tracker, memprof
    ctl or memprof serve), once it is complete. FileNotFoundError when none is."""
    try:
        _native.call("stop")
    except OSError as e:
        if e.errno == errno.ENOENT:
            raise FileNotFoundError(e.errno, "no memprof capture is recording") from None
        raise


def snapshot(path=None):
    """A snapshot of the capture recording (see Tracker.snapshot): its path, or None when
    the default name was taken (the capture's with .snap.N)."""
    if path is not None:
        path = os.path.abspath(os.fspath(path))
    try:
        _native.call("snapshot", path.encode() if path is not None else None)
    except OSError as e:
        if e.errno == errno.ENOENT:
            raise FileNotFoundError(e.errno, "no memprof capture is recording") from None
        if e.errno == errno.EEXIST:
            raise FileExistsError(e.errno, "the snapshot's file exists", path) from None
        raise
    return path


def status():
    """What the tracker does: a dict with recording (bool), by ("api", "control", "attach",
    "live" or None), captures (started in this process), duration (s) and path."""
    st = _native.status()
    return {"recording": bool(st.recording), "by": _native.BY.get(st.by), "captures": st.captures,
            "duration": st.duration_us / 1e6, "path": st.path.decode(errors="surrogateescape") or None}


def is_recording():
    return bool(_native.lib().memprof_is_recording())
