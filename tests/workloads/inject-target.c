/*
 * A target for the injection tests.
 *
 * inject-target run FIFO EXPECTED SLEEPS ORDER
 *   Threads: a reader blocked in read() on FIFO, a sleeper doing SLEEPS nanosleeps of 20 ms
 *   (a line every 10), two workers hammering malloc/free of random sizes with checked
 *   contents, and a spawner that keeps creating short-lived threads (which allocate too);
 *   ORDER "rs" starts the reader before the sleeper, "sr" the other way round
 *   (the injector picks the first safe thread). When the reader reaches end of file, the
 *   workers stop; the program then prints what the reader got and whether every sleep
 *   lasted its full time, and exits 0 when all is as expected (the FIFO carried exactly
 *   EXPECTED), else 1.
 * inject-target stuck
 *   Two threads waiting on locks forever (futex): never at a safe point.
 * inject-target pause [undumpable]
 *   One thread in pause() forever; prints "SIGUSR1" for each SIGUSR1 it gets. With
 *   "undumpable", it first makes itself not dumpable (prctl PR_SET_DUMPABLE 0).
 * inject-target spin
 *   A thread spinning in a loop of its own code that keeps values in xmm0-xmm15, r12-r15
 *   and errno and checks them all the time, while the main thread waits for it (futex),
 *   so an injection must interrupt the loop and restore every register exactly. Runs
 *   until SIGTERM, then prints the number of mismatches and exits 0 when there were none.
 * Each prints "ready" once its threads run.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static atomic_int stop;
static const char *fifo_path;
static char got[4096];
static size_t got_len;
static int read_error;
static int sleeps, sleep_failures;
static int worker_failures[2];

static void *reader(void *unused)
{
	int fd = open(fifo_path, O_RDONLY);
	ssize_t n;

	(void)unused;
	if (fd < 0) {
		read_error = errno;
		return NULL;
	}
	while ((n = read(fd, got + got_len, sizeof(got) - 1 - got_len)) > 0)
		got_len += (size_t)n;
	if (n < 0)
		read_error = errno;
	close(fd);
	return NULL;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *sleeper(void *unused)
{
	(void)unused;
	for (int i = 1; i <= sleeps; i++) {
		struct timespec req = { 0, 20 * 1000 * 1000 };
		uint64_t t0 = now_ns();
		if (nanosleep(&req, NULL) != 0 || now_ns() - t0 < 20 * 1000 * 1000ull)
			sleep_failures++;
		if (i % 10 == 0)
			printf("sleep %d\n", i);
	}
	return NULL;
}

static void *worker(void *arg)
{
	int id = (int)(intptr_t)arg;
	uint64_t x = 0x9e3779b97f4a7c15ull * (uint64_t)(id + 1);
	unsigned char *slot[64] = { 0 };
	size_t len[64] = { 0 };

	while (!atomic_load(&stop)) {
		size_t i, size;
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		i = x % 64;
		if (slot[i]) {
			if (slot[i][0] != (unsigned char)i || slot[i][len[i] - 1] != (unsigned char)(i ^ 0x5a))
				worker_failures[id]++;
			free(slot[i]);
			slot[i] = NULL;
			continue;
		}
		size = (x >> 8) % 16 == 0 ? 2 + (x >> 16) % 300000 : 2 + (x >> 16) % 1024;
		slot[i] = malloc(size);
		if (!slot[i]) {
			worker_failures[id]++;
			continue;
		}
		len[i] = size;
		slot[i][0] = (unsigned char)i;
		slot[i][size - 1] = (unsigned char)(i ^ 0x5a);
	}
	for (int i = 0; i < 64; i++)
		free(slot[i]);
	return NULL;
}

#if defined(__x86_64__)
static atomic_int spin_stop;
static const uint64_t spin_pattern[20] = {
	0x0101010101010101, 0x0202020202020202, 0x0303030303030303, 0x0404040404040404,
	0x0505050505050505, 0x0606060606060606, 0x0707070707070707, 0x0808080808080808,
	0x0909090909090909, 0x0a0a0a0a0a0a0a0a, 0x0b0b0b0b0b0b0b0b, 0x0c0c0c0c0c0c0c0c,
	0x0d0d0d0d0d0d0d0d, 0x0e0e0e0e0e0e0e0e, 0x0f0f0f0f0f0f0f0f, 0x1010101010101010,
	0x1111111111111111, 0x1212121212121212, 0x1313131313131313, 0x1414141414141414,
};

/* Load the patterns into xmm0-15 and r12-15, then check them n times: 0, or 1 on a mismatch. */
static long spin_check(long n)
{
	long bad;

#define LOADX(i) "movq " #i "*8(%[p]), %%xmm" #i "\n\t"
#define CHECKX(i) "movq %%xmm" #i ", %%rax\n\tcmp " #i "*8(%[p]), %%rax\n\tjne 2f\n\t"
	__asm__ volatile(
		LOADX(0) LOADX(1) LOADX(2) LOADX(3) LOADX(4) LOADX(5) LOADX(6) LOADX(7)
		LOADX(8) LOADX(9) LOADX(10) LOADX(11) LOADX(12) LOADX(13) LOADX(14) LOADX(15)
		"mov 128(%[p]), %%r12\n\tmov 136(%[p]), %%r13\n\tmov 144(%[p]), %%r14\n\tmov 152(%[p]), %%r15\n\t"
		"mov %[n], %%rcx\n"
		"1:\n\t"
		CHECKX(0) CHECKX(1) CHECKX(2) CHECKX(3) CHECKX(4) CHECKX(5) CHECKX(6) CHECKX(7)
		CHECKX(8) CHECKX(9) CHECKX(10) CHECKX(11) CHECKX(12) CHECKX(13) CHECKX(14) CHECKX(15)
		"cmp 128(%[p]), %%r12\n\tjne 2f\n\tcmp 136(%[p]), %%r13\n\tjne 2f\n\t"
		"cmp 144(%[p]), %%r14\n\tjne 2f\n\tcmp 152(%[p]), %%r15\n\tjne 2f\n\t"
		"dec %%rcx\n\tjnz 1b\n\t"
		"xor %[bad], %[bad]\n\tjmp 3f\n"
		"2:\n\tmov $1, %[bad]\n"
		"3:\n"
		: [bad] "=&r"(bad)
		: [p] "r"(spin_pattern), [n] "r"(n)
		: "rax", "rcx", "r12", "r13", "r14", "r15", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5",
		  "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "cc",
		  "memory");
#undef LOADX
#undef CHECKX
	return bad;
}

static void *spinner(void *arg)
{
	long *mismatches = arg;

	errno = 777;
	while (!atomic_load(&spin_stop))
		*mismatches += spin_check(100000);
	if (errno != 777)
		++*mismatches;
	return NULL;
}

static void on_term(int sig)
{
	(void)sig;
	atomic_store(&spin_stop, 1);
}
#endif

static void on_usr1(int sig)
{
	static const char msg[] = "SIGUSR1\n";
	(void)sig;
	if (write(1, msg, sizeof(msg) - 1) < 0)
		_exit(3);
}

static void *short_lived(void *arg)
{
	for (int i = 0; i < 10; i++)
		free(malloc(64 + (size_t)i * 100));
	return arg;
}

static void *spawner(void *arg)
{
	int *count = arg;

	while (!atomic_load(&stop)) {
		pthread_t t;
		if (pthread_create(&t, NULL, short_lived, NULL) == 0) {
			pthread_join(t, NULL);
			++*count;
		}
	}
	return NULL;
}

static void *wait_forever(void *m)
{
	pthread_mutex_lock(m);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t r, s, w[2], sp;
	int ok, spawned = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* under Yama ptrace_scope 1, let the tests' injector (not our parent) trace us */
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	if ((argc == 2 || argc == 3) && !strcmp(argv[1], "pause")) {
		if (argc == 3 && !strcmp(argv[2], "undumpable"))
			prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
		signal(SIGUSR1, on_usr1);
		printf("ready\n");
		for (;;)
			pause();
	}
	if (argc == 2 && !strcmp(argv[1], "spin")) {
#if defined(__x86_64__)
		pthread_t t;
		long mismatches = 0;
		signal(SIGTERM, on_term);
		pthread_create(&t, NULL, spinner, &mismatches);
		printf("ready\n");
		pthread_join(t, NULL);
		printf("spin: %ld register or errno mismatches\n", mismatches);
		return mismatches ? 1 : 0;
#else
		printf("spin: not on this machine\n");
		return 1;
#endif
	}
	if (argc == 2 && !strcmp(argv[1], "stuck")) {
		static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
		pthread_t t;
		pthread_mutex_lock(&m);
		pthread_create(&t, NULL, wait_forever, &m);
		printf("ready\n");
		pthread_join(t, NULL);
		return 0;
	}
	if (argc != 6 || strcmp(argv[1], "run")) {
		fprintf(stderr, "usage: inject-target run FIFO EXPECTED SLEEPS rs|sr | stuck | spin | pause [undumpable]\n");
		return 2;
	}
	fifo_path = argv[2];
	sleeps = atoi(argv[4]);
	if (!strcmp(argv[5], "rs")) {
		pthread_create(&r, NULL, reader, NULL);
		pthread_create(&s, NULL, sleeper, NULL);
	} else {
		pthread_create(&s, NULL, sleeper, NULL);
		pthread_create(&r, NULL, reader, NULL);
	}
	for (int i = 0; i < 2; i++)
		pthread_create(&w[i], NULL, worker, (void *)(intptr_t)i);
	pthread_create(&sp, NULL, spawner, &spawned);
	printf("ready\n");
	pthread_join(r, NULL);
	atomic_store(&stop, 1);
	pthread_join(s, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(w[i], NULL);
	pthread_join(sp, NULL);
	got[got_len] = '\0';
	ok = !read_error && !strcmp(got, argv[3]);
	printf("pipe: %s '%s'\n", ok ? "got" : "MISMATCH, got", got);
	if (read_error)
		printf("pipe: read error %s\n", strerror(read_error));
	printf("sleeper: %d sleeps, %d short or interrupted\n", sleeps, sleep_failures);
	for (int i = 0; i < 2; i++)
		printf("worker %d: %d corrupted or failed blocks\n", i, worker_failures[i]);
	printf("spawner: %s\n", spawned > 0 ? "threads came and went" : "NO THREADS");
	ok = ok && !sleep_failures && !worker_failures[0] && !worker_failures[1] && spawned > 0;
	return ok ? 0 : 1;
}
