/* Workload: copies stdin to stdout byte for byte, writes "to stderr" on stderr, exits with argv[1]. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char buf[4096];
	ssize_t n;
	while ((n = read(0, buf, sizeof(buf))) > 0)
		if (write(1, buf, (size_t)n) != n)
			return 1;
	fputs("to stderr\n", stderr);
	return argc > 1 ? atoi(argv[1]) : 0;
}
