/*
 * Workload: one member of a process tree, run by a shell (tests/e2e/family-shell.sh).
 *
 * "family hold N SIZE": allocates N blocks of SIZE bytes (hold_alloc), waits
 * 100 ms, writes a line to the FIFO "ready", waits for a line on the FIFO
 * "go", frees them and exits 0.
 * "family once N SIZE": allocates N blocks of SIZE bytes (once_alloc), waits
 * 100 ms, frees them and exits 0.
 * Nothing else allocates (no stdio), so each process's figures are exact.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BARRIER() __asm__ volatile("" ::: "memory")
#define MAX_BLOCKS 64

static void *blocks[MAX_BLOCKS];
/* (Different bodies: the compiler may fold identical functions into one.) */
static volatile int held, onced;

__attribute__((noinline)) static void *hold_alloc(size_t size)
{
	void *p = malloc(size); /* SITE:hold_alloc */
	held++;
	BARRIER();
	return p;
}

__attribute__((noinline)) static void *once_alloc(size_t size)
{
	void *p = malloc(size); /* SITE:once_alloc */
	onced += 2;
	BARRIER();
	return p;
}

/* One line through a FIFO: written to "ready", read from "go". */
static int signal_line(const char *fifo, int write_it)
{
	char c = '\n';
	int fd = open(fifo, write_it ? O_WRONLY : O_RDONLY);
	ssize_t n;
	if (fd < 0)
		return -1;
	n = write_it ? write(fd, &c, 1) : read(fd, &c, 1);
	close(fd);
	return n == 1 ? 0 : -1;
}

int main(int argc, char **argv)
{
	int n, hold;
	size_t size;
	if (argc != 4 || (n = atoi(argv[2])) < 1 || n > MAX_BLOCKS || !(size = strtoul(argv[3], NULL, 10)))
		return 2;
	hold = !strcmp(argv[1], "hold");
	for (int i = 0; i < n; i++)
		blocks[i] = hold ? hold_alloc(size) : once_alloc(size);
	usleep(100000);
	if (hold && (signal_line("ready", 1) < 0 || signal_line("go", 0) < 0))
		return 1;
	for (int i = 0; i < n; i++)
		free(blocks[i]);
	return 0;
}
