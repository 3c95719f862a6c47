/* Load a shared library into a running process and call a function in it: the checks, the ptrace method. */
#include <config.h>
#include "lib/process/inject.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "lib/process/inject-private.h"
#include "lib/process/procmaps.h"
#include "lib/process/remote.h"
#include "lib/util/machine.h"
#include "lib/util/xalloc.h"

/* Stack for the calls in the target: dlopen runs constructors, give them room. */
#define SCRATCH_STACK (1024 * 1024)
/* dlopen's mode: RTLD_NOW; the private __libc_dlopen_mode also wants __RTLD_DLOPEN. */
#define MP_RTLD_NOW 2
#define MP_RTLD_DLOPEN 0x80000000

static const char *const libc_names[] = { "libc.so", "libc-2.", "ld-musl", NULL };
static const char *const ld_names[] = { "ld-linux", "ld-musl", "ld-2.", "ld.so", NULL };
static const char *const libdl_names[] = { "libdl.so", "libdl-", NULL };
/* Code a thread must not be executing when we call dlopen on it. */
static const char *const unsafe_names[] = {
	"libc.so", "libc-2.", "ld-linux", "ld-musl", "ld-2.", "ld.so", "libpthread", "libdl.so",
	"libdl-", "libjemalloc", "libtcmalloc", "libmimalloc", "[vdso]", "[vsyscall]", NULL
};

/* ---- what /proc says about a process ---- */

int mp_inject_read_status(pid_t pid, struct proc_status *st)
{
	char path[64];
	struct strbuf sb = STRBUF_INIT;
	const char *line;

	memset(st, 0, sizeof(*st));
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (strbuf_read_file(&sb, path, 2048) < 0)
		return -1;
	for (line = sb.buf; *line; ) {
		const char *eol = strchrnul(line, '\n');
		int v;
		if (!strncmp(line, "Name:\t", 6))
			snprintf(st->name, sizeof(st->name), "%.*s", (int)(eol - line - 6), line + 6);
		else if (!strncmp(line, "State:\t", 7))
			st->state = line[7];
		else if (sscanf(line, "PPid: %d", &v) == 1)
			st->ppid = v;
		else if (sscanf(line, "TracerPid: %d", &v) == 1)
			st->tracer = v;
		else if (!strncmp(line, "Uid:", 4))
			sscanf(line + 4, "%lu %lu %lu %lu", &st->uid[0], &st->uid[1], &st->uid[2], &st->uid[3]);
		else if (!strncmp(line, "Gid:", 4))
			sscanf(line + 4, "%lu %lu %lu %lu", &st->gid[0], &st->gid[1], &st->gid[2], &st->gid[3]);
		line = *eol ? eol + 1 : eol;
	}
	strbuf_release(&sb);
	return 0;
}

static int have_cap_sys_ptrace(void)
{
	struct strbuf sb = STRBUF_INIT;
	const char *p;
	unsigned long long caps = 0;

	if (strbuf_read_file(&sb, "/proc/self/status", 2048) == 0 && (p = strstr(sb.buf, "CapEff:")))
		caps = strtoull(p + 7, NULL, 16);
	strbuf_release(&sb);
	return (caps >> 19) & 1; /* CAP_SYS_PTRACE */
}

/* kernel.yama.ptrace_scope, or -1 without Yama. */
static int yama_scope(void)
{
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
	int v = -1;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static int is_descendant(pid_t pid)
{
	struct proc_status st;

	for (int depth = 0; pid > 1 && depth < 4096; depth++) {
		if (mp_inject_read_status(pid, &st) < 0)
			return 0;
		if (st.ppid == getpid())
			return 1;
		pid = st.ppid;
	}
	return 0;
}

/* The executable must be an ELF program for this machine. 1 ok, 0 wrong (err), -1 unreadable. */
static int check_exe(pid_t pid, struct strbuf *err)
{
	char path[64];
	unsigned char h[EI_NIDENT + 4];
	unsigned machine;
	const char *name;
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, h, sizeof(h));
	close(fd);
	if (n != (ssize_t)sizeof(h) || memcmp(h, ELFMAG, SELFMAG))
		return -1;
	machine = h[EI_DATA] == ELFDATA2MSB ? (unsigned)h[EI_NIDENT + 2] << 8 | h[EI_NIDENT + 3]
					     : (unsigned)h[EI_NIDENT + 3] << 8 | h[EI_NIDENT + 2];
	name = mp_elf_machine(machine);
	if (h[EI_CLASS] == ELFCLASS32) {
		strbuf_addf(err, "cannot attach to %d: it is a 32-bit program (%s); memprof attach supports "
			    "x86_64 programs only", (int)pid, name ? name : "unknown machine");
		return 0;
	}
	if (machine != EM_X86_64) {
		strbuf_addf(err, "cannot attach to %d: it is a program for another machine (%s, ELF machine %u); "
			    "memprof attach supports x86_64 programs only", (int)pid, name ? name : "unknown", machine);
		return 0;
	}
	return 1;
}

static void describe_uids(struct strbuf *sb, const unsigned long *id, const char *what)
{
	if (id[0] == id[1] && id[1] == id[2])
		strbuf_addf(sb, "belongs to %s %lu", what, id[1]);
	else
		strbuf_addf(sb, "runs with %ss %lu/%lu/%lu (real/effective/saved)", what, id[0], id[1], id[2]);
}

/*
 * The checks behind mp_inject_check(). With strict_yama unset, Yama scope 1 towards a
 * process that is not our descendant passes: the process may have allowed us with
 * prctl(PR_SET_PTRACER), which cannot be seen from outside; *yama1 then says so, and
 * mp_inject() explains Yama if PTRACE_SEIZE is refused.
 */
static int check(pid_t pid, int strict_yama, int *yama1, struct strbuf *err)
{
	struct proc_status st;
	struct mp_procmaps maps = MP_PROCMAPS_INIT;
	struct strbuf sub = STRBUF_INIT;
	uid_t ruid, euid, suid;
	gid_t rgid, egid, sgid;
	int cap, scope, rc;

	if (yama1)
		*yama1 = 0;
#if !defined(__x86_64__)
	{
		struct utsname u;
		strbuf_addf(err, "memprof attach is not supported on %s: only x86_64 is implemented",
			    uname(&u) == 0 ? u.machine : "this machine");
		return -1;
	}
#endif
	if (pid <= 0) {
		strbuf_addf(err, "cannot attach to %d: not a process id", (int)pid);
		return -1;
	}
	if (pid == getpid()) {
		strbuf_addf(err, "cannot attach to %d: it is memprof itself", (int)pid);
		return -1;
	}
	if (mp_inject_read_status(pid, &st) < 0 || st.state == 'X') {
		strbuf_addf(err, "cannot attach to %d: no such process; check the process id with ps", (int)pid);
		return -1;
	}
	if (st.state == 'Z') {
		strbuf_addf(err, "cannot attach to %d: it is a zombie (it has exited and its parent %d has not "
			    "reaped it); there is nothing left to profile", (int)pid, (int)st.ppid);
		return -1;
	}
	if (st.tracer) {
		struct proc_status tr;
		if (mp_inject_read_status(st.tracer, &tr) < 0)
			snprintf(tr.name, sizeof(tr.name), "?");
		strbuf_addf(err, "cannot attach to %d: process %d is already traced by %d (%s); detach that "
			    "debugger or tracer first", (int)pid, (int)pid, (int)st.tracer, tr.name);
		return -1;
	}
	if (st.state == 'T' || st.state == 't') {
		strbuf_addf(err, "cannot attach to %d: the process is stopped; resume it with `kill -CONT %d` first",
			    (int)pid, (int)pid);
		return -1;
	}

	/* Permissions, in the kernel's order: credentials, dumpable, then Yama. */
	cap = have_cap_sys_ptrace();
	getresuid(&ruid, &euid, &suid);
	getresgid(&rgid, &egid, &sgid);
	if (!cap && (st.uid[0] != ruid || st.uid[1] != ruid || st.uid[2] != ruid)) {
		describe_uids(&sub, st.uid, "uid");
		strbuf_addf(err, "cannot attach to %d: the process %s and memprof runs as uid %lu without "
			    "CAP_SYS_PTRACE; run memprof as that user or as root", (int)pid, sub.buf, (unsigned long)ruid);
		strbuf_release(&sub);
		return -1;
	}
	if (!cap && (st.gid[0] != rgid || st.gid[1] != rgid || st.gid[2] != rgid)) {
		describe_uids(&sub, st.gid, "group");
		strbuf_addf(err, "cannot attach to %d: the process %s and memprof runs as group %lu without "
			    "CAP_SYS_PTRACE; run memprof with that group or as root", (int)pid, sub.buf,
			    (unsigned long)rgid);
		strbuf_release(&sub);
		return -1;
	}
	if (!cap) {
		/* the files in /proc/PID belong to root when the process is not dumpable */
		char path[64];
		struct stat sbuf;
		snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
		if (stat(path, &sbuf) == 0 && sbuf.st_uid == 0 && st.uid[1] != 0) {
			strbuf_addf(err, "cannot attach to %d: the process is not dumpable (a setuid, setgid or "
				    "file-capability program, or it called prctl(PR_SET_DUMPABLE, 0)); run memprof as root",
				    (int)pid);
			return -1;
		}
	}
	scope = yama_scope();
	if (scope == 3) {
		strbuf_addf(err, "cannot attach to %d: kernel.yama.ptrace_scope is 3: ptrace is disabled until the "
			    "next reboot; use `memprof run` to start the program under memprof instead", (int)pid);
		return -1;
	}
	if (scope == 2 && !cap) {
		strbuf_addf(err, "cannot attach to %d: kernel.yama.ptrace_scope is 2: only processes with "
			    "CAP_SYS_PTRACE can trace; run memprof as root", (int)pid);
		return -1;
	}
	if (scope == 1 && !cap && !is_descendant(pid)) {
		if (strict_yama) {
			strbuf_addf(err, "cannot attach to %d: kernel.yama.ptrace_scope is 1: only descendants can be "
				    "traced; run `sysctl kernel.yama.ptrace_scope=0` or run as root", (int)pid);
			return -1;
		}
		if (yama1)
			*yama1 = 1;
	}

	rc = check_exe(pid, err);
	if (rc == 0)
		return -1;
	if (rc < 0) {
		char path[64], link[16];
		snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
		if (readlink(path, link, sizeof(link)) < 0 && errno == ENOENT) {
			strbuf_addf(err, "cannot attach to %d: it is a kernel thread", (int)pid);
			return -1;
		}
	}

	if (mp_procmaps_read(&maps, pid, &sub) < 0) {
		strbuf_addf(err, "cannot attach to %d: %s", (int)pid, sub.buf);
		strbuf_release(&sub);
		return -1;
	}
	if (!mp_procmaps_find(&maps, ld_names) && !mp_procmaps_find(&maps, libc_names)) {
		strbuf_addf(err, "cannot attach to %d: it is statically linked: memprof attach needs a dynamically "
			    "linked program (use `memprof run` on a dynamic build)", (int)pid);
		mp_procmaps_release(&maps);
		return -1;
	}
	if (!mp_procmaps_find(&maps, libc_names)) {
		strbuf_addf(err, "cannot attach to %d: no C library is loaded in it; memprof attach needs a program "
			    "linked against glibc", (int)pid);
		mp_procmaps_release(&maps);
		return -1;
	}
	mp_procmaps_release(&maps);
	return 0;
}

int mp_inject_check(pid_t pid, struct strbuf *err)
{
	return check(pid, 1, NULL, err);
}

/* ---- functions we call in the target ---- */

int mp_inject_resolve_fns(const struct mp_procmaps *maps, struct target_fns *f, struct strbuf *err)
{
	static const char *const names[] = {
		"dlopen", "dlerror", "dlsym", "__libc_dlopen_mode", "__libc_dlsym", "mmap", "munmap",
		"__errno_location", "gettid", "syscall",
	};
	uint64_t a[sizeof(names) / sizeof(names[0])];
	const struct mp_procmaps_entry *libc = mp_procmaps_find(maps, libc_names), *libdl;
	struct strbuf sub = STRBUF_INIT;
	int pid = (int)maps->pid;

	memset(f, 0, sizeof(*f));
	if (!libc) {
		strbuf_addf(err, "cannot attach to %d: no C library is loaded in it", pid);
		return -1;
	}
	if (mp_procmaps_symbols(maps, libc, names, sizeof(names) / sizeof(names[0]), a, &sub) < 0) {
		strbuf_addf(err, "cannot attach to %d: %s", pid, sub.buf);
		strbuf_release(&sub);
		return -1;
	}
	f->dlopen = a[0];
	f->dlerror = a[1];
	f->dlsym = a[2];
	f->mmap = a[5];
	f->munmap = a[6];
	f->errno_location = a[7];
	f->gettid = a[8];
	f->syscall = a[9];
	f->dlopen_mode = MP_RTLD_NOW;
	f->dlopen_name = "dlopen";
	/* glibc < 2.34 keeps dlopen in libdl.so.2, when the program loaded it ... */
	if (!f->dlopen && (libdl = mp_procmaps_find(maps, libdl_names))) {
		static const char *const dl[] = { "dlopen", "dlerror", "dlsym" };
		uint64_t b[3];
		if (mp_procmaps_symbols(maps, libdl, dl, 3, b, &sub) == 0) {
			f->dlopen = b[0];
			f->dlerror = b[1];
			f->dlsym = b[2];
		}
		strbuf_reset(&sub);
	}
	/* ... else only its private __libc_dlopen_mode, which has no dlerror */
	if (!f->dlopen && a[3]) {
		f->dlopen = a[3];
		f->dlsym = a[4];
		f->dlerror = 0;
		f->dlopen_mode = MP_RTLD_NOW | (int)MP_RTLD_DLOPEN;
		f->dlopen_name = "__libc_dlopen_mode";
	}
	strbuf_release(&sub);
	if (!f->dlopen || !f->mmap || !f->munmap || !f->errno_location) {
		strbuf_addf(err, "cannot attach to %d: its C library '%s' lacks %s; memprof attach needs glibc",
			    pid, libc->path, !f->dlopen ? "dlopen" : !f->mmap ? "mmap" : !f->munmap ? "munmap"
			    : "__errno_location");
		return -1;
	}
	return 0;
}

/* The executable ranges of the modules matching names (all of them when names is NULL and of is set). */
static void collect_ranges(const struct mp_procmaps *maps, const char *const *names,
			   const struct mp_procmaps_entry *of, struct mp_remote_range **v, size_t *nr, size_t *alloc)
{
	for (size_t i = 0; i < maps->nr; i++) {
		const struct mp_procmaps_entry *e = &maps->v[i];
		int match = 0;

		if (e->perms[2] != 'x')
			continue;
		if (of) {
			match = mp_procmaps_same_file(e, of);
		} else {
			const char *base = mp_procmaps_basename(e);
			for (const char *const *p = names; *p && !match; p++)
				match = !strncmp(base, *p, strlen(*p));
		}
		if (match) {
			ALLOC_GROW(*v, *nr + 1, *alloc);
			(*v)[*nr].start = e->start;
			(*v)[*nr].end = e->end;
			(*nr)++;
		}
	}
}

/* The library as the target sees it: /proc/PID/root/LIB. */
static char *target_path(pid_t pid, const char *library)
{
	return xasprintf("/proc/%d/root%s", (int)pid, library);
}

/*
 * When the library is readable from here, check before touching the target that it exports
 * entry. 0 ok or unknown (dlopen will tell), -1 with err.
 */
static int precheck_library(const struct mp_inject_opts *o, struct strbuf *err)
{
	char *path = target_path(o->pid, o->library);
	const char *names[1] = { o->entry };
	uint64_t value = 0, load = 0;
	struct strbuf sub = STRBUF_INIT;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 0;

	free(path);
	if (fd < 0)
		return 0;
	if (mp_procmaps_elf_symbols(fd, o->library, names, 1, &value, &load, &sub) < 0) {
		strbuf_addf(err, "cannot load '%s' into process %d: %s", o->library, (int)o->pid, sub.buf);
		rc = -1;
	} else if (!value) {
		strbuf_addf(err, "cannot call '%s' in process %d: '%s' exports no function '%s'", o->entry,
			    (int)o->pid, o->library, o->entry);
		rc = -1;
	}
	close(fd);
	strbuf_release(&sub);
	return rc;
}

/* entry's address in the target, from the library's mapping there and its own .dynsym. */
static int entry_address(const struct mp_inject_opts *o, uint64_t *addr, struct strbuf *err)
{
	struct mp_procmaps maps = MP_PROCMAPS_INIT;
	const struct mp_procmaps_entry *lib = NULL;
	const char *names[1] = { o->entry };
	char *path = target_path(o->pid, o->library);
	struct stat st;
	int rc = -1;

	if (mp_procmaps_read(&maps, o->pid, err) < 0)
		goto out;
	if (stat(path, &st) == 0)
		lib = mp_procmaps_find_file(&maps, st.st_dev, st.st_ino);
	for (size_t i = 0; !lib && i < maps.nr; i++)
		if (maps.v[i].offset == 0 && maps.v[i].path && !strcmp(maps.v[i].path, o->library))
			lib = &maps.v[i];
	if (!lib) {
		strbuf_addf(err, "'%s' was loaded but does not appear in the maps of process %d", o->library,
			    (int)o->pid);
		goto out;
	}
	if (mp_procmaps_symbols(&maps, lib, names, 1, addr, err) < 0)
		goto out;
	if (!*addr) {
		strbuf_addf(err, "cannot call '%s' in process %d: '%s' exports no function '%s'", o->entry,
			    (int)o->pid, o->library, o->entry);
		goto out;
	}
	rc = 0;
out:
	free(path);
	mp_procmaps_release(&maps);
	return rc;
}

/* ---- the ptrace method ---- */

static int inject_ptrace(const struct mp_inject_opts *o, int yama1, uint64_t deadline, long *result,
			 struct strbuf *err)
{
	struct mp_procmaps maps = MP_PROCMAPS_INIT;
	struct target_fns fns;
	struct mp_remote_range *unsafe = NULL, *loader = NULL;
	size_t nr_unsafe = 0, alloc_unsafe = 0, nr_loader = 0, alloc_loader = 0;
	const struct mp_procmaps_entry *ld;
	struct mp_remote r;
	uint64_t errno_addr = 0, scratch = 0, size = 0, ret = 0, lib_addr, arg_addr, handle, fn;
	int saved_errno = 0, have_errno = 0, rc = -1;
	size_t lib_len = strlen(o->library) + 1, arg_len = strlen(o->arg) + 1, entry_len = strlen(o->entry) + 1;

	mp_remote_init(&r, o->pid, deadline, o->timeout_ms);
	if (mp_procmaps_read(&maps, o->pid, err) < 0 || mp_inject_resolve_fns(&maps, &fns, err) < 0)
		goto out;
	collect_ranges(&maps, unsafe_names, NULL, &unsafe, &nr_unsafe, &alloc_unsafe);
	if ((ld = mp_procmaps_find(&maps, ld_names)))
		collect_ranges(&maps, NULL, ld, &loader, &nr_loader, &alloc_loader);

	if (mp_remote_stop_safe(&r, unsafe, nr_unsafe, loader, nr_loader, err) < 0) {
		if (yama1 && strstr(err->buf, "Operation not permitted")) {
			strbuf_reset(err);
			strbuf_addf(err, "cannot attach to %d: kernel.yama.ptrace_scope is 1: only descendants can be "
				    "traced; run `sysctl kernel.yama.ptrace_scope=0` or run as root", (int)o->pid);
		} else if (strstr(err->buf, "Operation not permitted")) {
			strbuf_addstr(err, "; check kernel.yama.ptrace_scope, seccomp and the process's owner, or "
				      "run as root");
		} else if (!strncmp(err->buf, "no safe point", 13)) {
			char *why = strbuf_detach(err, NULL);
			strbuf_addf(err, "cannot attach to %d: %s", (int)o->pid, why);
			free(why);
		}
		goto out;
	}

	/* errno belongs to the interrupted code: dlopen's failed opens must not change it */
	if (mp_remote_call(&r, "__errno_location", fns.errno_location, NULL, 0, 0, &errno_addr, err) < 0 ||
	    mp_remote_read(&r, errno_addr, &saved_errno, sizeof(saved_errno), err) < 0)
		goto out;
	have_errno = 1;

	size = ((lib_len + arg_len + entry_len + 4095) & ~(uint64_t)4095) + SCRATCH_STACK;
	{
		uint64_t args[6] = { 0, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, (uint64_t)-1, 0 };
		if (mp_remote_call(&r, "mmap", fns.mmap, args, 6, 0, &ret, err) < 0)
			goto out;
	}
	if (ret == (uint64_t)-1 || !ret) {
		int e = 0;
		mp_remote_read(&r, errno_addr, &e, sizeof(e), err);
		strbuf_addf(err, "cannot attach to %d: mmap of %llu bytes in the process failed: %s", (int)o->pid,
			    (unsigned long long)size, strerror(e));
		goto out;
	}
	scratch = ret;
	lib_addr = scratch;
	arg_addr = scratch + lib_len;
	if (mp_remote_write(&r, lib_addr, o->library, lib_len, err) < 0 ||
	    mp_remote_write(&r, arg_addr, o->arg, arg_len, err) < 0 ||
	    mp_remote_write(&r, arg_addr + arg_len, o->entry, entry_len, err) < 0)
		goto out;

	{
		uint64_t args[2] = { lib_addr, (uint64_t)(unsigned)fns.dlopen_mode };
		if (mp_remote_call(&r, fns.dlopen_name, fns.dlopen, args, 2, scratch + size, &handle, err) < 0)
			goto out;
	}
	if (!handle) {
		struct strbuf why = STRBUF_INIT;
		if (fns.dlerror && mp_remote_call(&r, "dlerror", fns.dlerror, NULL, 0, scratch + size, &ret, err) == 0 &&
		    ret)
			mp_remote_read_string(&r, ret, 4096, &why, err);
		strbuf_reset(err);
		strbuf_addf(err, "cannot load '%s' into process %d: %s; check that the file exists in the process's "
			    "file system and is a shared library for its machine", o->library, (int)o->pid,
			    why.len ? why.buf : "dlopen failed");
		strbuf_release(&why);
		goto out;
	}
	if (entry_address(o, &fn, err) < 0) {
		/* e.g. the file was replaced since it was first loaded: ask the loader itself */
		uint64_t args[2] = { handle, arg_addr + arg_len };
		struct strbuf ignore = STRBUF_INIT;
		if (!fns.dlsym || mp_remote_call(&r, "dlsym", fns.dlsym, args, 2, scratch + size, &fn, &ignore) < 0 ||
		    !fn) {
			strbuf_release(&ignore);
			goto out;
		}
		strbuf_release(&ignore);
		strbuf_reset(err);
	}
	{
		uint64_t args[1] = { arg_addr };
		if (mp_remote_call(&r, o->entry, fn, args, 1, scratch + size, &ret, err) < 0)
			goto out;
	}
	*result = (long)ret;
	rc = 0;
out:
	if (!r.gone && !r.call_pending && r.tid) {
		/* Leave nothing behind: the scratch area and errno as they were. */
		struct strbuf ignore = STRBUF_INIT;
		if (scratch) {
			/* on its own stack: the scratch stack goes away; a failure only leaks the area */
			uint64_t args[2] = { scratch, size };
			mp_remote_call(&r, "munmap", fns.munmap, args, 2, 0, &ret, &ignore);
		}
		if (have_errno && !r.gone && !r.call_pending)
			mp_remote_write(&r, errno_addr, &saved_errno, sizeof(saved_errno), &ignore);
		strbuf_release(&ignore);
	}
	if (r.gone && !strstr(err->buf, "exited during injection")) {
		strbuf_reset(err);
		strbuf_addf(err, "process %d exited during injection", (int)o->pid);
	}
	mp_remote_release(&r);
	if (r.reaped && o->reaped)
		*o->reaped = r.reaped_status;
	mp_procmaps_release(&maps);
	free(unsafe);
	free(loader);
	return rc;
}

/* ---- the entry point ---- */

int mp_inject(const struct mp_inject_opts *opts, long *result, struct strbuf *err)
{
	struct mp_inject_opts o = *opts;
	uint64_t deadline;
	int yama1 = 0;

	if (!o.timeout_ms)
		o.timeout_ms = 5000;
	deadline = mp_remote_now() + (uint64_t)o.timeout_ms * MS_NS;
	if (!o.library || o.library[0] != '/') {
		strbuf_addf(err, "cannot inject '%s': the library path must be absolute", o.library ? o.library : "");
		return -1;
	}
	if (!o.entry || !*o.entry || !o.arg) {
		strbuf_addstr(err, "cannot inject: no entry function or argument given");
		return -1;
	}
	if (check(o.pid, 0, &yama1, err) < 0)
		return -1;
	if (precheck_library(&o, err) < 0)
		return -1;
	if (o.method == MP_INJECT_GDB)
		return mp_inject_gdb(&o, deadline, result, err);
	return inject_ptrace(&o, yama1, deadline, result, err);
}
