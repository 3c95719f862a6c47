/* A family's captures found next to its first one, and the children that left none. */
#include <config.h>
#include "lib/analysis/analysis.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "lib/format/reader.h"
#include "lib/util/strbuf.h"
#include "lib/util/sort.h"
#include "lib/util/xalloc.h"

/* Whether name is base.PID or base.PID.N (a child's capture, as the collector names them). */
static bool child_name(const char *name, const char *base, uint64_t *pid)
{
	size_t len = strlen(base);
	const char *p;
	char *end;
	if (strncmp(name, base, len) || name[len] != '.')
		return false;
	p = name + len + 1;
	if (*p < '0' || *p > '9')
		return false;
	*pid = strtoull(p, &end, 10);
	if (*end == '.' && end[1] >= '0' && end[1] <= '9')
		strtoull(end + 1, &end, 10);
	return !*end;
}

static int name_cmp(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

int mp_family_find(const char *root, char ***paths, size_t *npaths, size_t *alloc,
		   struct strbuf *err)
{
	struct mp_reader r;
	const char *slash = strrchr(root, '/');
	char *dir = slash ? xstrndup(root, (size_t)(slash - root + 1)) : xstrdup("./");
	const char *base = slash ? slash + 1 : root;
	uint64_t family, start;
	struct dirent *e;
	size_t first = *npaths;
	DIR *d;

	if (mp_reader_open(&r, root) < 0) {
		strbuf_addstr(err, r.err.buf);
		mp_reader_release(&r);
		free(dir);
		return -1;
	}
	family = mp_reader_header(&r)->family;
	start = mp_reader_header(&r)->start_time_us;
	if (!(mp_reader_header(&r)->flags & MP_HF_FOLLOW_FORK)) {
		strbuf_addf(err, "'%s' was recorded without --follow-fork: no process it forked was "
			    "tracked", root);
		mp_reader_release(&r);
		free(dir);
		return -1;
	}
	mp_reader_release(&r);
	d = opendir(dir);
	while (d && (e = readdir(d))) {
		uint64_t pid;
		char *path;
		bool member;
		const struct mp_header *h;
		if (!child_name(e->d_name, base, &pid))
			continue;
		path = slash ? xasprintf("%s%s", dir, e->d_name) : xstrdup(e->d_name);
		if (mp_reader_open(&r, path) < 0) {
			/* Not a capture, or not one this reader can read: not of the family. */
			mp_reader_release(&r);
			free(path);
			continue;
		}
		h = mp_reader_header(&r);
		if (h->flags & MP_HF_RESTARTED)
			member = false; /* a later capture of the same process (memprof ctl start) */
		else if (family)
			member = h->family == family;
		else
			member = !h->family && h->pid == pid && h->start_time_us >= start &&
				 (h->flags & MP_HF_FOLLOW_FORK);
		mp_reader_release(&r);
		if (!member) {
			free(path);
			continue;
		}
		ALLOC_GROW(*paths, *npaths + 1, *alloc);
		(*paths)[(*npaths)++] = path;
	}
	if (d)
		closedir(d);
	free(dir);
	mp_qsort(*paths + first, *npaths - first, sizeof(**paths), name_cmp);
	return (int)(*npaths - first);
}

size_t mp_analysis_missing_children(const struct mp_analysis *a, uint64_t **pids)
{
	size_t n = 0, alloc = 0;
	*pids = NULL;
	for (size_t i = 0; i < a->nforks; i++) {
		bool found = false;
		if (!a->forks[i].followed)
			continue;
		for (size_t k = 0; k < a->nprocesses && !found; k++)
			found = a->processes[k].pid == a->forks[i].pid;
		if (!found) {
			ALLOC_GROW(*pids, n + 1, alloc);
			(*pids)[n++] = a->forks[i].pid;
		}
	}
	return n;
}

/* ---- names -------------------------------------------------------------- */

static const char *last_component(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash && slash[1] ? slash + 1 : path;
}

/* Programs whose first operand that is no option is what they run. */
static bool is_interpreter(const char *name)
{
	static const char *const prefixes[] = { "python", "perl", "ruby", "node", "bash", "sh",
						"dash", "zsh", "lua", "php", "java" };
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t n = strlen(prefixes[i]);
		if (!strncmp(name, prefixes[i], n) &&
		    (!name[n] || name[n] == '.' || (name[n] >= '0' && name[n] <= '9')))
			return true;
	}
	return false;
}

void mp_process_command_name(char *const *argv, size_t argc, const char *exe, struct strbuf *sb)
{
	const char *name = argc && argv[0][0] ? argv[0] : exe;
	if (!name || !*name) {
		strbuf_addch(sb, '?');
		return;
	}
	name = last_component(name);
	strbuf_addstr(sb, name);
	if (!is_interpreter(name))
		return;
	for (size_t i = 1; i < argc; i++) {
		if (argv[i][0] == '-') {
			/* "-c CODE", "-m MODULE": the option names what runs. */
			if (!strcmp(argv[i], "-m") && i + 1 < argc)
				strbuf_addf(sb, " -m %s", argv[i + 1]);
			if (!strcmp(argv[i], "-c") || !strcmp(argv[i], "-m") || !strcmp(argv[i], "-e"))
				return;
			continue;
		}
		strbuf_addf(sb, " %s", last_component(argv[i]));
		return;
	}
}

void mp_analysis_process_label(const struct mp_analysis *a, uint32_t process, struct strbuf *sb)
{
	const struct mp_process *pr;
	if (process >= a->nprocesses) {
		strbuf_addstr(sb, "all processes");
		return;
	}
	pr = &a->processes[process];
	strbuf_addf(sb, "%s (pid %llu)", mp_analysis_string(a, pr->name),
		    (unsigned long long)pr->pid);
}

/* ---- families ----------------------------------------------------------- */

bool mp_analysis_one_family(const struct mp_header *const *h, const char *const *paths, size_t n,
			    struct strbuf *why)
{
	bool family = n > 0 && h[0]->family, linked = true, same = true;
	size_t other = 0;
	for (size_t i = 1; i < n; i++) {
		if (h[i]->family != h[0]->family)
			family = false;
		if (!h[i]->exe || !h[0]->exe || strcmp(h[i]->exe, h[0]->exe)) {
			if (same)
				other = i;
			same = false;
		}
	}
	if (family || same)
		return true;
	/* Captures written before families were named: each names its parent's pid. */
	for (size_t i = 0; i < n && linked; i++) {
		bool found = false, root = true;
		for (size_t k = 0; k < n && !found; k++) {
			found = k != i && h[i]->forked_from && h[k]->pid == h[i]->forked_from;
			if (k != i && h[k]->start_time_us < h[i]->start_time_us)
				root = false;
		}
		linked = found || root;
	}
	if (linked)
		return true;
	strbuf_addf(why, "'%s' and '%s' are captures of different programs ('%s' and '%s'), not "
		    "of one process tree", paths[0], paths[other], h[0]->exe ? h[0]->exe : "?",
		    h[other]->exe ? h[other]->exe : "?");
	return false;
}

