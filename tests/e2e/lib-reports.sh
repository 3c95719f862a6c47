# Sourced by the reporters' e2e tests (stats-*, summary-*, tree-*) after
# init.sh: captures built with mkcapture, and the bad-input checks they share.

# mkcap OUT [TEXT-FILE]: compile capture text (standard input without a file).
mkcap() { "$MKCAPTURE" -f -o "$1" ${2+"$2"} || framework_failure_ "mkcapture $1"; }

# The capture of tests/data/app.txt, as ./app.mprof.
app_capture() { mkcap app.mprof "$TESTDATA/app.txt"; }

# bad_inputs CMD [OPTIONS...]: every unreadable input gets the reader's
# one-line error and exit status 1.
bad_inputs() {
	mp "$@" nope.bin
	expect_rc 1 "$1: a missing file"
	expect_err "memprof: cannot open 'nope.bin': No such file or directory"
	expect_one_line_err
	mkdir -p adir
	mp "$@" adir
	expect_rc 1 "$1: a directory"
	expect_err "memprof: 'adir' is a directory, not a capture file"
	expect_one_line_err
	: > empty.bin
	mp "$@" empty.bin
	expect_rc 1 "$1: an empty file"
	expect_err "memprof: 'empty.bin' is empty, not a memprof capture"
	expect_one_line_err
	printf 'not a capture, just text\n' > garbage.bin
	mp "$@" garbage.bin
	expect_rc 1 "$1: garbage"
	expect_err "memprof: 'garbage.bin' is not a memprof capture"
	expect_one_line_err
	"$MKCAPTURE" -r -f -o future.bin "$TESTDATA/app.txt" || framework_failure_ "mkcapture"
	printf '\005\007' | dd of=future.bin bs=1 seek=8 conv=notrunc status=none
	mp "$@" future.bin
	expect_rc 1 "$1: a future format version"
	expect_err "capture format 5.7 is not readable by this memprof, which reads formats 1.x to 4.x; upgrade memprof"
	expect_one_line_err
	[ ! -s out ] || fail_ "$1 printed a report for a bad input"
}

# cut_capture OUT: app.txt written uncompressed and cut inside its last
# record (the trailer): everything before it is read, with a warning.
cut_capture() {
	"$MKCAPTURE" -r -f -o full.bin "$TESTDATA/app.txt" || framework_failure_ "mkcapture"
	head -c $(( $(stat -c %s full.bin) - 3 )) full.bin > "$1"
}
