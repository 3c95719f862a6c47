/*
 * Workload: allocates 7 x 77 bytes (before_end), waits 100 ms so the tracker
 * flushes, then ends the way argv[1] says: segv, abort, exit N, _exit N,
 * return N, wait (sleeps until killed), stdin (waits for input, then exits),
 * or term (counts SIGTERMs: after the first it waits 300 ms for more, then
 * exits with the count as its status).
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void *volatile sink[7];
static volatile sig_atomic_t terms;

static void on_term(int sig)
{
	(void)sig;
	terms++;
}

__attribute__((noinline)) static void *before_end(void)
{
	void *p = malloc(77); /* SITE:before_end */
	__asm__ volatile("" ::: "memory");
	return p;
}

int main(int argc, char **argv)
{
	struct timespec t = { 0, 100 * 1000 * 1000 };
	const char *how = argc > 1 ? argv[1] : "return";
	int code = argc > 2 ? atoi(argv[2]) : 0;
	for (int i = 0; i < 7; i++)
		sink[i] = before_end();
	nanosleep(&t, NULL);
	if (!strcmp(how, "segv"))
		*(volatile int *)sink[0] = *(volatile int *)(long)(code - code);
	if (!strcmp(how, "abort"))
		abort();
	if (!strcmp(how, "exit"))
		exit(code);
	if (!strcmp(how, "_exit"))
		_exit(code);
	if (!strcmp(how, "wait")) {
		if (write(1, "waiting\n", 8) != 8)
			return 1;
		for (;;)
			pause();
	}
	if (!strcmp(how, "term")) {
		struct timespec grace = { 0, 300 * 1000 * 1000 };
		signal(SIGTERM, on_term);
		if (write(1, "waiting\n", 8) != 8)
			return 100;
		while (!terms)
			pause();
		while (nanosleep(&grace, &grace) < 0)
			;
		return terms;
	}
	if (!strcmp(how, "stdin")) {
		char c;
		return read(0, &c, 1) == 1 ? code : 1;
	}
	return code;
}
