/*
 * A library for the injection tests: mp_fixture_entry(arg) acts on "ACTION:VALUE".
 *   write:PATH  append "call=N arg=ARG pid=PID" to PATH and return 42 (N counts calls, so a
 *               second injection that reuses the loaded library shows call=2)
 *   exit:N      end the whole process with _exit(N)
 *   crash:      dereference a null pointer
 *   sleep:N     sleep N seconds, return 43
 *   raise:      send SIGUSR1 to the calling thread itself, return 44 (the injector holds it
 *               back during the call and must deliver it afterwards)
 */
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

long mp_fixture_entry(const char *arg);

static int calls;

long mp_fixture_entry(const char *arg)
{
	FILE *f;

	calls++;
	if (!strncmp(arg, "write:", 6)) {
		f = fopen(arg + 6, "a");
		if (!f)
			return -1;
		fprintf(f, "call=%d arg=%s pid=%d\n", calls, arg, (int)getpid());
		return fclose(f) == 0 ? 42 : -1;
	}
	if (!strncmp(arg, "exit:", 5))
		_exit(atoi(arg + 5));
	if (!strncmp(arg, "crash:", 6))
		return *(volatile long *)(long)(calls - calls);
	if (!strncmp(arg, "sleep:", 6)) {
		sleep((unsigned)atoi(arg + 6));
		return 43;
	}
	if (!strncmp(arg, "raise:", 6)) {
		syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), SIGUSR1);
		return 44;
	}
	return -2;
}
