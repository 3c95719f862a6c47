#!/bin/bash
# The program's streams, status and environment are its own.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"

head -c 300000 /dev/urandom > in.bin
keep -o out.bin -e err.txt "$MEMPROF" run -q -o io.bin "$WORKLOADS/io" 42 < in.bin
expect_rc 42 "io 42"
cmp -s in.bin out.bin || fail_ "stdout differs from stdin"
[ "$(cat err.txt)" = "to stderr" ] || fail_ "stderr is not the program's alone: $(cat err.txt)"

# Without -q memprof's lines go to stderr only, before and after the program's.
keep -o out.txt -e err.txt "$MEMPROF" run -f -o io.bin "$WORKLOADS/io" <<< hello
expect_rc 0 "io"
[ "$(cat out.txt)" = hello ] || fail_ "stdout: $(cat out.txt)"
head -1 err.txt | grep -q "^memprof: tracking '$WORKLOADS/io' into 'io.bin'" || fail_ "first line: $(head -1 err.txt)"
grep -qx "to stderr" err.txt || fail_ "the program's stderr is missing"
grep -q "^memprof: wrote 'io.bin'" err.txt || fail_ "no summary line"
grep -qx "memprof: next: memprof flamegraph io.bin" err.txt || fail_ "no next-step line"

# The environment the program sees is the one it would see without memprof
# (but "_", which the shell sets to the command it runs).
env -u MEMPROF_SRCDIR env | grep -v '^_=' | sort > plain.txt
"$MEMPROF" run -q -f -o env.bin env -u MEMPROF_SRCDIR env | grep -v '^_=' | sort > tracked.txt
diff plain.txt tracked.txt >&2 || fail_ "the environment differs under memprof"
# An ignored SIGPIPE is inherited as ignored, a default one as default.
trap '' PIPE
"$MEMPROF" run -q -f -o s.bin grep SigIgn /proc/self/status > ign.txt
trap - PIPE
"$MEMPROF" run -q -f -o s.bin grep SigIgn /proc/self/status > dfl.txt
[ $(( 0x$(awk '{print $2}' ign.txt) & 0x1000 )) -ne 0 ] || fail_ "SIGPIPE ignored by the caller is not ignored in the program"
[ $(( 0x$(awk '{print $2}' dfl.txt) & 0x1000 )) -eq 0 ] || fail_ "the program inherited memprof's own ignored SIGPIPE"

# The status is the program's, but for a capture memprof could not write (a full disk): a run
# that succeeded then fails, saying why; a program's own failure stays its own.
keep -o out.txt -e err.txt "$MEMPROF" run -f -o /dev/full "$WORKLOADS/io" 0 < /dev/null
expect_rc 1 "a capture on a full disk"
grep -q "^memprof: warning: cannot [a-z]* '/dev/full': No space left on device; the capture .*\(incomplete\|lost\)$" err.txt ||
	fail_ "a capture on a full disk: $(cat err.txt)"
! grep -q "^memprof: wrote" err.txt || fail_ "a capture on a full disk: $(cat err.txt)"
keep -o out.txt -e err.txt "$MEMPROF" run -q -f -o /dev/full "$WORKLOADS/io" 42 < /dev/null
expect_rc 42 "a capture on a full disk, the program failing"

# Started with its standard streams closed (a daemon's way), memprof keeps
# its files off them: its messages do not land in the capture or a report,
# and the program starts with the same streams closed. fdcheck exits with
# which of 0 to 2 it found open (bits), times 10, plus the number its first
# open() got (9 past 2).
cat > fdcheck.c <<'C'
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
void *volatile sink;
int main(void)
{
	int open_std = 0, fd;
	for (fd = 0; fd < 3; fd++)
		if (fcntl(fd, F_GETFD) >= 0)
			open_std |= 1 << fd;
	sink = malloc(5);
	fd = open("/dev/null", O_RDONLY);
	return open_std * 10 + (fd < 3 ? fd : 9);
}
C
cc -o fdcheck fdcheck.c || framework_failure_ "cc"
for closed in "<&- >&- 2>&-" "2>&-" ">&- 2>&-"; do
	eval "./fdcheck $closed"; want=$?
	rm -f closed.bin
	eval "\"\$MEMPROF\" run -o closed.bin ./fdcheck $closed"; rc=$?
	[ "$rc" = "$want" ] || fail_ "streams closed ($closed): the program exited $rc, $want untracked"
	keep -o closed.json -e err.txt "$MEMPROF" stats --json -o - closed.bin
	expect_rc 0 "streams closed ($closed): the capture does not read"
	grep -q '"total_num_allocations": *1,' closed.json || fail_ "streams closed ($closed): $(head -c 300 closed.json)"
	"$MEMPROF" flamegraph -f -o open.html closed.bin 2> /dev/null || fail_ "flamegraph ($closed)"
	eval "\"\$MEMPROF\" flamegraph -f -o closed.html closed.bin $closed" || fail_ "flamegraph ($closed)"
	cmp -s open.html closed.html || fail_ "flamegraph ($closed): the report differs from one written with the streams open"
done
exit 0
