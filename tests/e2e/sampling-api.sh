#!/bin/bash
# Sampled tracking from inside a program: memprof_start()'s sampling_interval
# (struct memprof_options, man 3 memprof) through the Python package's
# memprof.Tracker(sampling_interval=...): the capture is sampled, its figures
# estimates; bad values are refused; options from a memprof.h older than the
# field (a smaller size) are taken, every allocation recorded.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"
. "${MEMPROF_SRCDIR}/tests/e2e/lib-python.sh"
export PYTHONPATH=$MEMPROF_BUILDDIR/python
unset MEMPROF_LIBDIR LD_PRELOAD

interval_of() { "$MEMPROF" parse "$1" | sed -n 's/^HEADER .* sampling_interval=\([0-9]*\) .*/\1/p'; }

cat > job.py <<'EOF'
import ctypes
import memprof
from memprof import _native

keep = []


def big_blocks():
    for _ in range(40):
        keep.append(bytearray(100000))


with memprof.Tracker("s.bin", sampling_interval="16k"):
    big_blocks()
with memprof.Tracker("n.bin", sampling_interval=65536):
    big_blocks()
for bad in ("2G", -1, "1.5k", "16kb", 1 << 31, True, 4.0):
    try:
        memprof.Tracker("x.bin", sampling_interval=bad)
        print("accepted", repr(bad))
    except ValueError as e:
        print("refused", repr(bad), str(e).split(",")[0])
# The C API: a value out of bounds is EINVAL; options of the size before the field are taken.
opts = _native.Options(size=ctypes.sizeof(_native.Options), sampling_interval=(1 << 30) + 1)
try:
    _native.call("start", b"y.bin", ctypes.byref(opts))
    print("started with", opts.sampling_interval)
except OSError as e:
    print("start refused", e.errno == 22)
old = _native.Options(size=_native.Options.sampling_interval.offset, sampling_interval=4096)
_native.call("start", b"old.bin", ctypes.byref(old))
big_blocks()
_native.call("stop")
print("done")
EOF
for py in $pythons; do
	rm -f s.bin n.bin old.bin
	run "$py" job.py
	expect_rc 0 "$py job.py"
	expect_no_err "$py job.py"
	grep -qx done out || fail_ "$py: $(cat out)"
	for bad in "'2G'" -1 "'1.5k'" "'16kb'" 2147483648 True 4.0; do
		grep -qx "refused $bad sampling_interval must be a number of bytes from 0 to 1073741824 (an int" out ||
			fail_ "$py: $bad not refused: $(grep "$bad" out)"
	done
	grep -qx "start refused True" out || fail_ "$py: an interval out of bounds started: $(cat out)"
	[ "$(interval_of s.bin)" = 16384 ] || fail_ "$py: s.bin is not sampled at 16 KiB"
	[ "$(interval_of n.bin)" = 65536 ] || fail_ "$py: n.bin is not sampled at 64 KiB"
	[ -z "$(interval_of old.bin)" ] || fail_ "$py: the old options sampled"
	"$MEMPROF" stats s.bin > st || fail_ "$py: stats s.bin"
	grep -q "^Sampling: estimated from a sample, one allocation per 16.000 KiB allocated" st ||
		fail_ "$py: stats does not say the figures are estimates"
	# The 100,000-byte blocks are past the interval: recorded all, exactly.
	"$MEMPROF" parse s.bin | grep -cE '^ALLOC .* size=10000[0-9] ' | grep -qx 40 || fail_ "$py: s.bin's large blocks"
	"$MEMPROF" parse old.bin | grep -cE '^ALLOC .* size=10000[0-9] ' | grep -qx 40 || fail_ "$py: old.bin's blocks"
done
exit 0
