#!/bin/bash
# Under a seccomp filter that refuses system calls memprof or its tracker use (as container
# runtimes and service managers set): the tracker finds another way where there is one, and
# memprof says in one line which call it could not make where there is none, leaving no
# capture or socket behind.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"

# refuse NAME PROG ARGS...: PROG runs with the system call NAME failing with EPERM.
cat > refuse.c <<'C'
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
static const struct { const char *name; int nr; } calls[] = {
	{ "memfd_create", SYS_memfd_create }, { "eventfd2", SYS_eventfd2 },
	{ "timerfd_create", SYS_timerfd_create }, { "epoll_create1", SYS_epoll_create1 },
	{ "membarrier", SYS_membarrier }, { "pidfd_open", SYS_pidfd_open },
};
int main(int argc, char **argv)
{
	int nr = -1;
	for (size_t i = 0; argc > 2 && i < sizeof(calls) / sizeof(calls[0]); i++)
		if (!strcmp(argv[1], calls[i].name))
			nr = calls[i].nr;
	if (nr < 0)
		return 99;
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		perror("seccomp");
		return 98;
	}
	execvp(argv[2], argv + 2);
	perror("exec");
	return 97;
}
C
cc -o refuse refuse.c || framework_failure_ "cc"
./refuse memfd_create true || framework_failure_ "no seccomp filters here"

# allocs' known counts, through the rings whatever they are made of.
check_allocs() { # capture, what
	keep -o s.json -e err.txt "$MEMPROF" stats --json -o - "$1"
	expect_rc 0 "$2: stats"
	python3 - "$2" s.json <<'PY' || fail_ "$2: counts"
import json, sys
d = json.load(open(sys.argv[2]))
n = (d["total_num_allocations"], d["total_num_frees"])
if n != (1023, 1013):
    sys.exit("%s: %d allocations, %d frees, expected 1023 and 1013" % (sys.argv[1], *n))
PY
}
# Without memfd_create: an unnamed file in /dev/shm (or TMPDIR, /tmp) holds the rings.
for call in memfd_create membarrier pidfd_open; do
	run ./refuse $call "$MEMPROF" run -f -o $call.bin "$WORKLOADS/allocs"
	expect_rc 0 "without $call"
	grep -v "^memprof: \(tracking\|wrote\|next\|note\)" err && fail_ "without $call: $(cat err)"
	check_allocs $call.bin "without $call"
done
# ...and so does a tracker preloaded by hand, writing its own capture.
run ./refuse memfd_create env MEMPROF_OUTPUT=direct.bin LD_PRELOAD="$TRACKER_LIB" "$WORKLOADS/allocs"
expect_rc 0 "preloaded without memfd_create"
expect_no_err "preloaded without memfd_create"
check_allocs direct.bin "preloaded without memfd_create"

# Without /proc (a chroot that does not mount it; here a mount namespace that hides it, where
# we may make one): the program's path comes from the name exec was given, so its frames are
# named; the RSS is not sampled, and the tracker says so once.
if unshare -m true 2> /dev/null; then
	run unshare -m sh -c 'mount -t tmpfs none /proc && exec "$@"' sh \
		"$MEMPROF" run -f -o noproc.bin "$WORKLOADS/allocs"
	expect_rc 0 "without /proc"
	[ "$(grep -c "^memprof: cannot open '/proc/self/statm' (No such file or directory); the resident set size is not sampled$" err)" = 1 ] ||
		fail_ "without /proc: $(cat err)"
	check_allocs noproc.bin "without /proc"
	"$MEMPROF" parse --stacks noproc.bin > p || fail_ "without /proc: parse"
	head -1 p | grep -qF "exe=\"$(realpath "$WORKLOADS/allocs")\"" || fail_ "without /proc: $(head -1 p)"
	grep -q '^ALLOC .*size=1000 .*frames=\["make_kept","main",' p || fail_ "without /proc: main's frames unnamed"
fi

# A program that locks its memory (mlockall) under a memory lock limit, as an unprivileged user:
# the rings' 2 GiB of reserved address space counted against RLIMIT_MEMLOCK, so the program's
# mlockall(MCL_CURRENT) failed under memprof alone. Now the reservation goes, the 40 threads
# get rings mapped as they come, and every allocation is there. With MCL_FUTURE too, every
# page the tracker maps is locked and counted: it may run out, and then it says so (no silent
# gap in the capture); the program's own calls are its own.
if [ "$(id -u)" -eq 0 ] && command -v setpriv > /dev/null && command -v prlimit > /dev/null; then
	cat > locker.c <<'C'
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
static int failed;
__attribute__((noinline)) static void *locker_work(void *arg)
{
	for (int i = 0; i < 1000; i++) {
		void *volatile p = malloc(100 + i % 50);
		if (!p) /* (with MCL_FUTURE, a new arena's pages may be refused) */
			__atomic_add_fetch(&failed, 1, __ATOMIC_RELAXED);
		free(p);
	}
	__asm__ volatile("" ::: "memory");
	return arg;
}
int main(int argc, char **argv)
{
	int n = atoi(argv[2]), made = 0, flags = MCL_CURRENT | (argv[1][0] == 'f' ? MCL_FUTURE : 0);
	pthread_attr_t attr;
	pthread_t t[64];
	if (mlockall(flags)) {
		printf("mlockall: %s\n", strerror(errno));
		return 1;
	}
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (; made < n && !pthread_create(&t[made], &attr, locker_work, NULL); made++)
		;
	for (int i = 0; i < made; i++)
		pthread_join(t[i], NULL);
	printf("threads %d\nfailed %d\n", made, failed);
	return 0;
}
C
	cc -g -O1 -fno-builtin -o locker locker.c -lpthread || framework_failure_ "cc locker"
	chmod 755 locker
	# (Copies nobody may run: see share in init.sh.)
	share memprof "$MEMPROF"
	share tracker "$TRACKER_LIB"
	asnobody() { prlimit --memlock=8388608:8388608 setpriv --reuid=nobody --regid=nogroup --clear-groups \
		--inh-caps=-all --bounding-set=-all env MEMPROF_LIBDIR="$SHARED_BIN" "$@"; }
	asnobody ./locker current 40 > out || framework_failure_ "locker runs untracked: $(cat out)"
	run asnobody "$memprof" run -f -o "$T/shared/lock.bin" ./locker current 40
	expect_rc 0 "mlockall under memprof"
	[ "$(cat out)" = "$(printf 'threads 40\nfailed 0')" ] || fail_ "mlockall under memprof: '$(cat out)': $(cat err)"
	"$MEMPROF" parse --stacks "$T/shared/lock.bin" > p || fail_ "mlockall: parse"
	expect_count 40000 '^ALLOC .*frames=\["locker_work"' p
	run asnobody "$memprof" run -f -o "$T/shared/lockf.bin" ./locker future 12
	expect_rc 0 "mlockall(MCL_FUTURE) under memprof"
	"$MEMPROF" parse --stacks "$T/shared/lockf.bin" > p || fail_ "mlockall(MCL_FUTURE): parse"
	made=$(sed -n 's/^threads //p' out)
	failed=$(sed -n 's/^failed //p' out)
	got=$(grep -c '^ALLOC .*frames=\["locker_work"' p)
	# (A malloc the lock limit made fail is no allocation: the program counts those.)
	[ "$got" = $((made * 1000 - failed)) ] || grep -q "tracking stopped" err ||
		fail_ "mlockall(MCL_FUTURE): $got of $((made * 1000 - failed)) allocations, and no word why: $(cat err)"
fi

# What memprof itself needs: a one-line error naming the call, status 1, nothing left behind.
mkdir sockets || framework_failure_ "mkdir"
for call in eventfd2 timerfd_create epoll_create1; do
	run env TMPDIR="$PWD/sockets" ./refuse $call "$MEMPROF" run -o $call.bin "$WORKLOADS/allocs"
	expect_rc 1 "without $call"
	expect_one_line_err "without $call"
	grep -q "^memprof: cannot set up [a-z ]*: cannot make .*($call): Operation not permitted$" err ||
		fail_ "without $call: $(cat err)"
	[ ! -e $call.bin ] || fail_ "without $call: an empty capture was left"
	[ ! -s out ] || fail_ "without $call: the program ran: $(cat out)"
	[ -z "$(ls -A sockets)" ] || fail_ "without $call: a socket directory was left: $(ls sockets)"
done
exit 0
