#!/bin/bash
# A program that changes its credentials with capabilities kept in its own thread only (setpriv
# drops to another user with PR_SET_KEEPCAPS and capset, then sets its groups) must not be
# killed by the tracker's threads: glibc makes every thread repeat set*id calls and aborts the
# process when one fails. Under memprof run, preloaded by hand, and paused with a control socket.
. "${MEMPROF_SRCDIR}/tests/e2e/init.sh"

[ "$(id -u)" -eq 0 ] || skip_ "changing to another user needs root"
command -v setpriv > /dev/null || skip_ "no setpriv"
drop=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
mkdir -m 1777 shared && chmod 711 "$T" || framework_failure_ "mkdir"

mp run -o s.bin "${drop[@]}" /bin/sh -c 'id -u; echo done'
expect_rc 0 "memprof run setpriv"
[ "$(cat out)" = "$(printf '65534\ndone')" ] || fail_ "the program's output: $(cat out)"
"$MEMPROF" parse s.bin > p || fail_ "parse s.bin"
grep -q '^TRAILER .*end=exit exit_code=0 ' p || fail_ "trailer: $(grep ^TRAILER p)"
[ "$(count '^ALLOC ' p)" -gt 0 ] || fail_ "setpriv's allocations are not in the capture"

for env in "MEMPROF_OUTPUT=$T/shared/d.%p.bin" "MEMPROF_PAUSED=1 MEMPROF_OUTPUT=$T/shared/q.%p.bin"; do
	# shellcheck disable=SC2086
	run env $env LD_PRELOAD="$TRACKER_LIB" "${drop[@]}" /bin/sh -c 'id -u; echo done'
	expect_rc 0 "setpriv with the tracker preloaded ($env)"
	expect_no_err "setpriv ($env)"
	[ "$(cat out)" = "$(printf '65534\ndone')" ] || fail_ "the program's output ($env): $(cat out)"
done
f=$(echo shared/d.*.bin)
[ -s "$f" ] || fail_ "no capture of the preloaded run"
mp stats "$f"
expect_rc 0 "stats of the preloaded run"

# A fork while another thread is inside a set*id call (whose wrapper holds the tracker's lock
# while its threads are away): the child's own setuid waited for that lock forever, on every
# run of 300 forks. With and without --follow-fork.
cat > forkuid.c <<'C'
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
static volatile int stop;
static void *setter(void *arg)
{
	while (!stop)
		if (setuid(0))
			exit(3);
	return arg;
}
int main(void)
{
	pthread_t t;
	pthread_create(&t, NULL, setter, NULL);
	for (int i = 0; i < 300; i++) {
		int st;
		pid_t p = fork();
		if (p == 0)
			_exit(setuid(0) ? 4 : 0);
		if (waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st))
			return 1;
	}
	stop = 1;
	pthread_join(t, NULL);
	puts("300 forks");
	return 0;
}
C
cc -o forkuid forkuid.c -lpthread || framework_failure_ "cc forkuid"
for follow in "" --follow-fork; do
	run timeout 120 "$MEMPROF" run -q -f $follow -o fu.bin ./forkuid
	[ "$rc" -eq 0 ] && [ "$(cat out)" = "300 forks" ] || fail_ "forks beside setuid $follow: status $rc: $(cat out) $(cat err)"
done
exit 0
