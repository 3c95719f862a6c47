"""The tracker's C API (memprof.h, man 3 memprof) through ctypes."""
import ctypes
import errno
import os

from . import _paths


class Options(ctypes.Structure):
    """struct memprof_options."""
    _fields_ = [
        ("size", ctypes.c_size_t),
        ("memory_interval_ms", ctypes.c_uint),
        ("max_depth", ctypes.c_uint),
        ("follow_fork", ctypes.c_int),
        ("no_python_frames", ctypes.c_int),
        ("trace_python_allocators", ctypes.c_int),
        ("aggregate", ctypes.c_int),
        ("overwrite", ctypes.c_int),
        ("sampling_interval", ctypes.c_uint),
    ]


class Status(ctypes.Structure):
    """struct memprof_status."""
    _fields_ = [
        ("size", ctypes.c_size_t),
        ("recording", ctypes.c_int),
        ("by", ctypes.c_int),
        ("captures", ctypes.c_uint),
        ("duration_us", ctypes.c_ulonglong),
        ("path", ctypes.c_char * 4096),
    ]


BY = {0: None, 1: "api", 2: "control", 3: "attach", 4: "live"}

_lib = None


def library_path():
    """The tracker this package loads when the process has none: $MEMPROF_LIBDIR's, else
    the one memprof was built or installed with."""
    libdir = os.environ.get("MEMPROF_LIBDIR")
    return os.path.join(libdir, "libmemprof.so") if libdir else _paths.LIBMEMPROF


def lib():
    """The tracker, loaded once. One already in the process (preloaded, as memprof run
    --paused or LD_PRELOAD put it, or linked in) is used as it is: a second copy would be a
    second tracker. PyDLL keeps the GIL held during the calls, which the Python allocators'
    wrapping needs; use_errno gives each call's errno."""
    global _lib
    if _lib is None:
        handle = ctypes.PyDLL(None, use_errno=True)
        if not hasattr(handle, "memprof_start"):
            path = library_path()
            try:
                handle = ctypes.PyDLL(path, use_errno=True)
            except OSError as e:
                raise OSError(errno.ENOENT, f"cannot load the memprof tracker '{path}': {e}") from None
        handle.memprof_start.argtypes = [ctypes.c_char_p, ctypes.POINTER(Options)]
        handle.memprof_snapshot.argtypes = [ctypes.c_char_p]
        handle.memprof_status.argtypes = [ctypes.POINTER(Status)]
        for name in ("start", "stop", "snapshot", "status", "is_recording"):
            getattr(handle, "memprof_" + name).restype = ctypes.c_int
        _lib = handle
    return _lib


def call(name, *args):
    """memprof_NAME(*args): 0, or OSError with the errno it set."""
    if getattr(lib(), "memprof_" + name)(*args) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return 0


def status():
    st = Status(size=ctypes.sizeof(Status))
    call("status", ctypes.byref(st))
    return st
