/* Finding and vetting the program that `memprof run` starts. */
#include <config.h>
#include "lib/process/target.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "lib/util/machine.h"
#include "lib/util/xalloc.h"

#if defined(__x86_64__)
#define OUR_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define OUR_MACHINE EM_AARCH64
#elif defined(__i386__)
#define OUR_MACHINE EM_386
#else
#define OUR_MACHINE EM_NONE
#endif
#define OUR_CLASS (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32)

static int fail(struct strbuf *err, int *status, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail(struct strbuf *err, int *status, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	strbuf_vsetf(err, fmt, ap);
	va_end(ap);
	*status = code;
	return -1;
}

/* Like execvp: a name without a slash is looked up in PATH. */
static char *search_path(const char *name)
{
	const char *path = getenv("PATH");
	char *found = NULL;
	if (strchr(name, '/'))
		return xstrdup(name);
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (!found) {
		size_t len = strcspn(path, ":");
		char *cand = len ? xasprintf("%.*s/%s", (int)len, path, name) : xasprintf("./%s", name);
		struct stat st;
		if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0)
			found = cand;
		else
			free(cand);
		if (!path[len])
			break;
		path += len + 1;
	}
	return found;
}

static const char *machine_name(unsigned m)
{
	const char *name = mp_elf_machine(m);
	return name ? name : "another machine";
}

/* Check an ELF file the tracker would be preloaded into. */
static int check_elf(const char *shown, const char *path, const unsigned char *head, size_t n,
		     int fd, struct strbuf *err, int *status)
{
	Elf64_Ehdr eh;
	int has_interp = 0;
	if (n < EI_NIDENT || memcmp(head, ELFMAG, SELFMAG))
		return fail(err, status, 126, "'%s': not an executable program", shown);
	if (head[EI_CLASS] != OUR_CLASS || n < sizeof(Elf32_Ehdr)) {
		return fail(err, status, 1, "'%s' is a %d-bit program; memprof's tracker is %d-bit",
			    shown, head[EI_CLASS] == ELFCLASS32 ? 32 : 64, (int)sizeof(void *) * 8);
	}
	if (n < sizeof(eh))
		return fail(err, status, 126, "'%s': truncated ELF header", shown);
	memcpy(&eh, head, sizeof(eh));
	if (eh.e_machine != OUR_MACHINE)
		return fail(err, status, 1, "'%s' is a program for %s; memprof's tracker is for %s", shown,
			    machine_name(eh.e_machine), machine_name(OUR_MACHINE));
	for (unsigned i = 0; i < eh.e_phnum && i < 4096; i++) {
		Elf64_Phdr ph;
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * eh.e_phentsize)) !=
		    (ssize_t)sizeof(ph))
			break;
		if (ph.p_type == PT_INTERP)
			has_interp = 1;
	}
	if (!has_interp)
		return fail(err, status, 1,
			    "'%s' is statically linked: memprof tracks programs through the dynamic "
			    "loader (LD_PRELOAD); link it dynamically", shown);
	(void)path;
	return 0;
}

/* The kernel runs set-id programs in secure mode, where LD_PRELOAD is ignored. */
static int check_secure(const char *shown, const char *path, const struct stat *st,
			struct strbuf *err, int *status)
{
	if ((st->st_mode & S_ISUID) && st->st_uid != getuid())
		return fail(err, status, 1,
			    "'%s' is set-user-ID: the loader ignores LD_PRELOAD for it; run memprof "
			    "as its owner or use a copy without the set-user-ID bit", shown);
	if ((st->st_mode & S_ISGID) && st->st_gid != getgid())
		return fail(err, status, 1,
			    "'%s' is set-group-ID: the loader ignores LD_PRELOAD for it; use a copy "
			    "without the set-group-ID bit", shown);
	if (getuid() != 0 && getxattr(path, "security.capability", NULL, 0) > 0)
		return fail(err, status, 1,
			    "'%s' has file capabilities: the loader ignores LD_PRELOAD for it; use a "
			    "copy without them or run as root", shown);
	return 0;
}

static int check_file(const char *shown, const char *path, struct strbuf *err, int *status,
		      unsigned char *head, size_t *n)
{
	struct stat st;
	int fd;
	ssize_t got;
	if (stat(path, &st) < 0)
		return fail(err, status, errno == ENOENT || errno == ENOTDIR ? 127 : 126,
			    "'%s': %s", shown, errno == ENOENT ? "no such file" : strerror(errno));
	if (S_ISDIR(st.st_mode))
		return fail(err, status, 126, "'%s': is a directory", shown);
	if (access(path, X_OK) < 0)
		return fail(err, status, 126, "'%s': permission denied", shown);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(err, status, 126, "'%s': %s", shown, strerror(errno));
	got = read(fd, head, 256);
	*n = got > 0 ? (size_t)got : 0;
	if (*n >= 2 && head[0] == '#' && head[1] == '!') {
		close(fd);
		return check_secure(shown, path, &st, err, status);
	}
	if (check_elf(shown, path, head, *n, fd, err, status) < 0) {
		close(fd);
		return -1;
	}
	close(fd);
	return check_secure(shown, path, &st, err, status);
}

int mp_target_resolve(struct mp_target *t, int argc, char **argv, struct strbuf *err, int *status)
{
	unsigned char head[257];
	size_t n = 0;
	memset(t, 0, sizeof(*t));
	t->path = search_path(argv[0]);
	if (!t->path)
		return fail(err, status, 127, "'%s': no such file", argv[0]);
	if (check_file(argv[0], t->path, err, status, head, &n) < 0)
		return -1;
	t->argc = argc;
	t->argv = xcalloc((size_t)argc + 3, sizeof(char *));
	for (int i = 0; i < argc; i++)
		t->argv[i] = xstrdup(argv[i]);
	t->preloaded = xstrdup(t->path);
	if (n >= 2 && head[0] == '#' && head[1] == '!') {
		/* A script: the tracker goes into its interpreter. */
		char line[257], *interp, *arg, *end;
		head[n] = '\0';
		memcpy(line, head + 2, n - 1);
		line[strcspn(line, "\n")] = '\0';
		interp = line + strspn(line, " \t");
		end = interp + strcspn(interp, " \t");
		arg = *end ? end + 1 + strspn(end + 1, " \t") : end;
		*end = '\0';
		arg[strcspn(arg, "\r")] = '\0';
		if (!*interp)
			return fail(err, status, 126, "'%s': empty interpreter line", argv[0]);
		free(t->preloaded);
		t->preloaded = NULL;
		if (!strcmp(interp, "/usr/bin/env") && *arg && !strchr(arg, ' ') && arg[0] != '-') {
			/*
			 * env would start the real interpreter after the tracker removed
			 * itself from the environment; run the interpreter directly, as
			 * env would: "NAME script args...".
			 */
			char *real = search_path(arg);
			if (!real)
				return fail(err, status, 127, "'%s': interpreter '%s' not found", argv[0],
					    arg);
			free(t->argv[0]);
			memmove(t->argv + 1, t->argv, (size_t)argc * sizeof(char *));
			t->argv[0] = xstrdup(arg);
			t->argv[1] = xstrdup(t->path);
			t->argc = argc + 1;
			free(t->path);
			t->path = real;
			interp = real;
		}
		{
			char *shown = xasprintf("%s (interpreter of %s)", interp, argv[0]);
			unsigned char ihead[257];
			size_t in = 0;
			int r = check_file(shown, interp, err, status, ihead, &in);
			free(shown);
			if (r < 0)
				return -1;
			if (in >= 2 && ihead[0] == '#' && ihead[1] == '!')
				return fail(err, status, 126, "'%s': its interpreter '%s' is a script",
					    argv[0], interp);
		}
		t->preloaded = xstrdup(interp);
	}
	return 0;
}

void mp_target_release(struct mp_target *t)
{
	free(t->path);
	free(t->preloaded);
	if (t->argv)
		for (int i = 0; i < t->argc; i++)
			free(t->argv[i]);
	free(t->argv);
	memset(t, 0, sizeof(*t));
}
