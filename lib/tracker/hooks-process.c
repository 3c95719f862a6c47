/*
 * The process-lifecycle calls libmemprof.so interposes: those after which
 * buffered events would be lost (exit, _exit, abort, exec) or that the
 * capture records (fork, thread names), mlockall (the rings' reservation)
 * and dlclose (the module map). Their aliases for GOT patching are here;
 * the table of every hook is hooks.c's.
 */
#include <config.h>

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <alloca.h>
#include <dlfcn.h>
#include <pthread.h>

#include "lib/tracker/lifecycle.h"
#include "lib/tracker/modules.h"
#include "lib/tracker/record.h"
#include "lib/tracker/stream.h"
#include "lib/tracker/threads.h"

int __libc_start_main(int (*main)(int, char **, char **), int argc, char **argv,
		      void (*init)(void), void (*fini)(void), void (*rtld_fini)(void), void *stack_end);

/* ---- processes ---- */

MP_EXPORT pid_t fork(void)
{
	pid_t pid;
	if (unlikely(!mp_real.fork))
		mp_init_stage1();
	pid = mp_real.fork();
	if (pid > 0)
		mp_record_fork(pid);
	return pid;
}

MP_EXPORT void exit(int status)
{
	if (unlikely(!mp_real.exit))
		mp_init_stage1();
	mp_record_exit(status, 0);
	mp_real.exit(status);
}

MP_EXPORT void _exit(int status)
{
	if (unlikely(!mp_real._exit)) {
		syscall(SYS_exit_group, status);
		__builtin_unreachable();
	}
	mp_record_exit(status, 1);
	mp_real._exit(status);
}

MP_EXPORT void _Exit(int status)
{
	if (unlikely(!mp_real._Exit)) {
		syscall(SYS_exit_group, status);
		__builtin_unreachable();
	}
	mp_record_exit(status, 1);
	mp_real._Exit(status);
}

/*
 * Returning from main calls exit() inside the C library, past our exit hook:
 * wrap main to see its return value (the collector knows the status anyway;
 * a capture written by the tracker itself, and a followed child, need it).
 */
typedef int (*main_fn)(int, char **, char **);
static main_fn real_main;

static int main_wrapper(int argc, char **argv, char **envp)
{
	int r = real_main(argc, argv, envp);
	mp_record_exit(r, 0);
	return r;
}

MP_EXPORT int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void),
				void (*fini)(void), void (*rtld_fini)(void), void *stack_end)
{
	int (*real)(main_fn, int, char **, void (*)(void), void (*)(void), void (*)(void), void *);
	real = (__typeof__(real))dlsym(RTLD_NEXT, "__libc_start_main");
	real_main = main;
	return real(main_wrapper, argc, argv, init, fini, rtld_fini, stack_end);
}

MP_EXPORT void abort(void)
{
	if (unlikely(!mp_real.abort))
		mp_init_stage1();
	mp_flush_now();
	mp_real.abort();
}

/*
 * The exec hooks tell the collector an exec is on its way (mp_stream_exec),
 * then call the real one; one that returns failed: the collector is told it
 * is not after all. r is what the real exec returned.
 */
static int exec_done(int r)
{
	int saved = errno;
	mp_stream_exec(0);
	errno = saved;
	return r;
}

/* exec replaces the process image: write what is buffered first. */
MP_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	if (unlikely(!mp_real.execve))
		mp_init_stage1();
	mp_flush_now();
	mp_stream_exec(1);
	return exec_done(mp_real.execve(path, argv, envp));
}

MP_EXPORT int execv(const char *path, char *const argv[])
{
	if (unlikely(!mp_real.execv))
		mp_init_stage1();
	mp_flush_now();
	mp_stream_exec(1);
	return exec_done(mp_real.execv(path, argv));
}

MP_EXPORT int execvp(const char *file, char *const argv[])
{
	if (unlikely(!mp_real.execvp))
		mp_init_stage1();
	mp_flush_now();
	mp_stream_exec(1);
	return exec_done(mp_real.execvp(file, argv));
}

MP_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	if (unlikely(!mp_real.execvpe))
		mp_init_stage1();
	mp_flush_now();
	mp_stream_exec(1);
	return exec_done(mp_real.execvpe(file, argv, envp));
}

MP_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	if (unlikely(!mp_real.fexecve))
		mp_init_stage1();
	mp_flush_now();
	mp_stream_exec(1);
	return exec_done(mp_real.fexecve(fd, argv, envp));
}

/* The execl family builds an argv on the stack and goes through the hooks above. */
#define COLLECT_ARGS(first, argv, want_envp, envp_out)                        \
	do {                                                                  \
		va_list ap;                                                   \
		size_t n_ = 1;                                                \
		va_start(ap, first);                                          \
		while (va_arg(ap, char *))                                    \
			n_++;                                                 \
		va_end(ap);                                                   \
		argv = alloca((n_ + 1) * sizeof(char *));                     \
		argv[0] = (char *)first;                                      \
		va_start(ap, first);                                          \
		for (size_t i_ = 1; i_ <= n_; i_++)                           \
			argv[i_] = va_arg(ap, char *);                        \
		if (want_envp)                                                \
			envp_out = va_arg(ap, char *const *);                 \
		va_end(ap);                                                   \
	} while (0)

MP_EXPORT int execl(const char *path, const char *arg, ...)
{
	char **argv;
	char *const *envp = NULL;
	COLLECT_ARGS(arg, argv, 0, envp);
	(void)envp;
	return execv(path, argv);
}

MP_EXPORT int execlp(const char *file, const char *arg, ...)
{
	char **argv;
	char *const *envp = NULL;
	COLLECT_ARGS(arg, argv, 0, envp);
	(void)envp;
	return execvp(file, argv);
}

MP_EXPORT int execle(const char *path, const char *arg, ...)
{
	char **argv;
	char *const *envp = NULL;
	COLLECT_ARGS(arg, argv, 1, envp);
	return execve(path, argv, envp);
}

/* ---- thread names ---- */

MP_EXPORT int pthread_setname_np(pthread_t thread, const char *name)
{
	int r;
	if (unlikely(!mp_real.pthread_setname_np))
		mp_init_stage1();
	r = mp_real.pthread_setname_np((unsigned long)thread, name);
	if (r == 0)
		mp_record_thread_name((unsigned long)thread, name);
	return r;
}

MP_EXPORT int prctl(int option, ...)
{
	unsigned long a[4];
	va_list ap;
	int r;
	va_start(ap, option);
	for (int i = 0; i < 4; i++)
		a[i] = va_arg(ap, unsigned long);
	va_end(ap);
	if (unlikely(!mp_real.prctl))
		return (int)syscall(SYS_prctl, option, a[0], a[1], a[2], a[3]);
	r = mp_real.prctl(option, a[0], a[1], a[2], a[3]);
	if (r == 0 && option == PR_SET_NAME)
		mp_record_thread_name((unsigned long)pthread_self(), (const char *)a[0]);
	return r;
}

/*
 * The rings reserve 2 GiB of address space, which mlockall(MCL_CURRENT)
 * counts against RLIMIT_MEMLOCK: a program that may lock what it has
 * untracked must be able to tracked. When the lock is refused, the
 * reservation beyond the rings in use goes and the program's call is made
 * again; later rings are mapped as they come (or tracking stops, saying
 * why, if that is refused).
 */
MP_EXPORT int mlockall(int flags)
{
	int r, err;
	if (unlikely(!mp_real.mlockall))
		mp_init_stage1();
	if (unlikely(!mp_real.mlockall))
		return (int)syscall(SYS_mlockall, flags);
	r = mp_real.mlockall(flags);
	if (r == 0 || !(flags & MCL_CURRENT) || (errno != ENOMEM && errno != EAGAIN))
		return r;
	err = errno;
	if (!mp_stream_unreserve()) {
		errno = err;
		return r;
	}
	return mp_real.mlockall(flags);
}

/*
 * The loader unmaps a library with no call our hooks see: the module map is
 * refreshed at once, so that the unload comes before anything loaded at the
 * same place (whose code then gets trace nodes of its own,
 * mp_stacks_forget_code()), and until then the other threads' events look
 * at the map themselves (mp_modules_unload_begin()).
 */
MP_EXPORT int dlclose(void *handle)
{
	int r;
	if (unlikely(!mp_real.dlclose))
		mp_init_stage1();
	if (unlikely(!mp_real.dlclose))
		return -1;
	if (mp_inside())
		return mp_real.dlclose(handle);
	mp_modules_unload_begin();
	r = mp_real.dlclose(handle);
	mp_modules_unload_end();
	return r;
}

/* Hidden aliases for GOT patching (see hooks.c). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpragmas"
#pragma GCC diagnostic ignored "-Wunknown-warning-option" /* clang has no -Wmissing-attributes */
#pragma GCC diagnostic ignored "-Wmissing-attributes" /* the aliases need not repeat 'nothrow' & co. */
#define ALIAS(name) extern __typeof__(name) mp_hook_##name __attribute__((alias(#name), visibility("hidden")));
ALIAS(fork)
ALIAS(exit)
ALIAS(_exit)
ALIAS(_Exit)
ALIAS(abort)
ALIAS(execve)
ALIAS(execv)
ALIAS(execvp)
ALIAS(execvpe)
ALIAS(fexecve)
ALIAS(execl)
ALIAS(execlp)
ALIAS(execle)
ALIAS(pthread_setname_np)
ALIAS(prctl)
ALIAS(dlclose)
ALIAS(mlockall)
#pragma GCC diagnostic pop
