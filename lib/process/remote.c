/* Run functions inside a live process with ptrace (x86_64). */
#include <config.h>
#include "lib/process/remote.h"
#include "lib/process/procids.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/util/xalloc.h"

/*
 * Why the other threads run while we call dlopen (the prototype did the same; this is
 * the deliberate choice): the safe-point rule is about the chosen thread only, it must
 * not be inside the allocator or the loader, so that calling them does not re-enter a
 * lock it already holds. The other threads may be anywhere, including inside malloc
 * holding an arena lock, or inside dlopen holding the loader lock. If we kept them
 * stopped, our dlopen would wait for such a lock forever (a deadlock we could only end
 * by abandoning dlopen half-way, with the loader lock held). Released, they finish what
 * they were doing and give the locks back, exactly as when the program calls dlopen
 * itself on one thread while others allocate. So every thread except the chosen one is
 * detached as soon as the safe point is found. tests/e2e/inject-repeat.sh checks this
 * with two threads hammering malloc/free during 100 injections.
 */

enum thread_state { T_RUNNING, T_STOPPED, T_GONE, T_RELEASED };

struct mp_remote_thread {
	pid_t tid;
	enum thread_state state;
	bool signalled; /* a signal was delivered since it was last stopped: its pc is a handler's */
};

struct mp_remote_signal {
	pid_t tid;
	int sig;
};

/* Grace period for cleanup waits after the deadline has passed. */
#define CLEANUP_NS (1000ull * 1000 * 1000)
/* How long a thread may take to stop once interrupted, even past the deadline (a loaded machine). */
#define STOP_GRACE_MS 250

uint64_t mp_remote_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void mp_remote_init(struct mp_remote *r, pid_t pid, uint64_t deadline, unsigned timeout_ms)
{
	memset(r, 0, sizeof(*r));
	r->pid = pid;
	r->deadline = deadline;
	r->timeout_ms = timeout_ms;
	r->memfd = -1;
}

#if defined(__x86_64__)

typedef struct user_regs_struct regs_t;

enum { XSTATE_NONE, XSTATE_REGSET, XSTATE_FPREGS };

static struct mp_remote_thread *find_thread(struct mp_remote *r, pid_t tid)
{
	for (size_t i = 0; i < r->nr_threads; i++)
		if (r->threads[i].tid == tid)
			return &r->threads[i];
	return NULL;
}

static void hold_signal(struct mp_remote *r, pid_t tid, int sig)
{
	ALLOC_GROW(r->sigs, r->nr_sigs + 1, r->alloc_sigs);
	r->sigs[r->nr_sigs].tid = tid;
	r->sigs[r->nr_sigs].sig = sig;
	r->nr_sigs++;
}

/* Re-send the signals held back for tid (now detached), in the order they came. */
static void resend_signals(struct mp_remote *r, pid_t tid)
{
	for (size_t i = 0; i < r->nr_sigs; i++) {
		if (r->sigs[i].tid != tid || !r->sigs[i].sig)
			continue;
		/* siginfo details (sender, value) are not kept: the thread gets a plain tgkill */
		syscall(SYS_tgkill, r->pid, tid, r->sigs[i].sig);
		r->sigs[i].sig = 0;
	}
}

static bool is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* A fault raised by the thread's own instruction (not a signal sent by someone). */
static bool is_fault(const siginfo_t *si)
{
	switch (si->si_signo) {
	case SIGSEGV: case SIGBUS: case SIGILL: case SIGFPE: case SIGTRAP: case SIGSYS:
		return si->si_code > 0;
	default:
		return false;
	}
}

/*
 * Wait for a state change of tid until deadline: 1 with *status, 0 on timeout, -1 (errno).
 * The end of the process's main thread, when we are its parent, is its exit status, the
 * caller's to pass on: kept in r (reaped).
 */
static int wait_tid(struct mp_remote *r, pid_t tid, uint64_t deadline, int *status)
{
	unsigned delay_us = 2;

	for (;;) {
		pid_t w = waitpid(tid, status, __WALL | WNOHANG);
		if (w == tid && tid == r->pid && (WIFEXITED(*status) || WIFSIGNALED(*status))) {
			r->reaped = true;
			r->reaped_status = *status;
		}
		if (w == tid)
			return 1;
		if (w < 0 && errno != EINTR)
			return -1;
		if (mp_remote_now() >= deadline)
			return 0;
		/* short sleeps: a remote call is often over in tens of microseconds */
		usleep(delay_us);
		if (delay_us < 64)
			delay_us *= 2;
	}
}

static void note_exit(struct mp_remote *r, struct mp_remote_thread *t)
{
	t->state = T_GONE;
	if (t->tid == r->pid || kill(r->pid, 0) < 0)
		r->gone = true;
}

static void describe_exit(struct mp_remote *r, struct strbuf *err)
{
	strbuf_addf(err, "process %d exited during injection", (int)r->pid);
}

/*
 * Wait until an interrupted thread reports its ptrace-stop. Signals that arrive first are
 * delivered at once (stop signals are held back so that the group-stop does not start now);
 * a thread that got one is marked, since it will stop at its handler's entry, which may sit
 * on top of an interrupted malloc. With hold_all, every signal is held back (the thread's
 * registers are about to be replaced, which would lose a handler frame). Returns 1 stopped,
 * 0 gone, -1 timeout.
 */
static int wait_stopped(struct mp_remote *r, struct mp_remote_thread *t, uint64_t deadline, bool hold_all)
{
	int status;

	for (;;) {
		int rc = wait_tid(r, t->tid, deadline, &status);
		if (rc == 0)
			return -1;
		if (rc < 0) {
			note_exit(r, t);
			return 0;
		}
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			note_exit(r, t);
			return 0;
		}
		if (!WIFSTOPPED(status))
			continue;
		if ((status >> 16) == PTRACE_EVENT_STOP) {
			t->state = T_STOPPED;
			return 1;
		}
		if ((status >> 16) == 0 && (hold_all || is_stop_signal(WSTOPSIG(status)))) {
			hold_signal(r, t->tid, WSTOPSIG(status));
			ptrace(PTRACE_CONT, t->tid, 0, 0);
		} else if ((status >> 16) == 0) {
			t->signalled = true;
			ptrace(PTRACE_CONT, t->tid, 0, (void *)(long)WSTOPSIG(status));
		} else {
			ptrace(PTRACE_CONT, t->tid, 0, 0);
		}
	}
}

/* A thread's state letter, 'X' when it is gone. */
static char task_state(pid_t pid, pid_t tid)
{
	char st;
	return mp_proc_stat(pid, tid, &st, NULL) == 0 ? st : 'X';
}

/* Seize the threads not seen yet. Returns how many were added, or -1 with err. */
static int seize_new_threads(struct mp_remote *r, struct strbuf *err)
{
	char path[64];
	DIR *dir;
	struct dirent *de;
	int added = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)r->pid);
	dir = opendir(path);
	if (!dir) {
		if (errno == ENOENT || errno == ESRCH) {
			r->gone = true;
			describe_exit(r, err);
		} else {
			strbuf_addf(err, "cannot list the threads of process %d: %s", (int)r->pid, strerror(errno));
		}
		return -1;
	}
	while ((de = readdir(dir))) {
		pid_t tid = (pid_t)atoi(de->d_name);
		struct mp_remote_thread *known = find_thread(r, tid);
		char st;

		if (tid <= 0 || (known && known->state != T_GONE))
			continue;
		st = task_state(r->pid, tid);
		if (st == 'Z' || st == 'X')
			continue; /* an exited leader of a live thread group, or a dying thread */
		if (ptrace(PTRACE_SEIZE, tid, 0, 0) < 0) {
			if (errno == ESRCH)
				continue;
			/* the kernel refuses (EPERM) a thread that has just exited */
			if (errno == EPERM && (st = task_state(r->pid, tid)) != 'R' && st != 'S' && st != 'D' &&
			    st != 'T' && st != 't')
				continue;
			strbuf_addf(err, "cannot trace thread %d of process %d: %s", (int)tid, (int)r->pid,
				    strerror(errno));
			closedir(dir);
			return -1;
		}
		if (!known) { /* else a new thread got the id of one that exited */
			ALLOC_GROW(r->threads, r->nr_threads + 1, r->alloc_threads);
			known = &r->threads[r->nr_threads++];
			known->tid = tid;
		}
		known->state = T_RUNNING;
		known->signalled = false;
		added++;
	}
	closedir(dir);
	return added;
}

/* Interrupt every running thread and wait until all are stopped, new threads included. 0 or -1 with err. */
static int stop_all(struct mp_remote *r, struct strbuf *err)
{
	for (;;) {
		size_t running = 0;
		uint64_t limit;

		if (seize_new_threads(r, err) < 0)
			return -1;
		for (size_t i = 0; i < r->nr_threads; i++) {
			struct mp_remote_thread *t = &r->threads[i];
			if (t->state != T_RUNNING)
				continue;
			running++;
			if (ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) < 0 && errno != ESRCH) {
				strbuf_addf(err, "cannot interrupt thread %d of process %d: %s", (int)t->tid,
					    (int)r->pid, strerror(errno));
				return -1;
			}
		}
		if (!running)
			return 0;
		limit = mp_remote_now() + STOP_GRACE_MS * 1000000ull;
		if (limit < r->deadline)
			limit = r->deadline;
		for (size_t i = 0; i < r->nr_threads; i++) {
			struct mp_remote_thread *t = &r->threads[i];
			if (t->state == T_RUNNING && wait_stopped(r, t, limit, false) < 0) {
				strbuf_addf(err, "thread %d of process %d did not stop when interrupted (an uninterruptible "
					    "wait: state D, or a parent waiting in vfork?); retry later", (int)t->tid,
					    (int)r->pid);
				return -1;
			}
		}
		if (r->gone) {
			describe_exit(r, err);
			return -1;
		}
	}
}

static void resume_all(struct mp_remote *r)
{
	for (size_t i = 0; i < r->nr_threads; i++) {
		struct mp_remote_thread *t = &r->threads[i];
		if (t->state != T_STOPPED)
			continue;
		t->signalled = false;
		if (ptrace(PTRACE_CONT, t->tid, 0, 0) == 0)
			t->state = T_RUNNING;
		else
			t->state = T_GONE;
	}
}

/* Let a thread go: it must be stopped (running ones are interrupted first). */
static void release_thread(struct mp_remote *r, struct mp_remote_thread *t)
{
	if (t->state == T_RUNNING) {
		/* an INTERRUPT refused with ESRCH means it is exiting: the wait reaps it */
		ptrace(PTRACE_INTERRUPT, t->tid, 0, 0);
		if (wait_stopped(r, t, mp_remote_now() + CLEANUP_NS, false) <= 0) {
			if (t->state == T_RUNNING)
				t->state = T_GONE; /* detached by the kernel when we exit */
			return;
		}
	}
	if (t->state != T_STOPPED)
		return;
	ptrace(PTRACE_DETACH, t->tid, 0, 0);
	t->state = T_RELEASED;
	resend_signals(r, t->tid);
}

/* Syscalls that block waiting for the outside world, never for a lock (no futex). */
static bool whitelisted_syscall(long nr)
{
	switch (nr) {
	case SYS_read: case SYS_poll: case SYS_ppoll: case SYS_select: case SYS_pselect6:
	case SYS_pause: case SYS_nanosleep: case SYS_clock_nanosleep: case SYS_accept:
	case SYS_accept4: case SYS_recvfrom: case SYS_recvmsg: case SYS_wait4: case SYS_waitid:
	case SYS_rt_sigsuspend: case SYS_rt_sigtimedwait: case SYS_epoll_wait: case SYS_epoll_pwait:
#ifdef SYS_epoll_pwait2
	case SYS_epoll_pwait2:
#endif
		return true;
	default:
		return false;
	}
}

static bool in_ranges(uint64_t pc, const struct mp_remote_range *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (pc >= v[i].start && pc < v[i].end)
			return true;
	return false;
}

/* -ERESTARTSYS .. -ERESTART_RESTARTBLOCK: blocked in a syscall that the kernel will restart. */
static bool restarting(const regs_t *regs)
{
	long rax = (long)regs->rax;
	return (long)regs->orig_rax >= 0 && rax >= -516 && rax <= -512;
}

static bool safe_point(const regs_t *regs, const struct mp_remote_range *unsafe, size_t nr_unsafe,
		       const struct mp_remote_range *loader, size_t nr_loader)
{
	if (restarting(regs) && whitelisted_syscall((long)regs->orig_rax))
		return !in_ranges(regs->rip, loader, nr_loader);
	return !in_ranges(regs->rip, unsafe, nr_unsafe);
}

static int save_state(struct mp_remote *r, const regs_t *regs, struct strbuf *err)
{
	struct iovec iov;

	r->saved = xmemdup(regs, sizeof(*regs));
	r->xstate_len = 64 * 1024;
	r->xstate = xcalloc(1, r->xstate_len);
	iov.iov_base = r->xstate;
	iov.iov_len = r->xstate_len;
	if (ptrace(PTRACE_GETREGSET, r->tid, (void *)(long)NT_X86_XSTATE, &iov) == 0) {
		r->xstate_kind = XSTATE_REGSET;
		r->xstate_len = iov.iov_len;
		return 0;
	}
	if (ptrace(PTRACE_GETFPREGS, r->tid, 0, r->xstate) == 0) {
		r->xstate_kind = XSTATE_FPREGS;
		r->xstate_len = sizeof(struct user_fpregs_struct);
		return 0;
	}
	strbuf_addf(err, "cannot read the FPU registers of thread %d: %s", (int)r->tid, strerror(errno));
	return -1;
}

int mp_remote_stop_safe(struct mp_remote *r, const struct mp_remote_range *unsafe, size_t nr_unsafe,
			const struct mp_remote_range *loader, size_t nr_loader, struct strbuf *err)
{
	char path[64];

	for (;;) {
		if (stop_all(r, err) < 0)
			return -1;
		for (size_t i = 0; i < r->nr_threads && !r->tid; i++) {
			struct mp_remote_thread *t = &r->threads[i];
			regs_t regs;

			if (t->state != T_STOPPED || t->signalled)
				continue;
			if (ptrace(PTRACE_GETREGS, t->tid, 0, &regs) == 0 &&
			    safe_point(&regs, unsafe, nr_unsafe, loader, nr_loader)) {
				r->tid = t->tid;
				if (save_state(r, &regs, err) < 0) {
					r->tid = 0;
					return -1;
				}
			}
		}
		if (r->tid)
			break;
		if (mp_remote_now() >= r->deadline) {
			strbuf_addf(err,
				    "no safe point within %u ms (the threads were always inside the C library, "
				    "the allocator or the dynamic loader, or waiting on a lock); retry, or use --method gdb",
				    r->timeout_ms);
			return -1;
		}
		resume_all(r);
		r->rounds++;
		usleep(200 + (r->rounds * 389) % 800);
	}
	/* The chosen thread stays stopped; the others go back to work (see the top of the file). */
	for (size_t i = 0; i < r->nr_threads; i++)
		if (r->threads[i].tid != r->tid)
			release_thread(r, &r->threads[i]);
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)r->pid);
	r->memfd = open(path, O_RDWR | O_CLOEXEC);
	if (r->memfd < 0) {
		strbuf_addf(err, "cannot open '%s': %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

int mp_remote_read(struct mp_remote *r, uint64_t addr, void *buf, size_t len, struct strbuf *err)
{
	ssize_t n = pread(r->memfd, buf, len, (off_t)addr);

	if (n == (ssize_t)len)
		return 0;
	strbuf_addf(err, "cannot read %zu bytes at 0x%llx in process %d: %s", len,
		    (unsigned long long)addr, (int)r->pid, n < 0 ? strerror(errno) : "short read");
	return -1;
}

int mp_remote_write(struct mp_remote *r, uint64_t addr, const void *buf, size_t len, struct strbuf *err)
{
	ssize_t n = pwrite(r->memfd, buf, len, (off_t)addr);

	if (n == (ssize_t)len)
		return 0;
	strbuf_addf(err, "cannot write %zu bytes at 0x%llx in process %d: %s", len,
		    (unsigned long long)addr, (int)r->pid, n < 0 ? strerror(errno) : "short write");
	return -1;
}

int mp_remote_read_string(struct mp_remote *r, uint64_t addr, size_t max, struct strbuf *sb, struct strbuf *err)
{
	char chunk[256];

	while (max) {
		size_t want = max < sizeof(chunk) ? max : sizeof(chunk);
		ssize_t n = pread(r->memfd, chunk, want, (off_t)addr);
		if (n <= 0) {
			strbuf_addf(err, "cannot read the string at 0x%llx in process %d: %s",
				    (unsigned long long)addr, (int)r->pid, n < 0 ? strerror(errno) : "end of memory");
			return -1;
		}
		for (ssize_t i = 0; i < n; i++) {
			if (!chunk[i])
				return 0;
			strbuf_addch(sb, chunk[i]);
		}
		addr += (uint64_t)n;
		max -= (size_t)n;
	}
	return 0;
}

static const char *signame(int sig)
{
	const char *s = sigabbrev_np(sig);
	static char buf[16];

	if (s) {
		snprintf(buf, sizeof(buf), "SIG%s", s);
		return buf;
	}
	snprintf(buf, sizeof(buf), "signal %d", sig);
	return buf;
}

int mp_remote_call(struct mp_remote *r, const char *what, uint64_t fn, const uint64_t *args,
		   unsigned nargs, uint64_t stack_top, uint64_t *ret, struct strbuf *err)
{
	struct mp_remote_thread *t = find_thread(r, r->tid);
	regs_t regs = *(regs_t *)r->saved;
	uint64_t zero = 0, sp;
	int status;

	if (nargs > 6) {
		strbuf_addf(err, "remote call of '%s' with %u arguments (at most 6)", what, nargs);
		return -1;
	}
	if (nargs > 0) regs.rdi = args[0];
	if (nargs > 1) regs.rsi = args[1];
	if (nargs > 2) regs.rdx = args[2];
	if (nargs > 3) regs.rcx = args[3];
	if (nargs > 4) regs.r8 = args[4];
	if (nargs > 5) regs.r9 = args[5];
	regs.rip = fn;
	regs.rax = 0;
	regs.orig_rax = (unsigned long long)-1; /* no syscall restart fix-up on our registers */
	regs.eflags &= ~(0x400ull | 0x100ull);  /* DF clear as the ABI wants, no single-step */
	sp = stack_top ? stack_top : regs.rsp - 128 - 512; /* below the red zone */
	sp &= ~15ull;
	sp -= 8; /* as if `call` pushed the return address: 0, so returning faults at pc 0 */
	regs.rsp = sp;
	if (mp_remote_write(r, sp, &zero, sizeof(zero), err) < 0)
		return -1;
	if (ptrace(PTRACE_SETREGS, r->tid, 0, &regs) < 0) {
		strbuf_addf(err, "cannot set the registers of thread %d: %s", (int)r->tid, strerror(errno));
		return -1;
	}
	r->call_pending = true;
	if (ptrace(PTRACE_CONT, r->tid, 0, 0) < 0) {
		strbuf_addf(err, "cannot resume thread %d: %s", (int)r->tid, strerror(errno));
		return -1;
	}
	t->state = T_RUNNING;
	for (;;) {
		siginfo_t si;
		int rc = wait_tid(r, r->tid, r->deadline, &status);

		if (rc == 0) {
			/* Abandon the call: stop the thread so that release can restore it. */
			if (ptrace(PTRACE_INTERRUPT, r->tid, 0, 0) == 0)
				wait_stopped(r, t, mp_remote_now() + CLEANUP_NS, true);
			if (r->gone) {
				describe_exit(r, err);
				return -1;
			}
			strbuf_addf(err, "the call of %s in process %d did not return within %u ms; "
				    "it was abandoned and the thread's registers restored", what, (int)r->pid, r->timeout_ms);
			return -1;
		}
		if (rc < 0 || WIFEXITED(status) || WIFSIGNALED(status)) {
			note_exit(r, t);
			r->gone = true; /* the thread we hold died: whatever killed it took the process */
			describe_exit(r, err);
			return -1;
		}
		if (!WIFSTOPPED(status))
			continue;
		if ((status >> 16) != 0) {
			ptrace(PTRACE_CONT, r->tid, 0, 0); /* an interrupt or group-stop: go on */
			continue;
		}
		t->state = T_STOPPED;
		memset(&si, 0, sizeof(si));
		ptrace(PTRACE_GETSIGINFO, r->tid, 0, &si);
		if (WSTOPSIG(status) == SIGSEGV && is_fault(&si)) {
			regs_t now;
			if (ptrace(PTRACE_GETREGS, r->tid, 0, &now) < 0) {
				strbuf_addf(err, "cannot read the registers of thread %d: %s", (int)r->tid, strerror(errno));
				return -1;
			}
			if (now.rip == 0 && now.rsp == sp + 8) {
				*ret = now.rax;
				r->call_pending = false;
				return 0;
			}
		}
		if (is_fault(&si) || (WSTOPSIG(status) == SIGABRT && si.si_pid == r->pid)) {
			regs_t now;
			memset(&now, 0, sizeof(now));
			ptrace(PTRACE_GETREGS, r->tid, 0, &now);
			strbuf_addf(err, "the call of %s in process %d crashed with %s at pc 0x%llx; "
				    "it was abandoned and the thread's registers restored",
				    what, (int)r->pid, signame(WSTOPSIG(status)), (unsigned long long)now.rip);
			return -1;
		}
		hold_signal(r, r->tid, WSTOPSIG(status));
		ptrace(PTRACE_CONT, r->tid, 0, 0);
		t->state = T_RUNNING;
	}
}

void mp_remote_release(struct mp_remote *r)
{
	struct mp_remote_thread *chosen = r->tid ? find_thread(r, r->tid) : NULL;

	if (chosen && chosen->state == T_STOPPED && r->saved) {
		ptrace(PTRACE_SETREGS, r->tid, 0, r->saved);
		if (r->xstate_kind == XSTATE_REGSET) {
			struct iovec iov = { r->xstate, r->xstate_len };
			ptrace(PTRACE_SETREGSET, r->tid, (void *)(long)NT_X86_XSTATE, &iov);
		} else if (r->xstate_kind == XSTATE_FPREGS) {
			ptrace(PTRACE_SETFPREGS, r->tid, 0, r->xstate);
		}
		r->call_pending = false;
	}
	for (size_t i = 0; i < r->nr_threads; i++)
		release_thread(r, &r->threads[i]);
	/*
	 * Reap the threads that exited while traced: until we do, they stay zombies (their
	 * exit is reported to us, not to the process), which matters in a long-lived tracer.
	 */
	for (size_t i = 0; i < r->nr_threads; i++) {
		int status;
		if (r->threads[i].state == T_GONE)
			wait_tid(r, r->threads[i].tid, mp_remote_now() + 50 * 1000 * 1000ull, &status);
	}
	if (r->memfd >= 0)
		close(r->memfd);
	r->memfd = -1;
	free(r->threads);
	free(r->sigs);
	free(r->saved);
	free(r->xstate);
	r->threads = NULL;
	r->sigs = NULL;
	r->saved = r->xstate = NULL;
	r->nr_threads = r->alloc_threads = r->nr_sigs = r->alloc_sigs = 0;
	r->xstate_kind = XSTATE_NONE;
}

#else /* not x86_64 */

static void unsupported(struct strbuf *err)
{
	struct utsname u;

	strbuf_addf(err, "memprof attach is not supported on %s: only x86_64 is implemented",
		    uname(&u) == 0 ? u.machine : "this machine");
}

int mp_remote_stop_safe(struct mp_remote *r, const struct mp_remote_range *unsafe, size_t nr_unsafe,
			const struct mp_remote_range *loader, size_t nr_loader, struct strbuf *err)
{
	unsupported(err);
	return -1;
}

int mp_remote_call(struct mp_remote *r, const char *what, uint64_t fn, const uint64_t *args,
		   unsigned nargs, uint64_t stack_top, uint64_t *ret, struct strbuf *err)
{
	unsupported(err);
	return -1;
}

int mp_remote_read(struct mp_remote *r, uint64_t addr, void *buf, size_t len, struct strbuf *err)
{
	unsupported(err);
	return -1;
}

int mp_remote_write(struct mp_remote *r, uint64_t addr, const void *buf, size_t len, struct strbuf *err)
{
	unsupported(err);
	return -1;
}

int mp_remote_read_string(struct mp_remote *r, uint64_t addr, size_t max, struct strbuf *sb, struct strbuf *err)
{
	unsupported(err);
	return -1;
}

void mp_remote_release(struct mp_remote *r)
{
}

#endif
