/*
 * Workload: allocates 1 x 123 bytes (before_exec), then replaces itself with
 * the program named by argv[1] (with the remaining arguments), or, with
 * "fork" as argv[1], forks a child that does so and waits for it.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void *volatile sink;

__attribute__((noinline)) static void *before_exec(void)
{
	void *p = malloc(123); /* SITE:before_exec */
	__asm__ volatile("" ::: "memory");
	return p;
}

int main(int argc, char **argv)
{
	sink = before_exec();
	if (argc < 2)
		return 2;
	if (!strcmp(argv[1], "fork")) {
		int status;
		pid_t pid = fork();
		if (pid == 0) {
			execvp(argv[2], argv + 2);
			_exit(127);
		}
		waitpid(pid, &status, 0);
		return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
	}
	execvp(argv[1], argv + 1);
	return 127;
}
