/* Helpers for the tracker that never allocate: numbers, environment, raw pages. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/futex.h>

#include "lib/tracker/base.h"

size_t mp_u64_to_dec(char *buf, uint64_t v)
{
	char tmp[24];
	size_t n = 0, i;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	buf[n] = '\0';
	return n;
}

void mp_write_stderr(const char *a, const char *b, const char *c)
{
	/* One write, so the line stays whole among the program's own output. */
	char line[1024];
	size_t n = 0;
	const char *parts[4] = { "memprof: ", a, b, c };
	for (int i = 0; i < 4; i++) {
		size_t l;
		if (!parts[i])
			continue; /* (not even memcpy(..., NULL, 0): undefined, a trap in a sanitized build) */
		l = strlen(parts[i]);
		if (l > sizeof(line) - 2 - n)
			l = sizeof(line) - 2 - n;
		memcpy(line + n, parts[i], l);
		n += l;
	}
	line[n++] = '\n';
	while (write(2, line, n) < 0 && errno == EINTR)
		;
}

ssize_t mp_read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t got = 0;
	if (fd < 0)
		return -1;
	while (got < size) {
		ssize_t n = read(fd, buf + got, size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	return (ssize_t)got;
}

extern char **environ;

const char *mp_getenv(const char *name)
{
	/* Not getenv(): the program may define its own (bash does). */
	size_t len = strlen(name);
	if (!environ)
		return NULL;
	for (char **e = environ; *e; e++)
		if (!strncmp(*e, name, len) && (*e)[len] == '=')
			return *e + len + 1;
	return NULL;
}

int mp_dec_u64(const char *v, uint64_t *out)
{
	uint64_t r = 0;
	if (!*v)
		return -1;
	for (; *v; v++) {
		if (*v < '0' || *v > '9' || r > UINT64_MAX / 10)
			return -1;
		r = r * 10 + (uint64_t)(*v - '0');
	}
	*out = r;
	return 0;
}

uint64_t mp_env_u64(const char *name, uint64_t dflt)
{
	const char *v = mp_getenv(name);
	uint64_t r;
	return v && mp_dec_u64(v, &r) == 0 ? r : dflt;
}

void *mp_pages(size_t size)
{
	/* A raw syscall: the mmap hook must not see the tracker's own memory. */
	long p = syscall(SYS_mmap, NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, (off_t)0);
	return p == -1 ? NULL : (void *)p;
}

void mp_pages_free(void *p, size_t size)
{
	if (p)
		syscall(SYS_munmap, p, size);
}

int mp_pages_grow(void **arr, size_t *cap, size_t need, size_t elem, size_t first)
{
	size_t n = *cap ? *cap : first;
	void *p;
	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	p = mp_pages(n * elem);
	if (!p)
		return -1;
	if (*arr) {
		memcpy(p, *arr, *cap * elem);
		mp_pages_free(*arr, *cap * elem);
	}
	*arr = p;
	*cap = n;
	return 0;
}

void mp_lock_slow(int *l, int c)
{
	for (int spin = 0; spin < 100 && c; spin++) {
		__builtin_ia32_pause();
		c = __atomic_load_n(l, __ATOMIC_RELAXED);
		if (!c && __atomic_compare_exchange_n(l, &c, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return;
	}
	if (c != 2)
		c = __atomic_exchange_n(l, 2, __ATOMIC_ACQUIRE);
	while (c) {
		syscall(SYS_futex, l, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
		c = __atomic_exchange_n(l, 2, __ATOMIC_ACQUIRE);
	}
}

void mp_unlock_wake(int *l)
{
	syscall(SYS_futex, l, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void mp_exe_path(char *buf, size_t size)
{
	char abs[PATH_MAX];
	const char *execfn;
	ssize_t n = readlink("/proc/self/exe", buf, size - 1);
	if (n > 0) {
		buf[n] = '\0';
		return;
	}
	/* Without /proc (a chroot that does not mount it): the name exec was given, made absolute. */
	execfn = (const char *)getauxval(AT_EXECFN);
	buf[0] = '\0';
	if (execfn && realpath(execfn, abs) && strlen(abs) < size)
		memcpy(buf, abs, strlen(abs) + 1);
}

/* The socket's directory: ours, and nobody else's (mode 0700), or we do not use it. */
static int own_dir(const char *dir)
{
	struct stat st;
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -1;
	if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 077))
		return -1;
	return 0;
}

int mp_user_dir(char *dir, size_t cap)
{
	char num[24];
	size_t l = mp_u64_to_dec(num, geteuid());
	if (13 + l + 1 > cap)
		return -1;
	memcpy(dir, "/tmp/memprof-", 13);
	memcpy(dir + 13, num, l + 1);
	return own_dir(dir) < 0 ? -1 : (int)(13 + l);
}
