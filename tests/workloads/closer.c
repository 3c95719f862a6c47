/*
 * Workload: a daemon that closes every descriptor it inherited, then works.
 *   closer HOW T N [exec PROG ARGS...]
 * makes 5 allocations of 111 bytes (closer_before), closes every descriptor
 * above 2 the way HOW says:
 *   loop         close() on 3 .. 1023, one by one
 *   closefrom    closefrom(3)
 *   close_range  close_range(3, ~0U, 0)
 *   raw          chdir("/"), then the close_range system call itself, past any
 *                library
 *   daemon       none: glibc's daemon(1, 1) instead (the parent leaves by an
 *                _exit inside the C library; the child goes on below)
 *   fds          none: says on standard error which descriptors below 100 are
 *                open (what a program started with some closed may find)
 *   dup2         none: at 100, and at every number above 2 open at the start
 *                (the tracker's, tracked), puts a pipe's write end with
 *                dup2 (dup3 every other time), writes a byte through it,
 *                closes it there, and checks that the read end got the
 *                byte, then the end of the pipe
 * waits 200 ms (the other ends of what it closed see them closed before it
 * goes on), then opens a socket pair of its own and puts a message in it,
 * starts T threads (closer-<i>) that each make N allocations of 222 bytes
 * (closer_work) and free them, all alive at once after their first (each
 * needs a ring), reads its message back and says whether it was intact:
 * "message intact" (exit 0) or "message changed" (exit 1); then closes one
 * end and checks the other sees it ("socket stayed open", exit 1).
 * Every allocation is made by closer_before or closer_work, so a test can
 * count them by stack; with "exec", it then replaces itself with PROG.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

void *volatile sink;
static int per_thread;
static pthread_barrier_t all_started;

__attribute__((noinline)) void *closer_before(size_t size)
{
	void *p = malloc(size); /* SITE:closer_before */
	__asm__ volatile("" ::: "memory");
	return p;
}

__attribute__((noinline)) void *closer_work(size_t size)
{
	void *p = malloc(size); /* SITE:closer_work */
	__asm__ volatile("" ::: "memory");
	return p;
}

static void *worker(void *arg)
{
	char name[16];
	snprintf(name, sizeof(name), "closer-%d", (int)(long)arg);
	pthread_setname_np(pthread_self(), name);
	for (int i = 0; i < per_thread; i++) {
		void *volatile p = closer_work(222);
		free(p);
		/* Every thread alive at once after its first: each needs a ring of its own. */
		if (i == 0)
			pthread_barrier_wait(&all_started);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static const char msg[] = "the program's own bytes";
	char buf[64] = { 0 };
	pthread_t tids[64];
	int threads, sv[2];
	if (argc < 4 || (threads = atoi(argv[2])) < 0 || threads > 64) {
		fprintf(stderr, "usage: closer loop|closefrom|close_range|raw|daemon|fds|dup2 THREADS N [exec PROG ARGS...]\n");
		return 2;
	}
	per_thread = atoi(argv[3]);
	for (int i = 0; i < 5; i++)
		sink = closer_before(111);
	if (!strcmp(argv[1], "loop")) {
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
	} else if (!strcmp(argv[1], "closefrom")) {
		closefrom(3);
	} else if (!strcmp(argv[1], "close_range")) {
		if (close_range(3, ~0U, 0) < 0)
			return 3;
	} else if (!strcmp(argv[1], "raw")) {
		if (chdir("/") < 0 || syscall(SYS_close_range, 3, ~0U, 0) < 0)
			return 3;
	} else if (!strcmp(argv[1], "daemon")) {
		if (daemon(1, 1) < 0)
			return 3;
	} else if (!strcmp(argv[1], "dup2")) {
		int nums[64], n = 0;
		nums[n++] = 100;
		for (int fd = 3; fd < 1024 && n < 64; fd++)
			if (fd != 100 && fcntl(fd, F_GETFD) >= 0)
				nums[n++] = fd;
		for (int i = 0; i < n; i++) {
			int p[2];
			char c = 0;
			if (pipe(p) < 0 || (i % 2 ? dup3(p[1], nums[i], O_CLOEXEC) : dup2(p[1], nums[i])) != nums[i])
				return 3;
			close(p[1]);
			if (write(nums[i], "x", 1) != 1 || read(p[0], &c, 1) != 1 || c != 'x') {
				printf("descriptor %d is not the program's pipe\n", nums[i]);
				return 1;
			}
			close(nums[i]);
			/* (Not waiting: a write end still open reads as EAGAIN.) */
			if (fcntl(p[0], F_SETFL, O_NONBLOCK) < 0 || read(p[0], &c, 1) != 0) {
				printf("the pipe at %d stayed open\n", nums[i]);
				return 1;
			}
			close(p[0]);
		}
	} else if (!strcmp(argv[1], "fds")) {
		for (int fd = 0; fd < 100; fd++)
			if (fcntl(fd, F_GETFD) >= 0)
				fprintf(stderr, "open %d\n", fd);
	} else {
		return 2;
	}
	/* A moment for whoever reads the other ends of what it closed to see them closed first. */
	usleep(200 * 1000);
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0 || write(sv[1], msg, sizeof(msg)) != sizeof(msg))
		return 4;
	if (threads && pthread_barrier_init(&all_started, NULL, (unsigned)threads))
		return 5;
	for (int i = 0; i < threads; i++)
		if (pthread_create(&tids[i], NULL, worker, (void *)(long)i))
			return 5;
	for (int i = 0; i < threads; i++)
		pthread_join(tids[i], NULL);
	if (read(sv[0], buf, sizeof(buf)) != sizeof(msg) || memcmp(buf, msg, sizeof(msg))) {
		printf("message changed\n");
		return 1;
	}
	close(sv[1]);
	if (fcntl(sv[0], F_SETFL, O_NONBLOCK) < 0 || read(sv[0], buf, 1) != 0) {
		printf("socket stayed open\n");
		return 1;
	}
	printf("message intact\n");
	fflush(stdout);
	if (argc > 5 && !strcmp(argv[4], "exec")) {
		execv(argv[5], argv + 5);
		return 6;
	}
	return 0;
}
