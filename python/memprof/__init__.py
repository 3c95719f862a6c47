"""memprof from inside a Python program: start and stop captures (Tracker, start, stop),
profile a function's calls (profile), and render captures (stats, flamegraph, table)
with the memprof command. Pure Python over the tracker's C API (man 3 memprof).

    import memprof
    with memprof.Tracker("job.bin"):
        run_job()
    print(memprof.stats("job.bin"))
    memprof.flamegraph("job.bin", "job.html", ["--leaks"])
"""
from ._profile import Profile, ReportWarning, profile
from ._render import ReportError, flamegraph, memprof_command, report, stats, table
from ._tracker import Tracker, is_recording, snapshot, start, status, stop

__all__ = ["Tracker", "start", "stop", "snapshot", "status", "is_recording", "profile",
           "Profile", "ReportWarning", "stats", "flamegraph", "table", "report", "ReportError",
           "memprof_command"]
