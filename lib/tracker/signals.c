/*
 * The program's signal handlers, and the tracker's critical sections
 * (base.h, mp_cs). A handler of the program's must not run while its thread
 * holds a lock of the tracker's, or is in the loader or libunwind for it:
 * one that never returns would leave the lock held for good, one that waits
 * for another thread would stop both. Blocking every signal around each
 * section cost two system calls there, on the path of each new stack, new
 * code address, or stack libunwind walked.
 *
 * Instead the kernel enters every handler of the program's through
 * trampoline(), which looks at the thread's mp_cs. Outside a section it
 * calls the program's handler with what the kernel gave it (the kernel's
 * flags and mask are the program's, SA_SIGINFO added). Inside one it defers
 * the signal: keeps its siginfo (one per signal number, in pages mapped
 * while there are some) and blocks the signal in the mask the interrupted
 * code gets back, so that later ones of the same number wait in the
 * kernel's queue. The section's end (mp_sig_replay()) calls the handlers of
 * the deferred signals, in the order they came, as the kernel would have
 * (their sa_mask and the signal itself blocked meanwhile, a context of the
 * place), then unblocks them, and the kernel delivers the ones that waited:
 * each number's signals keep their order, their siginfo and their count.
 * Synchronous faults (a fault's SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP,
 * SIGSYS) are never deferred.
 *
 * What the program reads back (sigaction's old action, signal's return
 * value) is what it installed. SA_RESETHAND is done here, not by the
 * kernel, which would reset the action before a deferred signal's handler
 * ran. A handler installed past the hooks (a raw system call) is not
 * wrapped: it runs where the kernel delivers it, as it did untracked; the
 * rare sections that call code of others blocks signals for real
 * (mp_sig_block()).
 */
#include <config.h>

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "lib/tracker/signals.h"

#define NSIGS 65 /* signals 1 to 64 */

/* Not declared by every C library's headers. */
int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);
sighandler_t __sysv_signal(int sig, sighandler_t handler);
sighandler_t bsd_signal(int sig, sighandler_t handler);

__thread unsigned mp_cs MP_IE_TLS;
__thread uint64_t mp_sig_deferred MP_IE_TLS;

typedef void (*handler_fn)(int, siginfo_t *, void *);

/*
 * The program's action of each wrapped signal: its handler (or SIG_DFL,
 * SIG_IGN) and the flags it asked for, written under sig_lock in a critical
 * section (no handler of the writer's thread reads it half written), read
 * by the trampoline with a sequence count.
 */
struct action {
	void *fn;
	int flags;
};
static struct action acts[NSIGS];
static unsigned acts_seq[NSIGS];
static int sig_lock;
static __thread int holding MP_IE_TLS; /* this thread holds sig_lock */
static int wrapping;
/* siginterrupt()'s set, as the C library keeps it: signal() installs those without SA_RESTART. */
static uint64_t interrupting;
static int (*real_sigaction)(int, const struct sigaction *, struct sigaction *);

static void lock(void)
{
	mp_lock(&sig_lock);
	holding = 1;
}

static void unlock(void)
{
	holding = 0;
	mp_unlock(&sig_lock);
}

static void act_set(int sig, void *fn, int flags)
{
	unsigned s = acts_seq[sig];
	__atomic_store_n(&acts_seq[sig], s + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&acts[sig].fn, fn, __ATOMIC_RELAXED);
	__atomic_store_n(&acts[sig].flags, flags, __ATOMIC_RELAXED);
	__atomic_store_n(&acts_seq[sig], s + 2, __ATOMIC_RELEASE);
}

static struct action act_get(int sig)
{
	struct action a;
	unsigned s;
	do {
		while ((s = __atomic_load_n(&acts_seq[sig], __ATOMIC_ACQUIRE)) & 1)
			__builtin_ia32_pause();
		a.fn = __atomic_load_n(&acts[sig].fn, __ATOMIC_RELAXED);
		a.flags = __atomic_load_n(&acts[sig].flags, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while (__atomic_load_n(&acts_seq[sig], __ATOMIC_RELAXED) != s);
	return a;
}

static int is_handler(void *fn)
{
	return fn != (void *)SIG_DFL && fn != (void *)SIG_IGN && fn != (void *)SIG_ERR;
}

static int wrappable(int sig)
{
	return sig > 0 && sig < NSIGS && sig != SIGKILL && sig != SIGSTOP;
}

static uint64_t bit(int sig)
{
	return 1ull << (sig - 1);
}

/* sig again to this thread, with info; 0 or -1. */
static int requeue(int sig, const siginfo_t *info)
{
	long pid = syscall(SYS_getpid), tid = syscall(SYS_gettid);
	return syscall(SYS_rt_tgsigqueueinfo, pid, tid, sig, info) == 0 ? 0 : -1;
}

/* A fault's signal, which comes back by itself if not handled: never deferred. */
static int synchronous(int sig, const siginfo_t *info)
{
	switch (sig) {
	case SIGSEGV: case SIGBUS: case SIGILL: case SIGFPE: case SIGTRAP: case SIGSYS:
		return info->si_code > 0; /* (<= 0: sent by a process) */
	default:
		return 0;
	}
}

/*
 * A thread's deferred signals: at most one per number (the number is
 * blocked until its handler has run), in the order they came.
 */
struct deferred {
	uint32_t head, n;
	uint8_t order[NSIGS];
	siginfo_t info[NSIGS];
};
static __thread struct deferred *pending MP_IE_TLS;

/* The signal, delivered inside a critical section, for its end; 0, or -1: run it now. */
static int defer(int sig, siginfo_t *info, ucontext_t *uc)
{
	uint64_t b = bit(sig);
	struct deferred *d = pending;
	if (!d) {
		d = mp_pages(sizeof(*d));
		if (!d)
			return -1;
		pending = d;
	}
	if (__atomic_load_n(&mp_sig_deferred, __ATOMIC_RELAXED) & b) {
		/*
		 * One of this number is deferred already (it came with SA_NODEFER, or
		 * a handler replayed before left by siglongjmp): this one waits in the
		 * kernel's queue, blocked, after it.
		 */
		syscall(SYS_rt_sigprocmask, SIG_BLOCK, &b, NULL, sizeof(b));
		if (requeue(sig, info))
			return -1;
		uc->uc_sigmask.__val[0] |= b;
		return 0;
	}
	d->info[sig] = *info;
	d->order[d->n] = (uint8_t)sig;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	d->n++;
	uc->uc_sigmask.__val[0] |= b; /* what the interrupted code's mask becomes */
	__atomic_fetch_or(&mp_sig_deferred, b, __ATOMIC_RELAXED);
	return 0;
}

static void trampoline(int sig, siginfo_t *info, void *ctx);

/* A deferred signal's handler, as the kernel would have called it. */
static void deliver(int sig, siginfo_t *info)
{
	struct sigaction k;
	uint64_t mask, old;
	ucontext_t uc;
	if (real_sigaction(sig, NULL, &k) || k.sa_sigaction != trampoline) {
		/* Changed past our hooks since: the kernel's action, once the signal is unblocked. */
		requeue(sig, info);
		return;
	}
	mask = k.sa_mask.__val[0] | ((k.sa_flags & SA_NODEFER) ? 0 : bit(sig));
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, &mask, &old, sizeof(mask));
	getcontext(&uc); /* where it runs: the handler may look, or leave by siglongjmp */
	uc.uc_sigmask.__val[0] = old;
	trampoline(sig, info, &uc);
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, sizeof(old));
}

void mp_sig_replay(void)
{
	int saved = errno;
	uint64_t done = 0;
	struct deferred *d;
	/* One at a time, taken before its handler runs (which may not return, or defer more). */
	while ((d = pending) != NULL && d->head < d->n) {
		int sig = d->order[d->head];
		siginfo_t info = d->info[sig];
		d->head++;
		__atomic_fetch_and(&mp_sig_deferred, ~bit(sig), __ATOMIC_RELAXED);
		done |= bit(sig);
		deliver(sig, &info);
	}
	d = pending;
	if (d && d->head == d->n && !mp_sig_deferred) {
		pending = NULL;
		mp_pages_free(d, sizeof(*d));
	}
	/* Those that came meanwhile waited in the kernel's queue: theirs now. */
	if (done)
		syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, &done, NULL, sizeof(done));
	errno = saved;
}

/* ---- blocking for real ---- */

static __thread unsigned sig_depth MP_IE_TLS;
static __thread uint64_t sig_saved MP_IE_TLS;

void mp_sig_block(void)
{
	uint64_t all = ~0ull, old;
	mp_cs_enter();
	if (sig_depth++)
		return;
	/* The system call itself: glibc's wrappers keep two signals of its own unblockable. */
	if (syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, &old, sizeof(old)) == 0)
		sig_saved = old;
	else
		sig_saved = UINT64_MAX; /* (not expected) nothing to restore */
}

void mp_sig_unblock(void)
{
	uint64_t old = sig_saved;
	if (sig_depth && !--sig_depth && old != UINT64_MAX)
		syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, sizeof(old));
	mp_cs_leave();
}

void mp_sig_forked(void)
{
	/*
	 * However deep the parent was: the mask it had before, but for the
	 * signals it deferred, which were the parent's to handle.
	 */
	uint64_t deferred = mp_sig_deferred, mask = sig_saved & ~deferred;
	int restore = sig_depth && sig_saved != UINT64_MAX;
	sig_depth = 0;
	mp_cs = 0;
	mp_sig_deferred = 0;
	if (pending) {
		mp_pages_free(pending, sizeof(*pending));
		pending = NULL;
	}
	if (restore)
		syscall(SYS_rt_sigprocmask, SIG_SETMASK, &mask, NULL, sizeof(mask));
	else if (deferred)
		syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, &deferred, NULL, sizeof(deferred));
}

/* A one-shot handler (SA_RESETHAND) runs once: the action is the default from now on. */
static struct action one_shot(int sig)
{
	struct action a;
	int mine = !holding; /* (a fault inside our own change: the change is ours already) */
	if (mine)
		lock();
	a = act_get(sig);
	if ((a.flags & SA_RESETHAND) && is_handler(a.fn)) {
		struct sigaction dfl;
		memset(&dfl, 0, sizeof(dfl));
		dfl.sa_handler = SIG_DFL;
		dfl.sa_flags = a.flags & ~SA_SIGINFO;
		real_sigaction(sig, &dfl, NULL);
		act_set(sig, (void *)SIG_DFL, dfl.sa_flags);
	}
	if (mine)
		unlock();
	return a;
}

static void trampoline(int sig, siginfo_t *info, void *ctx)
{
	struct action a;
	int saved = errno;
	if (unlikely(mp_cs) && !synchronous(sig, info) && defer(sig, info, ctx) == 0) {
		errno = saved;
		return;
	}
	errno = saved;
	a = act_get(sig);
	if (a.flags & SA_RESETHAND)
		a = one_shot(sig);
	if (a.fn == (void *)SIG_IGN)
		return;
	if (a.fn == (void *)SIG_DFL) {
		/*
		 * Changed to the default between the kernel's delivery and here (the
		 * kernel's action is the default already): that action, at our return.
		 */
		if (!synchronous(sig, info) && requeue(sig, info))
			syscall(SYS_tgkill, syscall(SYS_getpid), syscall(SYS_gettid), sig);
		errno = saved;
		return;
	}
	/* (A handler without SA_SIGINFO takes the first argument only.) */
	((handler_fn)a.fn)(sig, info, ctx);
}

/* What the kernel's action old, read back, is to the program: its own if ours is installed. */
static void as_program(struct sigaction *old, struct action was)
{
	if (old->sa_sigaction != trampoline)
		return;
	old->sa_sigaction = (handler_fn)was.fn;
	old->sa_flags = (old->sa_flags & ~(SA_SIGINFO | SA_RESETHAND)) |
			(was.flags & (SA_SIGINFO | SA_RESETHAND));
}

/* sigaction's work, under sig_lock. */
static int set_action(int sig, const struct sigaction *act, struct sigaction *old)
{
	struct action was = act_get(sig);
	struct sigaction k, kold;
	int r;
	if (act && is_handler((void *)act->sa_handler) && act->sa_sigaction != trampoline) {
		k = *act;
		k.sa_sigaction = trampoline;
		k.sa_flags = (act->sa_flags | SA_SIGINFO) & ~SA_RESETHAND;
		act_set(sig, (void *)act->sa_handler, act->sa_flags);
		r = real_sigaction(sig, &k, &kold);
		if (r)
			act_set(sig, was.fn, was.flags);
	} else {
		r = real_sigaction(sig, act, &kold);
		if (!r && act && act->sa_sigaction != trampoline)
			act_set(sig, (void *)act->sa_handler, act->sa_flags);
	}
	if (!r && old) {
		*old = kold;
		as_program(old, was);
	}
	return r;
}

/*
 * The handler the kernel has for sig, installed past our hooks (before the
 * tracker started, or by a call inside the C library), wrapped. Under
 * sig_lock. The kernel's action is swapped in one call; one that changed
 * between our read and the swap is wrapped in turn.
 */
static void wrap_installed(int sig)
{
	struct sigaction cur, prev, k;
	if (real_sigaction(sig, NULL, &cur))
		return;
	for (int tries = 0; tries < 8; tries++) {
		if (!is_handler((void *)cur.sa_handler) || cur.sa_sigaction == trampoline)
			return;
		k = cur;
		k.sa_sigaction = trampoline;
		k.sa_flags = (cur.sa_flags | SA_SIGINFO) & ~SA_RESETHAND;
		act_set(sig, (void *)cur.sa_handler, cur.sa_flags);
		if (real_sigaction(sig, &k, &prev))
			return;
		if (prev.sa_handler == cur.sa_handler && prev.sa_flags == cur.sa_flags)
			return;
		/* Another thread's, past the hooks: that one is the program's now. */
		if (!is_handler((void *)prev.sa_handler)) {
			real_sigaction(sig, &prev, NULL);
			act_set(sig, (void *)prev.sa_handler, prev.sa_flags);
			return;
		}
		cur = prev;
	}
}

static void *real_of(const char *name)
{
	void *p;
	mp_in_hook++; /* dlsym may allocate */
	p = mp_next_symbol(name);
	mp_in_hook--;
	return p;
}

void mp_signals_unwrap(void)
{
	if (!__atomic_load_n(&wrapping, __ATOMIC_ACQUIRE))
		return;
	lock();
	__atomic_store_n(&wrapping, 0, __ATOMIC_RELEASE);
	for (int sig = 1; sig < NSIGS; sig++) {
		struct sigaction k;
		struct action a;
		if (!wrappable(sig) || real_sigaction(sig, NULL, &k) || k.sa_sigaction != trampoline)
			continue;
		a = act_get(sig);
		k.sa_sigaction = (handler_fn)a.fn;
		k.sa_flags = a.flags;
		real_sigaction(sig, &k, NULL);
	}
	unlock();
}

void mp_signals_wrap(void)
{
	if (wrapping)
		return;
	real_sigaction = real_of("sigaction");
	if (!real_sigaction)
		return;
	lock();
	for (int sig = 1; sig < NSIGS; sig++)
		if (wrappable(sig))
			wrap_installed(sig);
	__atomic_store_n(&wrapping, 1, __ATOMIC_RELEASE);
	unlock();
}

/* ---- the hooks ---- */

static int (*sigaction_next(void))(int, const struct sigaction *, struct sigaction *)
{
	static int (*next)(int, const struct sigaction *, struct sigaction *);
	if (!next)
		next = real_of("sigaction");
	return next;
}

MP_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	int r, err;
	if (!__atomic_load_n(&wrapping, __ATOMIC_ACQUIRE) || !wrappable(sig)) {
		int (*next)(int, const struct sigaction *, struct sigaction *) = sigaction_next();
		if (!next) {
			errno = ENOSYS;
			return -1;
		}
		return next(sig, act, old);
	}
	lock();
	r = set_action(sig, act, old);
	err = errno;
	unlock();
	errno = err;
	return r;
}

MP_EXPORT int __sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	return sigaction(sig, act, old);
}

/* signal() with the C library's flags: BSD (signal, bsd_signal, ssignal) or System V (sysv_signal). */
static sighandler_t install(int sig, sighandler_t handler, int sysv)
{
	struct sigaction act, old;
	if (!__atomic_load_n(&wrapping, __ATOMIC_ACQUIRE)) {
		/* Not tracking: the C library's own, which knows its siginterrupt() set. */
		static sighandler_t (*next[2])(int, sighandler_t);
		if (!next[sysv])
			next[sysv] = (sighandler_t(*)(int, sighandler_t))real_of(sysv ? "__sysv_signal"
										: "signal");
		if (!next[sysv]) {
			errno = ENOSYS;
			return SIG_ERR;
		}
		return next[sysv](sig, handler);
	}
	if (handler == SIG_ERR || sig < 1 || sig >= NSIGS) {
		errno = EINVAL;
		return SIG_ERR;
	}
	memset(&act, 0, sizeof(act));
	act.sa_handler = handler;
	sigemptyset(&act.sa_mask);
	if (sysv) {
		act.sa_flags = SA_RESETHAND | SA_NODEFER;
	} else {
		sigaddset(&act.sa_mask, sig);
		act.sa_flags = (__atomic_load_n(&interrupting, __ATOMIC_RELAXED) & bit(sig)) ? 0 : SA_RESTART;
	}
	if (sigaction(sig, &act, &old) < 0)
		return SIG_ERR;
	return old.sa_handler;
}

MP_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
	return install(sig, handler, 0);
}

MP_EXPORT sighandler_t bsd_signal(int sig, sighandler_t handler)
{
	return install(sig, handler, 0);
}

MP_EXPORT sighandler_t ssignal(int sig, sighandler_t handler)
{
	return install(sig, handler, 0);
}

MP_EXPORT sighandler_t sysv_signal(int sig, sighandler_t handler)
{
	return install(sig, handler, 1);
}

MP_EXPORT sighandler_t __sysv_signal(int sig, sighandler_t handler)
{
	return install(sig, handler, 1);
}

MP_EXPORT int siginterrupt(int sig, int flag)
{
	static int (*next)(int, int);
	int r;
	if (!next)
		next = (int (*)(int, int))real_of("siginterrupt");
	if (!next) {
		errno = ENOSYS;
		return -1;
	}
	/* (It changes SA_RESTART of the action the kernel has: ours keeps the program's flags.) */
	r = next(sig, flag);
	if (r == 0 && sig > 0 && sig < NSIGS) {
		if (flag)
			__atomic_fetch_or(&interrupting, bit(sig), __ATOMIC_RELAXED);
		else
			__atomic_fetch_and(&interrupting, ~bit(sig), __ATOMIC_RELAXED);
	}
	return r;
}

/* sigset() (System V), the C library's, then its handler wrapped. */
MP_EXPORT sighandler_t sigset(int sig, sighandler_t disp)
{
	static sighandler_t (*next)(int, sighandler_t);
	sighandler_t r;
	struct action was;
	if (!next)
		next = (sighandler_t(*)(int, sighandler_t))real_of("sigset");
	if (!next) {
		errno = ENOSYS;
		return SIG_ERR;
	}
	if (!__atomic_load_n(&wrapping, __ATOMIC_ACQUIRE) || !wrappable(sig))
		return next(sig, disp);
	lock();
	was = act_get(sig);
	r = next(sig, disp);
	if ((void *)r == (void *)trampoline)
		r = (sighandler_t)was.fn;
	if (r != SIG_ERR && disp != SIG_HOLD) {
		if (is_handler((void *)disp))
			wrap_installed(sig);
		else
			act_set(sig, (void *)disp, 0);
	}
	unlock();
	return r;
}

/* The hooks' names for GOT patching (hooks.c, mp_hooks). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpragmas"
#pragma GCC diagnostic ignored "-Wmissing-attributes"
#pragma GCC diagnostic ignored "-Wdeprecated-declarations" /* siginterrupt, sigset: the program's */
#define ALIAS(name) extern __typeof__(name) mp_hook_##name __attribute__((alias(#name), visibility("hidden")));
ALIAS(sigaction)
ALIAS(__sigaction)
ALIAS(signal)
ALIAS(bsd_signal)
ALIAS(ssignal)
ALIAS(sysv_signal)
ALIAS(__sysv_signal)
ALIAS(siginterrupt)
ALIAS(sigset)
#pragma GCC diagnostic pop
