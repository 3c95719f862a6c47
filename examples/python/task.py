# A workflow engine's task decorator: each run of the task is profiled, and the
# flame graph of what it leaked is embedded in the task's page.
import memprof

pages = {}  # the engine's task pages: name -> HTML


def embed(profile):
    with open(profile.report) as f:
        pages["build_index"] = f.read()


@memprof.profile(reporter="flamegraph", reporter_args=["--leaks"], on_report=embed,
                 output_dir="memprof_bin", follow_fork=False, memory_interval_ms=10)
def build_index(words):
    index = {}
    for w in words:
        index.setdefault(w[-1], []).append(w * 50)
    return index


index = build_index([f"word{i}" for i in range(20000)])
print(len(index), build_index.last.capture, build_index.last.report, len(pages["build_index"]))
