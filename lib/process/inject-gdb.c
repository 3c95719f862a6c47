/* Inject with gdb: `gdb -batch -p PID` stops at an allocator's entry and makes the calls. */
#include <config.h>
#include "lib/process/inject-private.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/process/procmaps.h"
#include "lib/process/remote.h"
#include "lib/util/strbuf.h"
#include "lib/util/xalloc.h"

/*
 * memray's recipe: breakpoints on the entries of malloc, calloc, realloc and free (in
 * every module that defines them, so a preloaded allocator counts too), continue until
 * one hits, delete them, then call mmap, dlopen, dlsym, entry and munmap at that point,
 * where the thread holds no allocator lock. Everything is called by address (resolved
 * by mp_inject_resolve_fns(), as for the ptrace method) and strings are written as
 * words, so gdb needs neither symbols nor the target's malloc, and `set auto-solib-add
 * off` keeps it quick.
 * A target that never allocates never reaches a safe point: at the deadline we interrupt
 * gdb and report that, rather than calling dlopen at an arbitrary point (which can corrupt
 * the heap, see the reference); the ptrace method handles idle targets, whose threads
 * wait in read, poll, nanosleep and the like.
 */

/* Write str (len bytes, NUL included) at var + offset in the target, as gdb commands. */
static void gdb_write_bytes(struct strbuf *s, const char *var, uint64_t offset, const char *str, size_t len)
{
	/* Words of 8 bytes, little-endian, so that no string literal (which gdb would malloc) is needed. */
	for (size_t i = 0; i < len; i += 8) {
		uint64_t w = 0;
		for (size_t j = 0; j < 8 && i + j < len; j++)
			w |= (uint64_t)(unsigned char)str[i + j] << (8 * j);
		strbuf_addf(s, "set {unsigned long} (%s + %llu) = 0x%llx\n", var,
			    (unsigned long long)(offset + i), (unsigned long long)w);
	}
}

static void gdb_script(struct strbuf *s, const struct mp_inject_opts *o, const struct target_fns *f,
		       const uint64_t *bp, size_t nr_bp)
{
	size_t lib_len = strlen(o->library) + 1, arg_len = strlen(o->arg) + 1, entry_len = strlen(o->entry) + 1;
	uint64_t size = (lib_len + arg_len + entry_len + 8 + 4095) & ~(uint64_t)4095; /* + a partial last word */

	strbuf_addstr(s,
		"set pagination off\n"
		"set confirm off\n"
		"set width 0\n"
		"set height 0\n"
		"set print thread-events off\n"
		"set print inferior-events off\n"
		"set unwindonsignal on\n"
		"handle all nostop noprint pass\n"
		"handle SIGSEGV SIGBUS SIGILL SIGFPE SIGABRT stop print pass\n");
	/* memray's safe point: the entry of an allocator function holds no allocator lock */
	for (size_t i = 0; i < nr_bp; i++)
		strbuf_addf(s, "break *0x%llx\n", (unsigned long long)bp[i]);
	strbuf_addstr(s, "echo memprof-gdb: waiting\\n\ncontinue\nset $mp_pc = (unsigned long) $pc\nif ");
	for (size_t i = 0; i < nr_bp; i++)
		strbuf_addf(s, "%s$mp_pc == 0x%llx", i ? " || " : "", (unsigned long long)bp[i]);
	strbuf_addstr(s, "\n  delete\n  echo memprof-gdb: safe point\\n\n");
	/* the thread that runs the calls, so that a timeout can interrupt exactly that one */
	if (f->gettid)
		strbuf_addf(s, "  printf \"memprof-gdb: tid %%d\\n\", ((int (*)(void)) 0x%llx)()\n",
			    (unsigned long long)f->gettid);
	else if (f->syscall)
		strbuf_addf(s, "  printf \"memprof-gdb: tid %%ld\\n\", ((long (*)(long)) 0x%llx)(%d)\n",
			    (unsigned long long)f->syscall, SYS_gettid);
	strbuf_addf(s, "  set $mp_s = (unsigned long) ((void *(*)(void *, unsigned long, int, int, int, long)) 0x%llx)"
		    "(0, %llu, %d, %d, -1, 0)\n", (unsigned long long)f->mmap, (unsigned long long)size,
		    PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS);
	strbuf_addstr(s, "  printf \"memprof-gdb: scratch %lu\\n\", $mp_s\n");
	gdb_write_bytes(s, "$mp_s", 0, o->library, lib_len);
	gdb_write_bytes(s, "$mp_s", lib_len, o->arg, arg_len);
	gdb_write_bytes(s, "$mp_s", lib_len + arg_len, o->entry, entry_len);
	strbuf_addf(s, "  set $mp_h = (unsigned long) ((void *(*)(const char *, int)) 0x%llx)((const char *) $mp_s, %d)\n",
		    (unsigned long long)f->dlopen, f->dlopen_mode);
	strbuf_addstr(s, "  printf \"memprof-gdb: handle %lu\\n\", $mp_h\n  if $mp_h == 0\n");
	if (f->dlerror)
		strbuf_addf(s, "    set $mp_e = (unsigned long) ((char *(*)(void)) 0x%llx)()\n"
			    "    if $mp_e != 0\n      printf \"memprof-gdb: dlerror %%s\\n\", (char *) $mp_e\n    end\n",
			    (unsigned long long)f->dlerror);
	strbuf_addstr(s, "  else\n");
	strbuf_addf(s, "    set $mp_f = (unsigned long) ((void *(*)(void *, const char *)) 0x%llx)((void *) $mp_h, "
		    "(const char *) ($mp_s + %zu))\n", (unsigned long long)f->dlsym, lib_len + arg_len);
	strbuf_addstr(s, "    if $mp_f == 0\n      echo memprof-gdb: no entry\\n\n    else\n");
	strbuf_addf(s, "      set $mp_r = ((long (*)(const char *)) $mp_f)((const char *) ($mp_s + %zu))\n"
		    "      printf \"memprof-gdb: result %%ld\\n\", $mp_r\n    end\n  end\n", lib_len);
	strbuf_addstr(s, "  echo memprof-gdb: call done\\n\n");
	strbuf_addf(s, "  set $mp_u = ((int (*)(void *, unsigned long)) 0x%llx)((void *) $mp_s, %llu)\n",
		    (unsigned long long)f->munmap, (unsigned long long)size);
	strbuf_addstr(s, "else\n  delete\n  echo memprof-gdb: no safe point\\n\nend\ndetach\nquit\n");
}

/* malloc, calloc, realloc and free of every module that defines them (preloaded allocators too). */
static void allocator_entries(const struct mp_procmaps *maps, uint64_t **bp, size_t *nr)
{
	static const char *const names[] = { "malloc", "calloc", "realloc", "free" };
	size_t alloc = 0;

	for (size_t i = 0; i < maps->nr; i++) {
		const struct mp_procmaps_entry *e = &maps->v[i];
		struct strbuf ignore = STRBUF_INIT;
		uint64_t a[4];

		if (e->offset != 0 || !e->inode || !e->path || e->path[0] != '/')
			continue;
		if (mp_procmaps_symbols(maps, e, names, 4, a, &ignore) == 0) {
			for (size_t j = 0; j < 4; j++) {
				size_t k;
				if (!a[j])
					continue;
				for (k = 0; k < *nr && (*bp)[k] != a[j]; k++)
					;
				if (k == *nr) {
					ALLOC_GROW(*bp, *nr + 1, alloc);
					(*bp)[(*nr)++] = a[j];
				}
			}
		}
		strbuf_release(&ignore);
	}
}

static const char *find_line(const char *out, const char *prefix)
{
	const char *p = out;
	size_t n = strlen(prefix);

	while ((p = strstr(p, prefix))) {
		if (p == out || p[-1] == '\n')
			return p + n;
		p += n;
	}
	return NULL;
}

/* Run gdb on the script, collecting its output until it exits; SIGINT it at the deadline. */
static int run_gdb(const struct mp_inject_opts *o, const char *script, uint64_t deadline, struct strbuf *out,
		   int *interrupted, struct strbuf *err)
{
	char pidbuf[32];
	int pipefd[2], status = 0;
	pid_t child;
	uint64_t kill_at = deadline + 5000 * MS_NS;

	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)o->pid);
	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		strbuf_addf(err, "cannot create a pipe for gdb: %s", strerror(errno));
		return -1;
	}
	child = fork();
	if (child < 0) {
		strbuf_addf(err, "cannot start gdb: %s", strerror(errno));
		close(pipefd[0]);
		close(pipefd[1]);
		return -1;
	}
	if (child == 0) {
		int devnull = open("/dev/null", O_RDONLY);
		/* If memprof dies, gdb gets SIGINT, stops waiting, and detaches cleanly. */
		prctl(PR_SET_PDEATHSIG, SIGINT);
		setpgid(0, 0); /* a Ctrl-C meant for memprof must not reach gdb mid-call */
		if (devnull >= 0)
			dup2(devnull, 0);
		dup2(pipefd[1], 1);
		dup2(pipefd[1], 2);
		execlp("gdb", "gdb", "-batch", "-nx", "-nw", "-iex", "set auto-solib-add off",
		       "-iex", "set debuginfod enabled off", "-p", pidbuf, "-x", script, (char *)NULL);
		dprintf(1, "memprof-gdb: exec %d\n", errno);
		_exit(127);
	}
	close(pipefd[1]);
	*interrupted = 0;
	for (;;) {
		struct pollfd p = { pipefd[0], POLLIN, 0 };
		uint64_t now = mp_remote_now();
		uint64_t until = *interrupted ? kill_at : deadline;
		int ms = now >= until ? 0 : (int)((until - now) / MS_NS) + 1;
		int n = poll(&p, 1, ms);

		if (n > 0) {
			char buf[4096];
			ssize_t got = read(pipefd[0], buf, sizeof(buf));
			if (got > 0) {
				strbuf_add(out, buf, (size_t)got);
				continue;
			}
			if (got == 0 || errno != EINTR)
				break;
		} else if (n == 0) {
			const char *tid = find_line(out->buf, "memprof-gdb: tid ");
			if (!*interrupted && tid && !find_line(out->buf, "memprof-gdb: call done")) {
				/*
				 * gdb is in a call: interrupting gdb would signal some other thread,
				 * and gdb would leave the call running, to return into nowhere.
				 * A SIGINT to the calling thread makes gdb unwind the call instead.
				 */
				syscall(SYS_tgkill, o->pid, atoi(tid), SIGINT);
				*interrupted = 1;
			} else if (!*interrupted) {
				kill(child, SIGINT);
				*interrupted = 1;
			} else {
				/* last resort: gdb hangs; the kernel detaches it, breakpoints may remain */
				kill(child, SIGKILL);
				*interrupted = 2;
			}
		}
	}
	close(pipefd[0]);
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	return 0;
}

/* gdb's output on one line, for verbose errors. */
static void add_gdb_output(struct strbuf *err, const char *out)
{
	strbuf_addstr(err, " (gdb said: ");
	for (const char *p = out; *p; p++) {
		if (*p == '\n') {
			if (p[1])
				strbuf_addstr(err, " | ");
		} else if ((unsigned char)*p >= 0x20) {
			strbuf_addch(err, *p);
		}
	}
	strbuf_addch(err, ')');
}

/* The line of out that holds what, without its end; NULL when none does. */
static const char *line_with(const char *out, const char *what, size_t *len)
{
	const char *p = strstr(out, what), *start;

	if (!p)
		return NULL;
	for (start = p; start > out && start[-1] != '\n'; start--)
		;
	*len = strchrnul(p, '\n') - start;
	return start;
}

void mp_inject_gdb_explain(const struct mp_inject_opts *o, const char *out, int interrupted, uint64_t deadline_ms,
			   struct strbuf *err)
{
	int pid = (int)o->pid;
	struct proc_status st;
	const char *p;
	size_t len;

	if ((p = find_line(out, "memprof-gdb: exec "))) {
		strbuf_addf(err, "cannot run gdb: %s; install the Debian package 'gdb' or use --method ptrace",
			    strerror(atoi(p)));
	} else if (strstr(out, "ptrace: Operation not permitted")) {
		struct strbuf why = STRBUF_INIT;
		if (mp_inject_check(o->pid, &why) < 0)
			strbuf_addstr(err, why.buf);
		else
			strbuf_addf(err, "gdb cannot attach to %d: ptrace: Operation not permitted; check "
				    "kernel.yama.ptrace_scope, seccomp and the process's owner, or run as root", pid);
		strbuf_release(&why);
	} else if ((p = line_with(out, "Couldn't write extended state status", &len))) {
		/*
		 * gdb 13.1 on a CPU with AMX: PTRACE_SETREGSET of the extended state fails
		 * with EFAULT, so gdb can set up no call (memray's issue 723 met the like with
		 * another gdb and kernel). The first call failed: none of ours ran.
		 */
		strbuf_addf(err, "gdb cannot call functions in process %d on this machine: it cannot set the thread's "
			    "registers (gdb said \"%.*s\": a limitation of gdb with this kernel and CPU, seen with AMX); "
			    "use --method ptrace, the default", pid, (int)len, p);
	} else if (find_line(out, "memprof-gdb: safe point") &&
		   (mp_inject_read_status(o->pid, &st) < 0 || st.state == 'Z' || st.state == 'X')) {
		/* gdb words this in several ways, some of them internal errors */
		strbuf_addf(err, "process %d exited during injection", pid);
	} else if (strstr(out, "ptrace: No such process")) {
		strbuf_addf(err, "cannot attach to %d: no such process; check the process id with ps", pid);
	} else if (strstr(out, "exited while in a function called from GDB") || strstr(out, "exited with code") ||
		   strstr(out, "exited normally") || strstr(out, "terminated with signal")) {
		strbuf_addf(err, "process %d exited during injection", pid);
	} else if (find_line(out, "memprof-gdb: no safe point")) {
		strbuf_addf(err, "cannot attach to %d: no safe point within %llu ms (no thread entered malloc, calloc, "
			    "realloc or free); retry while the program allocates, or use --method ptrace",
			    pid, (unsigned long long)deadline_ms);
	} else if (strstr(out, "signaled while in a function called from GDB")) {
		if (interrupted && strstr(out, "received signal SIGINT"))
			strbuf_addf(err, "the call in process %d did not return within %llu ms; gdb abandoned it and "
				    "restored the thread's registers", pid, (unsigned long long)deadline_ms);
		else
			strbuf_addf(err, "the call in process %d crashed; gdb abandoned it and restored the thread's "
				    "registers", pid);
	} else if ((p = find_line(out, "memprof-gdb: handle 0"))) {
		const char *why = find_line(out, "memprof-gdb: dlerror ");
		strbuf_addf(err, "cannot load '%s' into process %d: ", o->library, pid);
		if (why)
			strbuf_add(err, why, strchrnul(why, '\n') - why);
		else
			strbuf_addstr(err, "dlopen failed");
		strbuf_addstr(err, "; check that the file exists in the process's file system and is a shared "
			      "library for its machine");
	} else if (find_line(out, "memprof-gdb: no entry")) {
		strbuf_addf(err, "cannot call '%s' in process %d: '%s' exports no function '%s'", o->entry, pid,
			    o->library, o->entry);
	} else if (interrupted) {
		strbuf_addf(err, "gdb did not finish the injection into %d within %llu ms", pid,
			    (unsigned long long)deadline_ms);
	} else {
		strbuf_addf(err, "gdb failed to inject into %d; rerun with verbose output to see why", pid);
	}
	if (o->verbose)
		add_gdb_output(err, out);
}

int mp_inject_gdb(const struct mp_inject_opts *o, uint64_t deadline, long *result, struct strbuf *err)
{
	struct mp_procmaps maps = MP_PROCMAPS_INIT;
	struct target_fns fns;
	struct strbuf script = STRBUF_INIT, out = STRBUF_INIT;
	uint64_t *bp = NULL;
	size_t nr_bp = 0;
	char path[] = "/tmp/memprof-gdb-XXXXXX";
	const char *tmpdir = getenv("TMPDIR");
	char *tmpl = tmpdir && *tmpdir ? xasprintf("%s/memprof-gdb-XXXXXX", tmpdir) : xstrdup(path);
	int fd = -1, interrupted = 0, rc = -1;
	const char *p;

	if (mp_procmaps_read(&maps, o->pid, err) < 0 || mp_inject_resolve_fns(&maps, &fns, err) < 0)
		goto out;
	if (!fns.dlsym) {
		strbuf_addf(err, "cannot attach to %d: its C library has no dlsym; use --method ptrace", (int)o->pid);
		goto out;
	}
	allocator_entries(&maps, &bp, &nr_bp);
	if (!nr_bp) {
		strbuf_addf(err, "cannot attach to %d: no malloc, calloc, realloc or free found in its modules; "
			    "use --method ptrace", (int)o->pid);
		goto out;
	}
	gdb_script(&script, o, &fns, bp, nr_bp);
	fd = mkstemp(tmpl);
	if (fd < 0 || write(fd, script.buf, script.len) != (ssize_t)script.len) {
		strbuf_addf(err, "cannot write the gdb script '%s': %s", tmpl, strerror(errno));
		goto out;
	}
	close(fd);
	fd = -1;
	if (run_gdb(o, tmpl, deadline, &out, &interrupted, err) < 0)
		goto out;
	if ((p = find_line(out.buf, "memprof-gdb: result ")) && !interrupted) {
		*result = strtol(p, NULL, 10);
		rc = 0;
	} else {
		mp_inject_gdb_explain(o, out.buf, interrupted, o->timeout_ms, err);
	}
out:
	if (fd >= 0)
		close(fd);
	unlink(tmpl);
	free(tmpl);
	free(bp);
	strbuf_release(&script);
	strbuf_release(&out);
	mp_procmaps_release(&maps);
	return rc;
}
