/*
 * The tracker's own file descriptors, and the close hooks that keep them
 * open when the program closes everything it inherited (fds.h).
 */
#include <config.h>

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <linux/close_range.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/tracker/fds.h"

/* C library functions ours may not declare (glibc 2.34). */
int close_range(unsigned first, unsigned last, int flags);
void closefrom(int lowfd);

#define OWN_MAX 16

/*
 * Which descriptors, their files, and where the tracker keeps each number
 * (var, NULL for none): a slot is free when fd is -1.
 */
static struct {
	int fd;
	int *var;
	dev_t dev;
	ino_t ino;
} own[OWN_MAX] = { [0 ... OWN_MAX - 1] = { -1, NULL, 0, 0 } };

/* Whether fd names the file dev and ino name. */
static int same_file(int fd, dev_t dev, ino_t ino)
{
	struct stat st;
	return fstat(fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

/*
 * The lowest number the tracker's descriptors take: MP_FD_SPAN below the
 * descriptor limit, or below 1024 when the limit is higher (the kernel's
 * table grows to the highest number open), or 3 under a limit too low.
 */
static int fd_base(void)
{
	struct rlimit rl;
	rlim_t top = MP_FD_TOP;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < top)
		top = rl.rlim_cur;
	return top >= 4 * MP_FD_SPAN ? (int)(top - MP_FD_SPAN) : 3;
}

/* fd at a number from fd_base() up; fd when it cannot move. */
static int move_up(int fd)
{
	long base = fd_base(), to;
	if (fd >= base)
		return fd;
	to = syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, base);
	if (to < 0)
		return fd;
	syscall(SYS_close, fd);
	return (int)to;
}

/* Remember fd as the tracker's (its file too, and where it is kept); returns fd. */
static int keep(int fd, int *var)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return fd;
	for (int i = 0; i < OWN_MAX; i++) {
		int free_ = -1;
		/* The slot claimed first (-2 names no descriptor), then filled, then named. */
		if (!__atomic_compare_exchange_n(&own[i].fd, &free_, -2, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			continue;
		own[i].var = var;
		own[i].dev = st.st_dev;
		own[i].ino = st.st_ino;
		__atomic_store_n(&own[i].fd, fd, __ATOMIC_RELEASE);
		return fd;
	}
	/* (More than the tracker ever holds: that one goes unprotected.) */
	return fd;
}

int mp_fd_own(int fd)
{
	return fd < 0 ? -1 : keep(move_up(fd), NULL);
}

void mp_fd_own_at(int *var)
{
	if (*var >= 0)
		*var = keep(move_up(*var), var);
}

/* Whether fd is open. */
static int is_open(int fd)
{
	return syscall(SYS_fcntl, fd, F_GETFD) >= 0;
}

/* Whether this process has one thread (/proc/self/stat's 20th field); 0 when unknown. */
static int single_threaded(void)
{
	char buf[1024];
	ssize_t n = mp_read_file("/proc/self/stat", buf, sizeof(buf) - 1);
	int field = 2;
	const char *p = NULL;
	if (n <= 0)
		return 0;
	buf[n] = 0;
	/* After the command's closing parenthesis (the command may hold any byte). */
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == ')')
			p = buf + i + 1;
	if (!p)
		return 0;
	for (; *p && field < 20; p++)
		if (*p == ' ')
			field++;
	return p[0] == '1' && p[1] == ' ';
}

/*
 * Set while mp_fd_open_high() runs init, in a process of one thread, with
 * the pipe2 hook below the one libunwind calls: the pipes made are moved up
 * as they are made.
 */
static int raise_pipes;
static int slot_of(int fd);

/* A new descriptor of init's, at a low number: up to the tracker's, kept open like its own. */
static int raise_one(int fd, int cloexec)
{
	long to = syscall(SYS_fcntl, fd, cloexec ? F_DUPFD_CLOEXEC : F_DUPFD, fd_base());
	if (to >= 0) {
		syscall(SYS_close, fd);
		fd = (int)to;
	}
	return keep(fd, NULL);
}

/*
 * glibc's pipe2 is the system call alone; so is this one, but for the
 * pipe libunwind opens at the tracker's start (mp_fd_open_high()).
 */
MP_EXPORT int pipe2(int fds[2], int flags)
{
	if (syscall(SYS_pipe2, fds, flags) < 0)
		return -1;
	if (unlikely(raise_pipes)) {
		fds[0] = raise_one(fds[0], flags & O_CLOEXEC);
		fds[1] = raise_one(fds[1], flags & O_CLOEXEC);
	}
	return 0;
}

/* (Bound here, not to the first pipe2 in the process: compared with what libunwind calls.) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpragmas"
#pragma GCC diagnostic ignored "-Wunknown-warning-option"
#pragma GCC diagnostic ignored "-Wmissing-attributes"
extern __typeof__(pipe2) mp_own_pipe2 __attribute__((alias("pipe2"), visibility("hidden")));
#pragma GCC diagnostic pop

/*
 * Whether init's pipe can be raised as it is made: the tracker's pipe2 is
 * the process's (preloaded, not loaded by memprof attach) and no other
 * thread can open or dup2 a descriptor meanwhile.
 */
static int raise_as_made(void)
{
	return dlsym(RTLD_DEFAULT, "pipe2") == (void *)mp_own_pipe2 && single_threaded();
}

/*
 * The lowest free number, the first probe of mp_fd_open_high()'s check that
 * init opened nothing but pipes (-1: unknown).
 */
static int lowest_free(void)
{
	long fd = syscall(SYS_fcntl, 0, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		fd = syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	syscall(SYS_close, fd);
	return (int)fd;
}

void mp_fd_open_high(void (*init)(void))
{
	int base = fd_base(), devnull, held[MP_FD_TOP], nheld = 0;
	uint64_t before[2] = { 0, 0 };
	struct stat null_st;
	/*
	 * Preloaded in a new program (the common start): the pipe libunwind opens
	 * goes through the hook above, which moves it up, in some ten system
	 * calls. (Holding every free number instead takes one per number, some
	 * 1,100 for a process that starts with three descriptors: a fifth of a
	 * millisecond, for every process of a build under --follow-fork.) A
	 * descriptor init opened otherwise (libunwind 1.6 opens its pipe alone)
	 * took the lowest free number: it is kept there, like the pipe.
	 */
	if (raise_as_made()) {
		int low = lowest_free();
		raise_pipes = 1;
		init();
		raise_pipes = 0;
		if (low >= 0 && slot_of(low) < 0 && is_open(low))
			keep(low, NULL);
		return;
	}
	devnull = (int)syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDONLY | O_CLOEXEC);
	if (devnull >= 0 && fstat(devnull, &null_st) < 0) {
		syscall(SYS_close, devnull);
		devnull = -1;
	}
	/*
	 * Every free number below the base taken for now: what init opens gets
	 * one above. F_DUPFD gives the lowest free number from `from` up: one
	 * system call per free number (a process starts with some 950 of them).
	 */
	for (int from = 0; devnull >= 0 && nheld < MP_FD_TOP;) {
		long h = syscall(SYS_fcntl, devnull, F_DUPFD_CLOEXEC, from);
		if (h < 0)
			break;
		if (h >= base) {
			syscall(SYS_close, h);
			break;
		}
		held[nheld++] = (int)h;
		from = (int)h + 1;
	}
	for (int i = 0; i < 128; i++)
		if (is_open(base + i))
			before[i / 64] |= 1ull << (i % 64);
	init();
	/*
	 * init's pipe, kept open like the tracker's own (memprof attach runs this
	 * while the program's threads run: what else is new there is theirs).
	 */
	for (int i = 0; i < 128; i++) {
		struct stat st;
		if (!(before[i / 64] & (1ull << (i % 64))) && fstat(base + i, &st) == 0 && S_ISFIFO(st.st_mode))
			keep(base + i, NULL);
	}
	/*
	 * The placeholders, unless the program put something of its own there
	 * meanwhile (dup2): only another thread of it can, so a process of one
	 * thread (the tracker's start in a new program) closes each run of
	 * consecutive numbers with one close_range(2).
	 */
	for (int i = 0, alone = -1; i < nheld;) {
		int k = i + 1;
		while (k < nheld && held[k] == held[k - 1] + 1)
			k++;
		/* (Asked once, when a run is there to close: no thread can start while this one is here.) */
		if (k - i >= 2 && alone < 0)
			alone = single_threaded();
		if (k - i < 2 || !alone ||
		    syscall(SYS_close_range, (unsigned)held[i], (unsigned)held[k - 1], 0) < 0) {
			for (int j = i; j < k; j++)
				if (same_file(held[j], null_st.st_dev, null_st.st_ino))
					syscall(SYS_close, held[j]);
		}
		i = k;
	}
	if (devnull >= 0)
		syscall(SYS_close, devnull);
}

static int slot_of(int fd)
{
	if (fd < 0)
		return -1;
	for (int i = 0; i < OWN_MAX; i++)
		if (__atomic_load_n(&own[i].fd, __ATOMIC_ACQUIRE) == fd)
			return i;
	return -1;
}

void mp_fd_forget(int fd)
{
	int i = slot_of(fd);
	if (i >= 0)
		__atomic_store_n(&own[i].fd, -1, __ATOMIC_RELEASE);
}

void mp_fd_close(int fd)
{
	int intact;
	if (fd < 0)
		return;
	/* (A number the program's now, after a raw close of ours, is not ours to close.) */
	intact = mp_fd_intact(fd);
	mp_fd_forget(fd);
	if (intact)
		syscall(SYS_close, fd);
}

int mp_fd_intact(int fd)
{
	int i = slot_of(fd);
	return i >= 0 && same_file(fd, own[i].dev, own[i].ino);
}

/* ---- the hooks ---- */

static int real_close(int fd)
{
	return mp_real.close ? mp_real.close(fd) : (int)syscall(SYS_close, fd);
}

static int real_close_range(unsigned first, unsigned last, int flags)
{
	return mp_real.close_range ? mp_real.close_range(first, last, flags)
				   : (int)syscall(SYS_close_range, first, last, flags);
}

/* The tracker's descriptors in [first, last], ascending, into out; how many. */
static int owned_in(unsigned first, unsigned last, unsigned out[OWN_MAX])
{
	int n = 0;
	for (int i = 0; i < OWN_MAX; i++) {
		int fd = __atomic_load_n(&own[i].fd, __ATOMIC_ACQUIRE);
		if (fd < 0 || (unsigned)fd < first || (unsigned)fd > last)
			continue;
		if (!mp_fd_intact(fd)) {
			mp_fd_forget(fd); /* the program's now (it closed ours past the hooks): closed as asked */
			continue;
		}
		int k = n++;
		while (k > 0 && out[k - 1] > (unsigned)fd) {
			out[k] = out[k - 1];
			k--;
		}
		out[k] = (unsigned)fd;
	}
	return n;
}

/*
 * [first, last] closed around the tracker's descriptors; tail: what closes
 * from a number to the end (NULL: close_range too). 0, or -1 with errno.
 */
static int close_around(unsigned first, unsigned last, int flags, void (*tail)(int))
{
	unsigned mine[OWN_MAX];
	int n = owned_in(first, last, mine), r = 0;
	unsigned lo = first;
	for (int i = 0; i < n; i++) {
		if (mine[i] > lo && real_close_range(lo, mine[i] - 1, flags) < 0) {
			if (errno != ENOSYS || (flags & ~CLOSE_RANGE_UNSHARE)) {
				r = -1;
			} else {
				/* A kernel without close_range: the gap below ours one by one. */
				for (unsigned fd = lo; fd < mine[i]; fd++)
					real_close((int)fd);
			}
		}
		lo = mine[i] + 1;
		if (lo == 0)
			return r; /* (the last possible number was ours) */
	}
	if (lo > last)
		return r;
	if (tail) {
		tail((int)lo);
		return r;
	}
	return real_close_range(lo, last, flags) < 0 ? -1 : r;
}

/*
 * The program's close: the tracker's own descriptors stay open (the program
 * is told 0). A number that no longer names the tracker's file (the program
 * closed it past the hooks and opened its own there) is the program's.
 */
MP_EXPORT int close(int fd)
{
	if (unlikely(slot_of(fd) >= 0)) {
		if (mp_fd_intact(fd))
			return 0;
		mp_fd_forget(fd);
	}
	return real_close(fd);
}

MP_EXPORT int close_range(unsigned first, unsigned last, int flags)
{
	if (first > last) {
		errno = EINVAL;
		return -1;
	}
	return close_around(first, last, flags, NULL);
}

static void real_closefrom(int lowfd)
{
	if (mp_real.closefrom)
		mp_real.closefrom(lowfd);
	else
		real_close_range((unsigned)lowfd, UINT_MAX, 0);
}

MP_EXPORT void closefrom(int lowfd)
{
	close_around(lowfd < 0 ? 0 : (unsigned)lowfd, UINT_MAX, 0, real_closefrom);
}

/*
 * fd, one of the tracker's, steps aside for the program, which is about to
 * put a descriptor of its own at its number (dup2, dup3): the tracker's
 * file moves to another number, where the tracker finds it from now on. One
 * whose number the tracker does not keep in a variable (libunwind's pipe, a
 * control connection being answered) is the program's: it is forgotten.
 */
static void step_aside(int fd)
{
	int i = slot_of(fd), *var;
	long to = -1;
	if (i < 0)
		return;
	var = own[i].var;
	if (var && mp_fd_intact(fd))
		to = syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, fd_base());
	if (to < 0) {
		mp_fd_forget(fd);
		return;
	}
	__atomic_store_n(var, (int)to, __ATOMIC_RELEASE);
	__atomic_store_n(&own[i].fd, (int)to, __ATOMIC_RELEASE);
}

static int real_dup3(int oldfd, int newfd, int flags)
{
	if (mp_real.dup3)
		return mp_real.dup3(oldfd, newfd, flags);
	return (int)syscall(SYS_dup3, oldfd, newfd, flags);
}

MP_EXPORT int dup2(int oldfd, int newfd)
{
	/* (Onto itself, or from a number not open, dup2 changes nothing.) */
	if (unlikely(slot_of(newfd) >= 0) && oldfd != newfd && is_open(oldfd))
		step_aside(newfd);
	if (mp_real.dup2)
		return mp_real.dup2(oldfd, newfd);
	if (oldfd == newfd)
		return is_open(oldfd) ? newfd : (errno = EBADF, -1);
	return real_dup3(oldfd, newfd, 0);
}

MP_EXPORT int dup3(int oldfd, int newfd, int flags)
{
	if (unlikely(slot_of(newfd) >= 0) && oldfd != newfd && is_open(oldfd))
		step_aside(newfd);
	return real_dup3(oldfd, newfd, flags);
}

/* For memprof attach's GOT patching (hooks.c, mp_hooks): our functions, not the first of their names. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpragmas"
#pragma GCC diagnostic ignored "-Wunknown-warning-option" /* clang has no -Wmissing-attributes */
#pragma GCC diagnostic ignored "-Wmissing-attributes"
extern __typeof__(close) mp_hook_close __attribute__((alias("close"), visibility("hidden")));
extern __typeof__(close_range) mp_hook_close_range __attribute__((alias("close_range"), visibility("hidden")));
extern __typeof__(closefrom) mp_hook_closefrom __attribute__((alias("closefrom"), visibility("hidden")));
extern __typeof__(dup2) mp_hook_dup2 __attribute__((alias("dup2"), visibility("hidden")));
extern __typeof__(dup3) mp_hook_dup3 __attribute__((alias("dup3"), visibility("hidden")));
#pragma GCC diagnostic pop
