/*
 * The functions libmemprof.so interposes: the malloc family and the mmap
 * family (the process-lifecycle calls are hooks-process.c's), and the table
 * of every hook, for GOT patching. Each hook calls the real function;
 * recording happens only when tracking is on and the thread is not already
 * inside a hook.
 */
#include <config.h>

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>

#include "lib/format/format.h"
#include "lib/tracker/hooks.h"
#include "lib/tracker/creds.h"
#include "lib/tracker/lifecycle.h"
#include "lib/tracker/modules.h"
#include "lib/tracker/record.h"
#include "lib/tracker/sample.h"
#include "lib/tracker/stream.h"
#include "lib/tracker/threads.h"

/* C23 functions our C library may not declare yet. */
void free_sized(void *p, size_t size);
void free_aligned_sized(void *p, size_t alignment, size_t size);

/* The hook's stack pointer: the same wherever in its body it is read. */
static inline __attribute__((always_inline)) uintptr_t hook_sp(void)
{
#if defined(__x86_64__)
	uintptr_t sp;
	__asm__ volatile("mov %%rsp, %0" : "=r"(sp));
	return sp;
#else
	return (uintptr_t)__builtin_frame_address(0);
#endif
}

/*
 * Whether the hook records its call. Inlined into each hook, so that the
 * return address is the hook's caller's: a call from the program while
 * this thread is inside a hook already (a signal handler) is counted lost.
 */
static inline __attribute__((always_inline)) int recording(void)
{
	uintptr_t sp;
	if (likely(mp_state == MP_STATE_ON) && likely(!mp_inside()))
		return 1;
	if (unlikely(mp_state == MP_STATE_INIT || mp_state == MP_STATE_CHILD) && !mp_inside()) {
		if (mp_state == MP_STATE_INIT)
			mp_init_stage1();
		else
			mp_child_setup();
		if (mp_state == MP_STATE_ON)
			return 1;
	}
	if (mp_state != MP_STATE_ON)
		return 0;
	/* Inside already; not nested after all if the hook before was left (base.h). */
	sp = hook_sp();
	if (mp_hook_sp && sp >= mp_hook_sp && mp_hook_abandoned(sp))
		return 1;
	mp_note_nested((uint64_t)(uintptr_t)__builtin_return_address(0), 1);
	return 0;
}

/* Inside a hook that records (nested calls are not recorded), and where. */
static inline __attribute__((always_inline)) void hook_enter(void)
{
	mp_hook_sp = hook_sp();
}

/* The same for a hook that records in a function of its own (idle(), below): where the hook is. */
static inline __attribute__((always_inline)) void hook_enter_at(uintptr_t sp)
{
	mp_hook_sp = sp;
}

static inline __attribute__((always_inline)) void hook_leave(void)
{
	mp_hook_sp = 0;
}

/*
 * A tracker loaded that records nothing (stopped, paused, or never started:
 * linked with -lmemprof, or loaded for the in-process API) passes the
 * allocator's calls straight through: a load, a branch and a jump. (What
 * records is in functions of its own, so that this path needs no frame.)
 */
static inline __attribute__((always_inline)) int idle(void)
{
	return likely(mp_state == MP_STATE_OFF);
}

static inline size_t page_round(size_t n)
{
	size_t ps = 4096;
	return (n + ps - 1) & ~(ps - 1);
}

static __attribute__((noinline)) void *malloc_recorded(size_t size, uintptr_t sp)
{
	struct mp_site site;
	void *p;
	hook_enter_at(sp);
	mp_record_site(&site, MP_SITE_DEFER);
	/* (sampled: at a page's start, where a free finds it: sample.h) */
	p = unlikely(mp_sample.interval) ? mp_sample_malloc(size) : mp_real.malloc(size);
	mp_record_settle(&site);
	if (likely(p != NULL)) {
		mp_record_alloc_at(&site, MP_KIND_MALLOC, p, size);
		mp_sample_keep(p);
	}
	hook_leave();
	return p;
}

/* malloc but its quick ways out (a tail call: the caller's return address stays). */
static __attribute__((noinline)) void *malloc_slow(size_t size)
{
	if (!mp_sample_drawn(size))
		return mp_real.malloc(size);
	if (!recording()) {
		if (unlikely(!mp_real.malloc))
			return mp_boot_alloc(size, 16);
		return mp_real.malloc(size);
	}
	return malloc_recorded(size, hook_sp());
}

MP_EXPORT void *malloc(size_t size)
{
	if (idle() && likely(mp_real.malloc != NULL))
		return mp_real.malloc(size);
	/* Sampled tracking: most allocations are not recorded, and cost this only (sample.h). */
	if (mp_sample_pass(size))
		return mp_real.malloc(size);
	return malloc_slow(size);
}

/*
 * Below this, a sampled calloc is made zeroed at a page's start at once;
 * above, calloc is asked first: glibc maps such a block by itself, at a
 * spot (sample.h), and the kernel's pages are zero already.
 */
#define CALLOC_MAPPED (128u << 10)

static __attribute__((noinline)) void *calloc_recorded(size_t nmemb, size_t size, uintptr_t sp)
{
	struct mp_site site;
	void *p;
	size_t n;
	hook_enter_at(sp);
	mp_record_site(&site, MP_SITE_DEFER);
	if (unlikely(mp_sample.interval) && !__builtin_mul_overflow(nmemb, size, &n) && n < CALLOC_MAPPED) {
		p = mp_sample_malloc(n);
		if (p)
			memset(p, 0, n);
	} else {
		p = mp_real.calloc(nmemb, size);
	}
	mp_record_settle(&site);
	if (p && !mp_sample_place(&p, nmemb * size, 0, 1)) {
		hook_leave();
		return p; /* (no memory to move it where a free finds it: not recorded) */
	}
	if (likely(p != NULL)) {
		mp_record_alloc_at(&site, MP_KIND_CALLOC, p, nmemb * size);
		mp_sample_keep(p);
	}
	hook_leave();
	return p;
}

static __attribute__((noinline)) void *calloc_slow(size_t nmemb, size_t size)
{
	if (!mp_sample_drawn(nmemb * size))
		return mp_real.calloc(nmemb, size);
	if (!recording()) {
		if (unlikely(!mp_real.calloc)) {
			size_t n;
			/* The arena is static and never reused, hence already zeroed. */
			return __builtin_mul_overflow(nmemb, size, &n) ? NULL : mp_boot_alloc(n, 16);
		}
		return mp_real.calloc(nmemb, size);
	}
	return calloc_recorded(nmemb, size, hook_sp());
}

MP_EXPORT void *calloc(size_t nmemb, size_t size)
{
	if (idle() && likely(mp_real.calloc != NULL))
		return mp_real.calloc(nmemb, size);
	if (mp_sample_pass(nmemb * size))
		return mp_real.calloc(nmemb, size);
	return calloc_slow(nmemb, size);
}

static __attribute__((noinline)) void free_recorded(void *p, uintptr_t sp)
{
	hook_enter_at(sp);
	/* Recorded before the memory is released: no later allocation can reuse it first. */
	mp_record_free(MP_KIND_FREE, p);
	mp_real.free(p);
	hook_leave();
}

/* free but its quick ways out (a tail call: the caller's return address stays). */
static __attribute__((noinline)) void free_slow(void *p)
{
	if (unlikely(!p || mp_is_boot(p)))
		return;
	/* A block sampled tracking did not record is seen here only when its bit is another's. */
	if (mp_sample_free_skip(p)) {
		mp_real.free(p);
		return;
	}
	if (!recording()) {
		if (likely(mp_real.free != NULL))
			mp_real.free(p);
		return;
	}
	free_recorded(p, hook_sp());
}

MP_EXPORT void free(void *p)
{
	if (idle() && likely(!mp_is_boot(p)) && likely(mp_real.free != NULL)) {
		mp_real.free(p);
		return;
	}
	/* Sampled tracking: only the free of a block recorded is (sample.h). */
	if (mp_sample_free_pass(p)) {
		mp_real.free(p);
		return;
	}
	free_slow(p);
}

/* realloc of a bootstrap block: move it to the real heap. */
static void *boot_realloc(void *p, size_t size)
{
	size_t old = mp_boot_size(p);
	void *q = malloc(size);
	if (q)
		memcpy(q, p, old < size ? old : size);
	return q;
}

/*
 * A reallocation is a free and an allocation, each recorded as the
 * sampling says (sample.h; both when every event is): in the free's case
 * the old block was recorded, in the allocation's the new size is sampled.
 */
static __attribute__((noinline)) void *realloc_common(unsigned kind, void *p, size_t size,
							 void *(*real)(void *, size_t))
{
	struct mp_site site;
	int freed = !p || mp_sample_free(p), alloc = mp_sample_alloc(size);
	void *q;
	if (!freed && !alloc)
		return real(p, size);
	hook_enter();
	if (alloc)
		mp_record_site(&site, MP_SITE_DEFER);
	if (p && freed)
		mp_record_free(kind, p);
	q = real(p, size);
	if (alloc) {
		mp_record_settle(&site);
		if (q && !mp_sample_place(&q, size, size, 0))
			alloc = 0; /* (sampled, and no memory to move it where a free finds it) */
		else if (q) {
			mp_record_alloc_at(&site, kind, q, size);
			mp_sample_keep(q);
		}
	}
	if (!q && p && size && freed) {
		/* Failed: the old block lives on (its size as the allocator knows it). */
		size_t old = mp_real.malloc_usable_size ? mp_real.malloc_usable_size(p) : 0;
		if (alloc)
			mp_record_alloc_at(&site, kind, p, old);
		else
			mp_record_alloc(kind, p, old);
		mp_sample_keep(p);
	}
	hook_leave();
	return q;
}

MP_EXPORT void *realloc(void *p, size_t size)
{
	if (idle() && likely(!mp_is_boot(p)) && likely(mp_real.realloc != NULL))
		return mp_real.realloc(p, size);
	if (unlikely(p && mp_is_boot(p)))
		return boot_realloc(p, size);
	if (!recording()) {
		if (unlikely(!mp_real.realloc))
			return p ? NULL : mp_boot_alloc(size, 16);
		return mp_real.realloc(p, size);
	}
	/* glibc's realloc(p, 0) frees p and returns NULL: recorded as a free. */
	return realloc_common(MP_KIND_REALLOC, p, size, mp_real.realloc);
}

static void *reallocarray_fallback(void *p, size_t size)
{
	return mp_real.realloc(p, size);
}

MP_EXPORT void *reallocarray(void *p, size_t nmemb, size_t size)
{
	size_t n;
	if (__builtin_mul_overflow(nmemb, size, &n)) {
		errno = ENOMEM;
		return NULL;
	}
	if (unlikely(p && mp_is_boot(p)))
		return boot_realloc(p, n);
	if (!recording())
		return mp_real.realloc ? mp_real.realloc(p, n) : (p ? NULL : mp_boot_alloc(n, 16));
	/* glibc implements it with a call to realloc, which the guard keeps unrecorded. */
	return realloc_common(MP_KIND_REALLOCARRAY, p, n, reallocarray_fallback);
}

static void free_kind(unsigned kind, void *p, void (*real)(void *))
{
	if (unlikely(!p || mp_is_boot(p)))
		return;
	if (!recording() || mp_sample_free_skip(p)) {
		real(p);
		return;
	}
	hook_enter();
	mp_record_free(kind, p);
	real(p);
	hook_leave();
}

MP_EXPORT void free_sized(void *p, size_t size)
{
	if (!mp_real.free_sized) {
		/* C libraries without it: free_sized(p, n) is free(p). */
		free_kind(MP_KIND_FREE_SIZED, p, mp_real.free);
		return;
	}
	if (unlikely(!p || mp_is_boot(p)))
		return;
	if (!recording() || mp_sample_free_skip(p)) {
		mp_real.free_sized(p, size);
		return;
	}
	hook_enter();
	mp_record_free(MP_KIND_FREE_SIZED, p);
	mp_real.free_sized(p, size);
	hook_leave();
}

MP_EXPORT void free_aligned_sized(void *p, size_t alignment, size_t size)
{
	if (!mp_real.free_aligned_sized) {
		free_kind(MP_KIND_FREE_ALIGNED_SIZED, p, mp_real.free);
		return;
	}
	if (unlikely(!p || mp_is_boot(p)))
		return;
	if (!recording() || mp_sample_free_skip(p)) {
		mp_real.free_aligned_sized(p, alignment, size);
		return;
	}
	hook_enter();
	mp_record_free(MP_KIND_FREE_ALIGNED_SIZED, p);
	mp_real.free_aligned_sized(p, alignment, size);
	hook_leave();
}

MP_EXPORT int posix_memalign(void **out, size_t alignment, size_t size)
{
	struct mp_site site;
	int r;
	if (!recording()) {
		if (unlikely(!mp_real.posix_memalign)) {
			void *p = mp_boot_alloc(size, alignment);
			if (!p)
				return ENOMEM;
			*out = p;
			return 0;
		}
		return mp_real.posix_memalign(out, alignment, size);
	}
	if (!mp_sample_alloc(size))
		return mp_real.posix_memalign(out, alignment, size);
	hook_enter();
	mp_record_site(&site, MP_SITE_DEFER);
	r = mp_real.posix_memalign(out, mp_sample_alignment(alignment), size);
	mp_record_settle(&site);
	if (r == 0 && mp_sample_place(out, size, 0, 0)) {
		mp_record_alloc_at(&site, MP_KIND_POSIX_MEMALIGN, *out, size);
		mp_sample_keep(*out);
	}
	hook_leave();
	return r;
}

/* (recorded_args: as args, a sampled block aligned to a page at least: sample.h) */
#define ALIGNED_HOOK(name, kind, params, args, recorded_args, boot, recorded) \
	MP_EXPORT void *name params                                  \
	{                                                            \
		struct mp_site site;                                 \
		void *p;                                             \
		if (!recording()) {                                  \
			if (unlikely(!mp_real.name))                 \
				return boot;                         \
			return mp_real.name args;                    \
		}                                                    \
		if (!mp_sample_alloc(recorded))                      \
			return mp_real.name args;                    \
		hook_enter();                                        \
		mp_record_site(&site, MP_SITE_DEFER);                \
		p = mp_real.name recorded_args;                      \
		mp_record_settle(&site);                             \
		if (p && mp_sample_place(&p, recorded, 0, 0)) {      \
			mp_record_alloc_at(&site, kind, p, recorded); \
			mp_sample_keep(p);                           \
		}                                                    \
		hook_leave();                                        \
		return p;                                            \
	}

ALIGNED_HOOK(aligned_alloc, MP_KIND_ALIGNED_ALLOC, (size_t alignment, size_t size),
	     (alignment, size), (mp_sample_alignment(alignment), size), mp_boot_alloc(size, alignment),
	     size)
ALIGNED_HOOK(memalign, MP_KIND_MEMALIGN, (size_t alignment, size_t size), (alignment, size),
	     (mp_sample_alignment(alignment), size), mp_boot_alloc(size, alignment), size)
ALIGNED_HOOK(valloc, MP_KIND_VALLOC, (size_t size), (size), (size), mp_boot_alloc(size, 4096), size)
/* pvalloc's contract is the size rounded up to whole pages. */
ALIGNED_HOOK(pvalloc, MP_KIND_PVALLOC, (size_t size), (size), (size),
	     mp_boot_alloc(page_round(size), 4096), page_round(size))

/* ---- the mmap family ---- */

static void *raw_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (mp_real.mmap)
		return mp_real.mmap(addr, len, prot, flags, fd, off);
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

MP_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *p;
	if (!recording())
		return raw_mmap(addr, len, prot, flags, fd, off);
	hook_enter();
	/* MAP_FIXED replaces whatever was mapped there. */
	if ((flags & MAP_FIXED) && !(flags & MAP_FIXED_NOREPLACE) && len &&
	    mp_sample_unmap(addr, page_round(len)))
		mp_record_free_range(MP_KIND_MMAP, addr, page_round(len));
	p = raw_mmap(addr, len, prot, flags, fd, off);
	if (p != MAP_FAILED && mp_sample_alloc(page_round(len))) {
		mp_record_alloc(MP_KIND_MMAP, p, page_round(len));
		mp_sample_keep_map(p, page_round(len));
	}
	hook_leave();
	return p;
}

MP_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return mmap(addr, len, prot, flags, fd, off);
}

MP_EXPORT int munmap(void *addr, size_t len)
{
	int r;
	if (!recording())
		return mp_real.munmap ? mp_real.munmap(addr, len) : (int)syscall(SYS_munmap, addr, len);
	hook_enter();
	/* munmap fails only on bad arguments: don't record those. */
	if (len && !((uintptr_t)addr & 4095) && mp_sample_unmap(addr, page_round(len)))
		mp_record_free_range(MP_KIND_MUNMAP, addr, page_round(len));
	r = mp_real.munmap(addr, len);
	hook_leave();
	return r;
}

MP_EXPORT void *mremap(void *old, size_t old_size, size_t new_size, int flags, ...)
{
	void *new_addr = NULL, *p;
	int freed;
	if (flags & MREMAP_FIXED) {
		va_list ap;
		va_start(ap, flags);
		new_addr = va_arg(ap, void *);
		va_end(ap);
	}
	if (!recording())
		return mp_real.mremap(old, old_size, new_size, flags, new_addr);
	hook_enter();
	/* A free of the old pages and an allocation of the new, each as sampling says (sample.h). */
	if ((flags & MREMAP_FIXED) && mp_sample_unmap(new_addr, page_round(new_size)))
		mp_record_free_range(MP_KIND_MREMAP, new_addr, page_round(new_size));
	freed = !(flags & MREMAP_DONTUNMAP) && mp_sample_unmap(old, page_round(old_size));
	if (freed)
		mp_record_free_range(MP_KIND_MREMAP, old, page_round(old_size));
	p = mp_real.mremap(old, old_size, new_size, flags, new_addr);
	if (p != MAP_FAILED && mp_sample_alloc(page_round(new_size))) {
		mp_record_alloc(MP_KIND_MREMAP, p, page_round(new_size));
		mp_sample_keep_map(p, page_round(new_size));
	} else if (p == MAP_FAILED && freed) {
		mp_record_alloc(MP_KIND_MREMAP, old, page_round(old_size));
		mp_sample_keep_map(old, page_round(old_size));
	}
	hook_leave();
	return p;
}

/* ---- the table GOT patching uses (attach) ---- */

/*
 * Hidden aliases: inside a library loaded with dlopen, "&malloc" would name
 * the C library's malloc (the first definition in the global scope); these
 * name ours.
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpragmas"
#pragma GCC diagnostic ignored "-Wunknown-warning-option" /* clang has no -Wmissing-attributes */
#pragma GCC diagnostic ignored "-Wmissing-attributes" /* the aliases need not repeat 'nothrow' & co. */
#define ALIAS(name) extern __typeof__(name) mp_hook_##name __attribute__((alias(#name), visibility("hidden")));
ALIAS(malloc)
ALIAS(calloc)
ALIAS(realloc)
ALIAS(reallocarray)
ALIAS(free)
ALIAS(free_sized)
ALIAS(free_aligned_sized)
ALIAS(posix_memalign)
ALIAS(aligned_alloc)
ALIAS(memalign)
ALIAS(valloc)
ALIAS(pvalloc)
ALIAS(mmap)
ALIAS(mmap64)
ALIAS(munmap)
ALIAS(mremap)
#pragma GCC diagnostic pop

/* hooks-process.c's: fork, exit, abort, exec, thread names, mlockall, dlclose. */
pid_t mp_hook_fork(void) MP_HIDDEN;
void mp_hook_exit(int status) MP_HIDDEN;
void mp_hook__exit(int status) MP_HIDDEN;
void mp_hook__Exit(int status) MP_HIDDEN;
void mp_hook_abort(void) MP_HIDDEN;
int mp_hook_execve(const char *path, char *const argv[], char *const envp[]) MP_HIDDEN;
int mp_hook_execv(const char *path, char *const argv[]) MP_HIDDEN;
int mp_hook_execvp(const char *file, char *const argv[]) MP_HIDDEN;
int mp_hook_execvpe(const char *file, char *const argv[], char *const envp[]) MP_HIDDEN;
int mp_hook_fexecve(int fd, char *const argv[], char *const envp[]) MP_HIDDEN;
int mp_hook_execl(const char *path, const char *arg, ...) MP_HIDDEN;
int mp_hook_execlp(const char *file, const char *arg, ...) MP_HIDDEN;
int mp_hook_execle(const char *path, const char *arg, ...) MP_HIDDEN;
int mp_hook_pthread_setname_np(pthread_t thread, const char *name) MP_HIDDEN;
int mp_hook_prctl(int option, ...) MP_HIDDEN;
int mp_hook_dlclose(void *handle) MP_HIDDEN;
int mp_hook_mlockall(int flags) MP_HIDDEN;

/* fds.c's: the close and dup hooks that keep the tracker's descriptors open and out of the way. */
int mp_hook_close(int fd) MP_HIDDEN;
int mp_hook_close_range(unsigned first, unsigned last, int flags) MP_HIDDEN;
void mp_hook_closefrom(int lowfd) MP_HIDDEN;
int mp_hook_dup2(int oldfd, int newfd) MP_HIDDEN;
int mp_hook_dup3(int oldfd, int newfd, int flags) MP_HIDDEN;

/* signals.c's: the program's handlers, entered through the tracker's trampoline. */
int mp_hook_sigaction(int sig, const struct sigaction *act, struct sigaction *old) MP_HIDDEN;
int mp_hook___sigaction(int sig, const struct sigaction *act, struct sigaction *old) MP_HIDDEN;
sighandler_t mp_hook_signal(int sig, sighandler_t handler) MP_HIDDEN;
sighandler_t mp_hook_bsd_signal(int sig, sighandler_t handler) MP_HIDDEN;
sighandler_t mp_hook_ssignal(int sig, sighandler_t handler) MP_HIDDEN;
sighandler_t mp_hook_sysv_signal(int sig, sighandler_t handler) MP_HIDDEN;
sighandler_t mp_hook___sysv_signal(int sig, sighandler_t handler) MP_HIDDEN;
int mp_hook_siginterrupt(int sig, int flag) MP_HIDDEN;
sighandler_t mp_hook_sigset(int sig, sighandler_t disp) MP_HIDDEN;

#define HOOK(name) { #name, (void *)mp_hook_##name }
const struct mp_hook mp_hooks[] = {
	HOOK(malloc), HOOK(calloc), HOOK(realloc), HOOK(reallocarray), HOOK(free),
	HOOK(free_sized), HOOK(free_aligned_sized), HOOK(posix_memalign), HOOK(aligned_alloc),
	HOOK(memalign), HOOK(valloc), HOOK(pvalloc), HOOK(mmap), HOOK(mmap64), HOOK(munmap),
	HOOK(mremap), HOOK(fork), HOOK(exit), HOOK(_exit), HOOK(_Exit), HOOK(abort),
	HOOK(execve), HOOK(execv), HOOK(execvp), HOOK(execvpe), HOOK(fexecve), HOOK(execl),
	HOOK(execlp), HOOK(execle), HOOK(pthread_setname_np), HOOK(prctl),
	HOOK(setuid), HOOK(setgid), HOOK(seteuid), HOOK(setegid), HOOK(setreuid),
	HOOK(setregid), HOOK(setresuid), HOOK(setresgid), HOOK(setgroups),
	HOOK(close), HOOK(close_range), HOOK(closefrom), HOOK(dup2), HOOK(dup3), HOOK(dlclose),
	HOOK(mlockall), HOOK(sigaction), HOOK(__sigaction), HOOK(signal), HOOK(bsd_signal),
	HOOK(ssignal), HOOK(sysv_signal), HOOK(__sysv_signal), HOOK(siginterrupt), HOOK(sigset),
	{ NULL, NULL },
};

void *mp_real_for(const char *name)
{
	static const struct {
		const char *name;
		size_t off;
	} map[] = {
#define REAL(n) { #n, offsetof(struct mp_real, n) }
		REAL(malloc), REAL(calloc), REAL(realloc), REAL(reallocarray), REAL(free),
		REAL(free_sized), REAL(free_aligned_sized), REAL(posix_memalign), REAL(aligned_alloc),
		REAL(memalign), REAL(valloc), REAL(pvalloc), REAL(mmap), REAL(munmap), REAL(mremap),
		REAL(fork), REAL(exit), REAL(_exit), REAL(_Exit), REAL(abort), REAL(execve),
		REAL(execv), REAL(execvp), REAL(execvpe), REAL(fexecve), REAL(pthread_setname_np),
		REAL(prctl), REAL(close), REAL(close_range), REAL(closefrom), REAL(dup2), REAL(dup3),
		REAL(dlclose), REAL(mlockall),
#undef REAL
	};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(map[i].name, name))
			return *(void **)((char *)&mp_real + map[i].off);
	/* mmap64 is mmap; the execl family has no real counterpart we keep: look it up. */
	return dlsym(RTLD_NEXT, name);
}
