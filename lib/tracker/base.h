/*
 * What every part of the tracker (libmemprof.so) uses: visibility and branch
 * macros, the real functions, the recursion guard, the tracking state, a
 * futex lock and helpers that never allocate. Nothing in the tracker may call
 * malloc, stdio or anything that locks in a way a hook could re-enter.
 */
#ifndef MEMPROF_LIB_TRACKER_BASE_H
#define MEMPROF_LIB_TRACKER_BASE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#define MP_HIDDEN __attribute__((visibility("hidden")))
#define MP_EXPORT __attribute__((visibility("default")))
#define MP_IE_TLS __attribute__((tls_model("initial-exec")))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* The real functions, resolved with dlsym(RTLD_NEXT) at start-up. */
struct mp_real {
	void *(*malloc)(size_t);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void *(*reallocarray)(void *, size_t, size_t);
	void (*free)(void *);
	void (*free_sized)(void *, size_t);
	void (*free_aligned_sized)(void *, size_t, size_t);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	void *(*memalign)(size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
	size_t (*malloc_usable_size)(void *);
	void *(*mmap)(void *, size_t, int, int, int, off_t);
	int (*munmap)(void *, size_t);
	void *(*mremap)(void *, size_t, size_t, int, ...);
	pid_t (*fork)(void);
	void (*exit)(int) __attribute__((noreturn));
	void (*_exit)(int) __attribute__((noreturn));
	void (*_Exit)(int) __attribute__((noreturn));
	void (*abort)(void) __attribute__((noreturn));
	int (*execve)(const char *, char *const[], char *const[]);
	int (*execv)(const char *, char *const[]);
	int (*execvp)(const char *, char *const[]);
	int (*execvpe)(const char *, char *const[], char *const[]);
	int (*fexecve)(int, char *const[], char *const[]);
	int (*pthread_setname_np)(unsigned long, const char *);
	int (*prctl)(int, unsigned long, unsigned long, unsigned long, unsigned long);
	int (*close)(int);
	int (*close_range)(unsigned, unsigned, int);
	void (*closefrom)(int);
	int (*dup2)(int, int);
	int (*dup3)(int, int, int);
	int (*dlclose)(void *);
	int (*mlockall)(int);
};
extern struct mp_real mp_real MP_HIDDEN;

/*
 * Nonzero while a thread is inside the tracker's own work (or is a tracker
 * thread): nested calls are not recorded. A hook that records says so in
 * mp_hook_sp instead (below); mp_inside() is either.
 */
extern __thread int mp_in_hook MP_IE_TLS MP_HIDDEN;

/* 0 before init, 1 while recording, 2 when tracking ended (or never started) in this process. */
extern volatile int mp_state MP_HIDDEN;
/*
 * MP_STATE_CHILD: a followed child (--follow-fork) not set up yet: it gets
 * its stream, threads and rings at its first allocation or free
 * (mp_child_setup()), so that one that execs or exits at once costs nothing.
 */
enum { MP_STATE_INIT = 0, MP_STATE_ON = 1, MP_STATE_OFF = 2, MP_STATE_CHILD = 3 };

/* Bootstrap arena for allocations made while dlsym resolves the real functions (real.c). */
void *mp_boot_alloc(size_t size, size_t align) MP_HIDDEN;
#define MP_BOOT_ARENA_SIZE (64 * 1024)
extern char mp_boot_arena[MP_BOOT_ARENA_SIZE] MP_HIDDEN;
/* Whether p is in the bootstrap arena (inlined: every free asks). */
static inline int mp_is_boot(const void *p)
{
	return (uintptr_t)p - (uintptr_t)mp_boot_arena < MP_BOOT_ARENA_SIZE;
}
size_t mp_boot_size(const void *p) MP_HIDDEN;
/* The definition of name after ours (the C library's), or NULL (real.c). */
void *mp_next_symbol(const char *name) MP_HIDDEN;
/* Resolve the real functions (real.c); 0, or -1 when the allocator itself is missing. */
int mp_resolve_real(void) MP_HIDDEN;

/*
 * The tracker's own code (real.c, found once by mp_find_self): the
 * executable range [mp_self_lo, mp_self_hi) whose frames stacks leave out,
 * and the load address GOT patching must not touch.
 */
extern uint64_t mp_self_lo MP_HIDDEN, mp_self_hi MP_HIDDEN, mp_self_base MP_HIDDEN;
void mp_find_self(void) MP_HIDDEN;

/*
 * A hook entered while this thread is inside one already: a signal handler
 * that allocates, interrupting the tracker (glibc's malloc is no safer
 * there). Its events cannot be recorded (the thread's ring and stack walker
 * are in the middle of the interrupted event): mp_note_nested() counts them
 * when caller, the address the hook returns to, is the program's own code
 * (not the tracker's, the C library's, the loader's or libunwind's, which
 * the tracker calls itself), and the thread's next event writes a LOST
 * record with the count (record.c): a gap in the capture is always said.
 */
extern __thread unsigned long mp_nested_lost MP_IE_TLS MP_HIDDEN;
void mp_note_nested(uint64_t caller, unsigned events) MP_HIDDEN;

/*
 * Inside a hook that records, its stack pointer (0 outside), set and
 * cleared in one store each. A hook can be left for good: a signal handler
 * that interrupted it returns by siglongjmp (or ends the thread). A hook
 * entered later on the same stack at or above that place cannot be nested
 * in the one before (a handler's frames are below what it interrupted), so
 * that one was left: mp_hook_abandoned(sp) puts the thread's state right
 * (record.c) and returns 1, and the new hook records.
 */
extern __thread uintptr_t mp_hook_sp MP_IE_TLS MP_HIDDEN;
int mp_hook_abandoned(uintptr_t sp) MP_HIDDEN;

/* Inside the tracker: a hook that records, or the tracker's own work. */
static inline int mp_inside(void)
{
	return mp_in_hook || mp_hook_sp;
}

/*
 * Critical sections: while a thread holds a lock of the tracker's, or is in
 * the loader or libunwind for it, mp_cs is nonzero (nested). A signal
 * handler of the program's must not run there: one that never returns
 * (siglongjmp, a thread's exit, asynchronous cancellation) would leave the
 * lock held for good, and one that waits for another thread, which waits
 * for the lock, would stop both. Every handler the program installs is
 * entered through the tracker's trampoline (signals.c), which looks at
 * mp_cs: inside a section it defers the signal (queued again to the thread,
 * blocked), and the section's end lets it in (mp_sig_replay(), a system
 * call only when a signal came). So a section costs no system call.
 * Synchronous faults are never deferred, and are not expected there.
 */
extern __thread unsigned mp_cs MP_IE_TLS MP_HIDDEN;
/* The signals deferred on this thread (bit sig - 1), let in when its last section ends. */
extern __thread uint64_t mp_sig_deferred MP_IE_TLS MP_HIDDEN;
void mp_sig_replay(void) MP_HIDDEN;
static inline void mp_cs_enter(void)
{
	mp_cs++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}
static inline void mp_cs_leave(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (--mp_cs == 0) {
		/* (A signal deferred before the store above is seen here; one after it ran.) */
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		if (unlikely(__atomic_load_n(&mp_sig_deferred, __ATOMIC_RELAXED)))
			mp_sig_replay();
	}
}

/*
 * Signals blocked for real (nested: the outermost block saves the mask, the
 * outermost unblock restores it), a critical section too: around the rare
 * operations that call code which may meet a handler the trampoline does
 * not see (one installed with a raw system call): the loader's refresh of
 * the module map, a new thread's stack bounds (pthread_getattr_np), fork.
 */
void mp_sig_block(void) MP_HIDDEN;
void mp_sig_unblock(void) MP_HIDDEN;
/*
 * In a forked child, whose locks are made anew rather than unlocked: the
 * program's mask as it was before the fork's handlers took them, and no
 * critical section.
 */
void mp_sig_forked(void) MP_HIDDEN;

/*
 * A futex lock: 0 free, 1 held, 2 held with waiters. Uncontended it costs one
 * atomic exchange each way, half of what pthread_mutex_lock/unlock cost;
 * it is a critical section while held (above).
 */
void mp_lock_slow(int *l, int c) MP_HIDDEN;
static inline void mp_lock(int *l)
{
	int c = 0;
	mp_cs_enter();
	if (likely(__atomic_compare_exchange_n(l, &c, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)))
		return;
	mp_lock_slow(l, c);
}
void mp_unlock_wake(int *l) MP_HIDDEN;
static inline void mp_unlock(int *l)
{
	if (unlikely(__atomic_exchange_n(l, 0, __ATOMIC_RELEASE) == 2))
		mp_unlock_wake(l);
	mp_cs_leave();
}

/*
 * Around the tracker's own calls that are cancellation points (write, open,
 * pread, nanosleep, pthread_join) made on a program's thread while it holds
 * a lock of ours: a pending pthread_cancel would act there and unwind the
 * thread with the lock held, and every other thread would wait for it
 * forever. The cancel acts at the program's next cancellation point.
 */
static inline int mp_cancel_off(void)
{
	int old = PTHREAD_CANCEL_ENABLE;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	return old;
}
static inline void mp_cancel_restore(int old)
{
	if (old != PTHREAD_CANCEL_DISABLE)
		pthread_setcancelstate(old, &old);
}

static inline uint64_t mp_now_ns(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Small helpers that never allocate (util.c). */
size_t mp_u64_to_dec(char *buf, uint64_t v) MP_HIDDEN;
void mp_write_stderr(const char *a, const char *b, const char *c) MP_HIDDEN;
ssize_t mp_read_file(const char *path, char *buf, size_t size) MP_HIDDEN;
/* The program's absolute path, "" when unknown (/proc/self/exe, else the name exec was given). */
void mp_exe_path(char *buf, size_t size) MP_HIDDEN;
/* A decimal number (digits only, no more than 64 bits): 0 with it in *out, else -1. */
int mp_dec_u64(const char *v, uint64_t *out) MP_HIDDEN;
uint64_t mp_env_u64(const char *name, uint64_t dflt) MP_HIDDEN;
const char *mp_getenv(const char *name) MP_HIDDEN;
/*
 * This user's private directory, /tmp/memprof-UID (the control sockets'),
 * made if it is not there, into dir: its length, or -1 when it is not a
 * directory of this user's alone (mode 0700) or does not fit.
 */
int mp_user_dir(char *dir, size_t cap) MP_HIDDEN;
/* Raw memory from the kernel, never from malloc. */
void *mp_pages(size_t size) MP_HIDDEN;
void mp_pages_free(void *p, size_t size) MP_HIDDEN;
/*
 * Room for need elements of elem bytes in *arr (mp_pages memory): the
 * capacity *cap doubles from first; the contents move. 0, or -1 with *arr
 * as it was.
 */
int mp_pages_grow(void **arr, size_t *cap, size_t need, size_t elem, size_t first) MP_HIDDEN;

#endif
