/* Debug files kept decompressed, by build-id (debugcache.h). */
#include <config.h>
#include "lib/symbols/debugcache.h"

#include <dirent.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/util/bytes.h"
#include "lib/util/sort.h"
#include "lib/util/strbuf.h"
#include "lib/util/xalloc.h"

#define DEFAULT_MAX_BYTES (1ull << 30)
/* A file being written that is older than this was left by a run that died: removed. */
#define STALE_TEMP_S 3600

void mp_debugcache_init(struct mp_debugcache *dc)
{
	const char *dir = getenv("MEMPROF_CACHE_DIR"), *size = getenv("MEMPROF_CACHE_SIZE");
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	memset(dc, 0, sizeof(*dc));
	dc->max_bytes = DEFAULT_MAX_BYTES;
	if (size && *size && mp_parse_bytes(size, strlen(size), 1, &dc->max_bytes) < 0)
		dc->max_bytes = DEFAULT_MAX_BYTES; /* (not a size: the default, as if unset) */
	if (!dc->max_bytes)
		return;
	if (dir)
		dc->dir = *dir ? xasprintf("%s/debug", dir) : NULL;
	else if (xdg && xdg[0] == '/')
		dc->dir = xasprintf("%s/memprof/debug", xdg);
	else if (home && home[0] == '/')
		dc->dir = xasprintf("%s/.cache/memprof/debug", home);
}

void mp_debugcache_release(struct mp_debugcache *dc)
{
	free(dc->dir);
	dc->dir = NULL;
}

/* ---- what a file holds ---- */

/*
 * The decompressed size of elf's compressed sections (0: none), or -1 when
 * its section headers cannot be read. Sections compressed the old GNU way
 * (.zdebug) are left to libdw.
 */
static int64_t compressed_bytes(Elf *elf)
{
	Elf_Scn *scn = NULL;
	uint64_t total = 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		GElf_Chdr ch;
		if (!gelf_getshdr(scn, &sh))
			return -1;
		if (!(sh.sh_flags & SHF_COMPRESSED))
			continue;
		if (!gelf_getchdr(scn, &ch) || ch.ch_size > INT64_MAX - total)
			return -1;
		total += ch.ch_size;
	}
	return (int64_t)total;
}

/* Whether fd is a file to use for this build-id: an ELF file with it, no compressed section, nothing past its end. */
static bool sound(int fd, const uint8_t *id, size_t len)
{
	struct stat st;
	Elf *elf;
	const void *got;
	ssize_t got_len;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	size_t shnum;
	bool ok = false;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return false;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		goto out;
	got_len = dwelf_elf_gnu_build_id(elf, &got);
	if (got_len <= 0 || (size_t)got_len != len || memcmp(got, id, len))
		goto out;
	/* (libelf reads a table of section headers past the end as no sections at all) */
	if (!gelf_getehdr(elf, &eh) || elf_getshdrnum(elf, &shnum) || !shnum ||
	    eh.e_shoff > (uint64_t)st.st_size ||
	    (uint64_t)shnum * eh.e_shentsize > (uint64_t)st.st_size - eh.e_shoff)
		goto out;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || (sh.sh_flags & SHF_COMPRESSED))
			goto out;
		if (sh.sh_type != SHT_NOBITS &&
		    (sh.sh_offset > (uint64_t)st.st_size || sh.sh_size > (uint64_t)st.st_size - sh.sh_offset))
			goto out;
	}
	ok = true;
out:
	if (elf)
		elf_end(elf);
	return ok;
}

static char *entry_path(const struct mp_debugcache *dc, const uint8_t *id, size_t len, const char *kind)
{
	struct strbuf sb = STRBUF_INIT;
	strbuf_addf(&sb, "%s/", dc->dir);
	for (size_t i = 0; i < len; i++)
		strbuf_addf(&sb, "%02x", id[i]);
	strbuf_addf(&sb, ".%s", kind);
	return strbuf_detach(&sb, NULL);
}

int mp_debugcache_find(struct mp_debugcache *dc, const uint8_t *id, size_t len, const char *kind,
		       char **found)
{
	char *path;
	int fd;
	if (!dc->dir || !len)
		return -1;
	path = entry_path(dc, id, len, kind);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && !sound(fd, id, len)) {
		/* Not what its name says (a disk that lost it?): written again. */
		close(fd);
		fd = -1;
		unlink(path);
	}
	if (fd >= 0) {
		futimens(fd, NULL); /* used now: the last to go when the cache is trimmed */
		dc->hits++;
	}
	if (fd >= 0 && found)
		*found = path;
	else
		free(path);
	return fd;
}

/* ---- the copy ---- */

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return a > 1 ? (v + a - 1) / a * a : v;
}

/* A section of out holding data's bytes. */
static int copy_data(Elf_Scn *to, const Elf_Data *data)
{
	Elf_Data *nd;
	if (!data || !data->d_size)
		return 0;
	nd = elf_newdata(to);
	if (!nd)
		return -1;
	nd->d_buf = data->d_buf;
	nd->d_size = data->d_size;
	nd->d_type = data->d_type;
	nd->d_align = data->d_align ? data->d_align : 1;
	nd->d_off = 0;
	nd->d_version = EV_CURRENT;
	return 0;
}

/* Where the file's parts end, leaving out the compressed sections' data: the copy adds theirs after. */
static int layout_end(Elf *in, const GElf_Ehdr *eh, size_t phnum, uint64_t *end)
{
	Elf_Scn *scn = NULL;
	*end = eh->e_ehsize;
	if (phnum && eh->e_phoff + (uint64_t)phnum * eh->e_phentsize > *end)
		*end = eh->e_phoff + (uint64_t)phnum * eh->e_phentsize;
	while ((scn = elf_nextscn(in, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			return -1;
		if (sh.sh_type != SHT_NOBITS && !(sh.sh_flags & SHF_COMPRESSED) &&
		    sh.sh_offset + sh.sh_size > *end)
			*end = sh.sh_offset + sh.sh_size;
	}
	return 0;
}

/*
 * The copy, laid out by hand (ELF_F_LAYOUT): every section that was not
 * compressed stays at its offset, so the program headers stay true (a
 * PT_NOTE still finds the build-id note); the decompressed sections follow
 * the last of them, then the section headers.
 */
static int write_copy(Elf *in, Elf *out, uint64_t *size)
{
	GElf_Ehdr eh;
	size_t phnum, shnum, shstrndx;
	uint64_t end;
	Elf_Scn *scn = NULL;
	int64_t written;

	if (!gelf_getehdr(in, &eh) || elf_getphdrnum(in, &phnum) || elf_getshdrnum(in, &shnum) ||
	    elf_getshdrstrndx(in, &shstrndx))
		return -1;
	/* (Extended numbering keeps counts in section 0, which this copy does not write.) */
	if (shnum >= SHN_LORESERVE || shstrndx >= SHN_LORESERVE || phnum >= PN_XNUM)
		return -1;
	if (!gelf_newehdr(out, gelf_getclass(in)) || (phnum && !gelf_newphdr(out, phnum)))
		return -1;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(in, (int)i, &ph) || !gelf_update_phdr(out, (int)i, &ph))
			return -1;
	}
	if (layout_end(in, &eh, phnum, &end))
		return -1;
	while ((scn = elf_nextscn(in, scn))) {
		Elf_Scn *to = elf_newscn(out);
		Elf_Data *data = NULL;
		GElf_Shdr sh;
		if (!to || !gelf_getshdr(scn, &sh))
			return -1;
		if (sh.sh_flags & SHF_COMPRESSED) {
			if (elf_compress(scn, 0, 0) != 1 || !gelf_getshdr(scn, &sh))
				return -1;
			data = elf_getdata(scn, NULL);
			if (!data || data->d_size != sh.sh_size)
				return -1;
			sh.sh_offset = align_up(end, sh.sh_addralign);
			end = sh.sh_offset + sh.sh_size;
		} else if (sh.sh_type != SHT_NOBITS) {
			data = elf_rawdata(scn, NULL);
			if (!data && sh.sh_size)
				return -1;
		}
		if (copy_data(to, data) || !gelf_update_shdr(to, &sh))
			return -1;
	}
	eh.e_shoff = align_up(end, gelf_getclass(in) == ELFCLASS64 ? 8 : 4);
	if (!gelf_update_ehdr(out, &eh))
		return -1;
	elf_flagelf(out, ELF_C_SET, ELF_F_LAYOUT);
	written = elf_update(out, ELF_C_WRITE);
	if (written < 0)
		return -1;
	*size = (uint64_t)written;
	return 0;
}

int mp_debugcache_decompress(int in_fd, int out_fd, uint64_t *size)
{
	Elf *in, *out = NULL;
	int r = -1;
	elf_version(EV_CURRENT);
	in = elf_begin(in_fd, ELF_C_READ_MMAP, NULL);
	if (!in || elf_kind(in) != ELF_K_ELF || compressed_bytes(in) <= 0)
		goto out;
	out = elf_begin(out_fd, ELF_C_WRITE, NULL);
	if (out)
		r = write_copy(in, out, size);
out:
	/* (out's data points into in's: out goes first) */
	if (out)
		elf_end(out);
	if (in)
		elf_end(in);
	return r;
}

/* ---- the directory ---- */

/* mkdir -p, each new directory 0700. */
static int make_dirs(const char *dir)
{
	char *p = xstrdup(dir);
	int r = 0;
	for (char *s = p + 1;; s++) {
		char c = *s;
		if (c != '/' && c != '\0')
			continue;
		*s = '\0';
		if (mkdir(p, 0700) < 0 && errno != EEXIST) {
			r = -1;
			break;
		}
		*s = c;
		if (!c)
			break;
	}
	free(p);
	return r;
}

struct entry {
	char *name;
	uint64_t bytes;
	struct timespec used;
};

static int older_first(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	if (x->used.tv_sec != y->used.tv_sec)
		return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
	if (x->used.tv_nsec != y->used.tv_nsec)
		return x->used.tv_nsec < y->used.tv_nsec ? -1 : 1;
	return strcmp(x->name, y->name);
}

static bool has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n > m && !strcmp(s + n - m, suffix);
}

/* The directory back under its bound, the files used least recently removed first (never keep). */
static void trim(const struct mp_debugcache *dc, const char *keep)
{
	DIR *d = opendir(dc->dir);
	struct entry *e = NULL;
	size_t n = 0, alloc = 0;
	uint64_t total = 0;
	struct dirent *de;
	time_t now = time(NULL);
	if (!d)
		return;
	while ((de = readdir(d))) {
		struct stat st;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (de->d_name[0] == '.' && has_suffix(de->d_name, ".tmp")) {
			if (now - st.st_mtime > STALE_TEMP_S)
				unlinkat(dirfd(d), de->d_name, 0);
			continue;
		}
		if (!has_suffix(de->d_name, ".debug") && !has_suffix(de->d_name, ".elf"))
			continue;
		ALLOC_GROW(e, n + 1, alloc);
		e[n].name = xstrdup(de->d_name);
		e[n].bytes = (uint64_t)st.st_size;
		e[n].used = st.st_mtim;
		total += e[n].bytes;
		n++;
	}
	if (total > dc->max_bytes) {
		mp_qsort(e, n, sizeof(*e), older_first);
		for (size_t i = 0; i < n && total > dc->max_bytes; i++) {
			if (!strcmp(e[i].name, keep))
				continue;
			if (unlinkat(dirfd(d), e[i].name, 0) == 0)
				total -= e[i].bytes;
		}
	}
	for (size_t i = 0; i < n; i++)
		free(e[i].name);
	free(e);
	closedir(d);
}

/* Write fd's decompressed copy into the cache as path; 0 when it is there now. */
static int store(struct mp_debugcache *dc, int fd, const char *path)
{
	static unsigned seq;
	const char *base = strrchr(path, '/') + 1;
	char *tmp;
	uint64_t size = 0;
	int out, r;
	if (make_dirs(dc->dir) < 0)
		return -1;
	tmp = xasprintf("%s/.%s.%ld.%u.tmp", dc->dir, base, (long)getpid(),
			__atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED));
	out = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (out < 0) {
		free(tmp);
		return -1;
	}
	r = mp_debugcache_decompress(fd, out, &size);
	if (close(out) < 0)
		r = -1;
	/* (a concurrent run may have put the same copy there: either is whole) */
	if (r == 0 && rename(tmp, path) < 0)
		r = -1;
	if (r)
		unlink(tmp);
	free(tmp);
	if (r == 0) {
		dc->written++;
		trim(dc, base);
	}
	return r;
}

int mp_debugcache_swap(struct mp_debugcache *dc, int fd, const char *kind, const uint8_t *want,
		       size_t want_len)
{
	Elf *elf;
	const void *id = NULL;
	ssize_t id_len = 0;
	int64_t bytes = 0;
	uint8_t *idcopy = NULL;
	char *path = NULL;
	int got = -1;

	if (!dc->dir || fd < 0)
		return fd;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF) {
		bytes = compressed_bytes(elf);
		id_len = dwelf_elf_gnu_build_id(elf, &id);
		if (id_len > 0)
			idcopy = xmemdup(id, (size_t)id_len);
	}
	if (elf)
		elf_end(elf);
	/* Nothing to inflate, no name to keep it under (or not the one wanted), or too big to keep. */
	if (bytes <= 0 || !idcopy || (uint64_t)bytes > dc->max_bytes / 2 ||
	    (want_len && ((size_t)id_len != want_len || memcmp(idcopy, want, want_len))))
		goto out;
	got = mp_debugcache_find(dc, idcopy, (size_t)id_len, kind, NULL);
	if (got < 0) {
		path = entry_path(dc, idcopy, (size_t)id_len, kind);
		if (store(dc, fd, path) == 0) {
			got = open(path, O_RDONLY | O_CLOEXEC);
			if (got >= 0 && !sound(got, idcopy, (size_t)id_len)) {
				close(got);
				got = -1;
			}
		}
	}
out:
	free(path);
	free(idcopy);
	if (got < 0)
		return fd;
	close(fd);
	return got;
}
