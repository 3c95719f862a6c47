# Sourced by the Python tests after init.sh: $pythons, the CPython 3.11 to
# 3.13 interpreters to test (their frames are the ones memprof reads):
# Debian's /usr/bin/python3 (3.11) as a fresh CI machine has it, python3.12
# and python3.13 when PATH has them (each resolved to its real executable),
# and those MEMPROF_TEST_PYTHONS names (paths, separated by spaces). Skips
# when there is none.
pythons=
for exe in /usr/bin/python3 \
	$(for v in 3.12 3.13; do python$v -c 'import sys; print(sys.executable)' 2> /dev/null; done) \
	${MEMPROF_TEST_PYTHONS:-}; do
	[ -x "$exe" ] && "$exe" -c 'import sys; sys.exit(not (3, 11) <= sys.version_info[:2] <= (3, 13))' \
		2> /dev/null && pythons="$pythons $exe"
done
[ -n "$pythons" ] || skip_ "no CPython 3.11 to 3.13 is installed"
