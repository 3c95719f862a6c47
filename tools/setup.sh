#!/bin/sh
# Set up memprof on Debian 12 from a fresh clone, then run the demo or the tests.
#   tools/setup.sh demo    build dependencies, build, profile the bundled demo program
#   tools/setup.sh check   build and test dependencies, build, run the whole test suite
#   tools/setup.sh sanitize the same and clang, in _sanitize/ (from make distdir; README.md,
#                          "Sanitizers and fuzzing"): the whole test suite built with ASAN and
#                          UBSAN, then each fuzz target fuzzed for FUZZ_SECONDS (60) seconds
set -eu
mode=${1:-demo}
cd "$(dirname "$0")/.."

build_deps="ca-certificates build-essential autoconf automake libtool pkg-config
	libunwind-dev libdw-dev libelf-dev libzstd-dev libcmocka-dev libiberty-dev
	libprotobuf-c-dev protobuf-c-compiler zlib1g-dev libncurses-dev libdebuginfod-dev libmicrohttpd-dev"
# The tests also use oracles (heaptrack, valgrind), real programs to profile,
# a debugger for attach, eu-addr2line to check symbols, man for --help,
# bash-completion, a headless browser, go tool pprof (reads our pprof exports), a terminal
# multiplexer to drive memprof live's view (tmux) and a debuginfod server (serves the debug
# file of a stripped program to the debug-symbol tests).
test_deps="man-db bash-completion valgrind heaptrack zstd gdb elfutils python3 sqlite3 gzip xz-utils
	chromium procps psmisc golang-go tmux debuginfod curl"

# The sanitized build and libFuzzer are clang's (compiler-rt).
sanitize_deps="clang libclang-rt-14-dev"

case $mode in
demo) deps=$build_deps ;;
check) deps="$build_deps $test_deps" ;;
sanitize) deps="$build_deps $test_deps $sanitize_deps" ;;
*) echo "usage: tools/setup.sh demo|check|sanitize" >&2; exit 2 ;;
esac

sudo=
[ "$(id -u)" -eq 0 ] || sudo=sudo
missing=
for p in $deps; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "setup: installing$missing"
	$sudo apt-get update -q
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends $missing
fi

jobs=$(nproc 2>/dev/null || echo 2)
[ -x configure ] || autoreconf -fi
[ -f Makefile ] || ./configure --enable-werror
if [ "$mode" = sanitize ]; then
	# Their own copy of the sources: a tree configured in place cannot host other builds.
	rm -rf _sanitize
	mkdir _sanitize _sanitize/build _sanitize/fuzz
	make distdir distdir=_sanitize/src > /dev/null
	status=0
	# The whole suite with ASAN and UBSAN, built by gcc as the main build is...
	(cd _sanitize/build && ../src/configure --enable-sanitizers && make -j"$jobs" &&
		make -j"$jobs" check) || status=1
	# ...then the fuzz targets, built by clang for libFuzzer, each fuzzed for a while.
	(cd _sanitize/fuzz && ../src/configure CC=clang CXX=clang++ --enable-fuzzing &&
		make -j"$jobs" && make -j"$jobs" check-fuzz) || status=1
	exit $status
fi
make -j"$jobs"
case $mode in
demo) make demo ;;
check) make -j"$jobs" check ;;
esac
