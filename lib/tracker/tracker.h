/*
 * Internal interface of the tracker library (libmemprof.so): the hooks in
 * hooks.c call into the recording core in core.c. Nothing here may call
 * malloc, stdio or anything that locks in a way a hook could re-enter.
 */
#ifndef MEMPROF_LIB_TRACKER_TRACKER_H
#define MEMPROF_LIB_TRACKER_TRACKER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

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
};
extern struct mp_real mp_real MP_HIDDEN;

/* Set while a thread is inside a hook (or is a tracker thread): nested calls are not recorded. */
extern __thread int mp_in_hook MP_IE_TLS MP_HIDDEN;

/* 0 before init, 1 while recording, 2 when tracking ended (or never started) in this process. */
extern volatile int mp_state MP_HIDDEN;
enum { MP_STATE_INIT = 0, MP_STATE_ON = 1, MP_STATE_OFF = 2 };

/* Resolve the real functions and start recording if the environment asks for it. */
void mp_init_stage1(void) MP_HIDDEN;

void mp_record_alloc(unsigned kind, void *addr, size_t size) MP_HIDDEN;
void mp_record_free(unsigned kind, void *addr) MP_HIDDEN;
void mp_record_free_range(unsigned kind, void *addr, size_t size) MP_HIDDEN;
/* The process is about to exit with status (exit, _exit): note it and flush. */
void mp_record_exit(int status, int final) MP_HIDDEN;
/* Write everything buffered now (before exec, abort, _exit). */
void mp_flush_now(void) MP_HIDDEN;
void mp_record_fork(pid_t child) MP_HIDDEN;
/* The calling thread was renamed (or a thread identified by its pthread_t). */
void mp_record_thread_name(unsigned long pthread, const char *name) MP_HIDDEN;

/* Bootstrap arena for allocations made while dlsym resolves the real functions. */
void *mp_boot_alloc(size_t size, size_t align) MP_HIDDEN;
int mp_is_boot(const void *p) MP_HIDDEN;
size_t mp_boot_size(const void *p) MP_HIDDEN;

/*
 * Module map (modules.c): emit MODULE/MODULE_UNLOAD records for changes since
 * the last call; returns 1 when modules were added.
 */
int mp_modules_refresh(int force) MP_HIDDEN;
/* Note that the module map may have changed; the next event refreshes it. */
void mp_modules_mark_dirty(void) MP_HIDDEN;
int mp_modules_dirty(void) MP_HIDDEN;
/* True when ip falls inside a module known to the stream. */
int mp_modules_contains(uint64_t ip) MP_HIDDEN;
/* The module lock, held across fork so no refresh is half-done in the child. */
void mp_modules_lock(void) MP_HIDDEN;
void mp_modules_unlock(void) MP_HIDDEN;
void mp_modules_reinit_lock(void) MP_HIDDEN;
/* Forget every module (a followed fork child starts a new stream). */
void mp_modules_reset(void) MP_HIDDEN;
/* Run fn(arg) under the stream's lock. */
void mp_stream_locked(void (*fn)(void *), void *arg) MP_HIDDEN;
/* Append already-encoded records to the stream (takes the main lock). */
void mp_stream_append(const uint8_t *rec, size_t len) MP_HIDDEN;

/* The hooked functions by name, for GOT patching (hooks.c); ends with a NULL name. */
struct mp_hook {
	const char *name;
	void *fn;
};
extern const struct mp_hook mp_hooks[] MP_HIDDEN;
/* The real function a hook wraps, by name (what a GOT slot bound to the C library holds). */
void *mp_real_for(const char *name) MP_HIDDEN;

/* Attaching to a running process (attach.c, core.c). */
struct mp_attach_cfg {
	char socket_path[108];
	unsigned interval_ms, max_depth;
	int follow_fork, libunwind_only;
};
/* Start a stream to the collector of `memprof attach`; 0 or -errno (-EALREADY: tracked). */
int mp_attach_start(const struct mp_attach_cfg *cfg) MP_HIDDEN;
/* The load address of the tracker's own object, found once by setup (core.c). */
extern uint64_t mp_self_base MP_HIDDEN;
/*
 * Point the GOT slots of every loaded module (but ours and the loader) at the
 * hooks; only after mp_attach_start(), whose setup finds mp_self_base.
 */
int mp_got_patch(void) MP_HIDDEN;
/* Put every patched slot back. */
void mp_got_unpatch(void) MP_HIDDEN;

struct mp_marker_baseline {
	int valid;
	uint64_t arena, in_use;
};
/* The C library's own view of its heap (mallinfo2), as the unattributed baseline at attach. */
void mp_heap_baseline(struct mp_marker_baseline *b) MP_HIDDEN;

/* Small helpers that never allocate (util.c). */
size_t mp_u64_to_dec(char *buf, uint64_t v) MP_HIDDEN;
void mp_write_stderr(const char *a, const char *b, const char *c) MP_HIDDEN;
ssize_t mp_read_file(const char *path, char *buf, size_t size) MP_HIDDEN;
uint64_t mp_env_u64(const char *name, uint64_t dflt) MP_HIDDEN;
const char *mp_getenv(const char *name) MP_HIDDEN;
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
