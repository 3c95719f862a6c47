/* The reporters' shared steps: view options, loading a capture and report-time symbolization. */
#include <config.h>
#include <stdio.h>
#include "cmd/report.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/report/report.h"
#include "lib/format/reader.h"
#include "lib/util/hash.h"
#include "lib/report/progress.h"
#include "lib/report/render-text.h"
#include "lib/util/strbuf.h"
#include "lib/symbols/symbols.h"
#include "lib/util/usage.h"
#include "lib/util/xalloc.h"

int mp_report_view_option(const struct mp_opt *opt, const char *arg, struct strbuf *err)
{
	struct mp_report_args *args = opt->value;
	if (arg) {
		char name[64];
		snprintf(name, sizeof(name), "--%s", opt->long_name);
		if (mp_opt_parse_uint(name, arg, 0, UINT32_MAX, &args->threshold, err) < 0)
			return -1;
	} else if (opt->data == MP_VIEW_TEMPORARY) {
		args->threshold = 1;
	}
	if (args->view_opt && strcmp(args->view_opt, opt->long_name)) {
		strbuf_addf(err, "options '--%s' and '--%s' cannot be combined", args->view_opt,
			    opt->long_name);
		return -1;
	}
	args->view = (enum mp_view)opt->data;
	args->view_opt = opt->long_name;
	return 0;
}

void mp_report_term(const struct mp_report_args *args, struct mp_term *t)
{
	mp_term_detect(t, STDOUT_FILENO);
	if (args->full_names) {
		t->full_names = true;
		t->limit = 0;
	}
}

void mp_report_json_check(const struct mp_cmd_spec *spec, const struct mp_report_json *j)
{
	if (!j->json && (j->output || j->force))
		mp_usage_error(spec, "option '%s' needs --json", j->output ? "--output" : "--force");
}

char *mp_report_json_path(const struct mp_report_json *j, char *default_path)
{
	if (!j->output)
		return default_path;
	free(default_path);
	return xstrdup(j->output);
}

int mp_report_json_write(const struct mp_report_json *j, const char *path,
			 const struct strbuf *json)
{
	struct strbuf err = STRBUF_INIT;
	int status = MP_EXIT_OK;
	if (!strcmp(path, "-")) {
		fwrite(json->buf, 1, json->len, stdout);
	} else if (mp_report_write_file(path, json->buf, json->len, j->force, &err) < 0) {
		error("%s", err.buf);
		status = MP_EXIT_FAILURE;
	} else {
		printf("Wrote %s\n", path);
	}
	strbuf_release(&err);
	return status;
}

/*
 * Report-time symbolization of captures written without symbols (header
 * flag "symbolized" absent): the analysis asks for each ip without a SYMBOL
 * record; the modules it names are handed to lib/symbols on first use.
 */
struct symbolizer {
	const struct mp_analysis *a;
	struct mp_symbols *sym;         /* created at the first question */
	struct mp_intmap added;         /* module id -> analysis module index, as added */
};

static size_t symbolize(void *ctx, const struct mp_module *mod, uint64_t ip, uint64_t offset,
			struct mp_sym_frame *out, size_t max)
{
	struct symbolizer *z = ctx;
	uint64_t index, was;
	struct mp_sym sym;
	size_t n;
	(void)offset;
	/* What the collector could not symbolize, this machine cannot do better. */
	if (!mod || (z->a->header.flags & MP_HF_SYMBOLIZED))
		return 0;
	index = (uint64_t)(mod - z->a->modules);
	if (!z->sym) {
		struct mp_symbols_opts so = { .root = NULL, .demangle = true, .share_with = NULL };
		z->sym = mp_symbols_new(&so);
	}
	if (!mp_intmap_get(&z->added, mod->id, &was) || was != index) {
		/* A module id is unique among the modules loaded at one time only. */
		mp_symbols_remove_module(z->sym, mod->id);
		mp_symbols_add_module(z->sym, mod->id, mod->base, mp_analysis_string(z->a, mod->path),
				      mod->build_id, mod->build_id_len, mod->seg, mod->nseg);
		mp_intmap_put(&z->added, mod->id, index);
	}
	if (mp_symbols_lookup(z->sym, ip, true, &sym) < 0)
		return 0;
	n = sym.nframes < max ? sym.nframes : max;
	if (n) /* (sym.frames is NULL without frames) */
		memcpy(out, sym.frames, n * sizeof(*out));
	return n;
}

/* lib/symbols' problems in the words of a capture symbolized here (forms in lib/symbols/symbols.h). */
static void symbolizer_warning(const char *line)
{
	const char *q = strchr(line, '\''), *e = q ? strchr(q + 1, '\'') : NULL;
	size_t len = strlen(line);
	int plen = e ? (int)(e - q - 1) : 0;
	const char *path = q ? q + 1 : "";
#define ENDS(s) (len >= strlen(s) && !strcmp(line + len - strlen(s), s))
	if (!e && !strncmp(line, "no debuginfod server", 20))
		warning("%s", line);
	else if (!e)
		warning("capture has no symbols: %s", line);
	else if (!strncmp(line, "cannot find '", 13) && ENDS(": no symbols") &&
		 line + 13 + plen + 1 == line + len - strlen(": no symbols"))
		warning("capture has no symbols and '%.*s' cannot be read here: showing module+offset",
			plen, path);
	else if (ENDS(": no symbols"))
		warning("capture has no symbols and '%.*s' cannot be read here: showing "
			"module+offset (%.*s)", plen, path, (int)(len - strlen(": no symbols")), line);
	else if (ENDS(": not used"))
		warning("capture has no symbols and '%.*s' here is not the file that ran: showing "
			"module+offset (%.*s)", plen, path, (int)(len - strlen(": not used")), line);
	else
		warning("capture has no symbols: %s", line);
#undef ENDS
}

static void progress_start(void *ctx, uint64_t total)
{
	mp_progress_start(ctx, total);
}

static void progress_update(void *ctx, uint64_t bytes, uint64_t records)
{
	mp_progress_update(ctx, bytes, records);
}

static void progress_done(void *ctx)
{
	mp_progress_done(ctx);
}

/* The captures to read: paths, each followed by its family's with --children (a new list). */
static bool expand(const char *const *paths, size_t n, const struct mp_report_args *args,
		   char ***all, size_t *nall)
{
	struct strbuf err = STRBUF_INIT;
	size_t alloc = 0;
	bool ok = true;
	*all = NULL;
	*nall = 0;
	for (size_t i = 0; i < n && ok; i++) {
		ALLOC_GROW(*all, *nall + 1, alloc);
		(*all)[(*nall)++] = xstrdup(paths[i]);
		if (args->children && mp_family_find(paths[i], all, nall, &alloc, &err) < 0) {
			error("%s", err.buf);
			ok = false;
		}
	}
	/* A capture named twice (FILE and FILE.* with --children) is read once. */
	for (size_t i = 0; i < *nall; i++)
		for (size_t k = i + 1; k < *nall; k++)
			if (!strcmp((*all)[i], (*all)[k])) {
				free((*all)[k]);
				memmove(*all + k, *all + k + 1, (*nall - k - 1) * sizeof(**all));
				(*nall)--;
				k--;
			}
	strbuf_release(&err);
	return ok;
}

/* Several captures: of one process tree or one program, unless --merge. */
static bool one_family(char *const *paths, size_t n)
{
	struct mp_reader *r = xcalloc(n, sizeof(*r));
	const struct mp_header **h = xcalloc(n, sizeof(*h));
	struct strbuf why = STRBUF_INIT;
	size_t opened = 0;
	bool ok = true;
	for (; opened < n && ok; opened++) {
		if (mp_reader_open(&r[opened], paths[opened]) < 0) {
			error("%s", r[opened].err.buf);
			ok = false;
		}
		h[opened] = mp_reader_header(&r[opened]);
	}
	if (ok && !mp_analysis_one_family(h, (const char *const *)paths, n, &why)) {
		error("%s: add --merge to report them as one", why.buf);
		ok = false;
	}
	for (size_t i = 0; i < opened; i++)
		mp_reader_release(&r[i]);
	free(r);
	free(h);
	strbuf_release(&why);
	return ok;
}

/* With --children: what forked children left no capture, said once. */
static void say_missing(const struct mp_analysis *a)
{
	uint64_t *pids;
	size_t n = mp_analysis_missing_children(a, &pids);
	struct strbuf sb = STRBUF_INIT;
	for (size_t i = 0; i < n && i < 10; i++)
		strbuf_addf(&sb, "%s%llu", i ? ", " : "", (unsigned long long)pids[i]);
	if (n > 10)
		strbuf_addf(&sb, " and %zu more", n - 10);
	if (n)
		warning("%zu forked process%s left no capture next to '%s' (pid%s %s): %s allocated "
			"nothing, or the file%s moved", n, n == 1 ? "" : "es",
			mp_analysis_string(a, a->processes[0].capture), n == 1 ? "" : "s", sb.buf,
			n == 1 ? "it" : "they", n == 1 ? " was" : "s were");
	strbuf_release(&sb);
	free(pids);
}

bool mp_report_load(struct mp_analysis *a, const char *path, const struct mp_report_args *args,
		    const struct mp_analysis_opts *o)
{
	return mp_report_load_all(a, &path, 1, args, o);
}

bool mp_report_load_all(struct mp_analysis *a, const char *const *paths, size_t npaths,
			const struct mp_report_args *args, const struct mp_analysis_opts *o)
{
	struct mp_analysis_opts opts = MP_ANALYSIS_OPTS_INIT;
	struct mp_progress progress;
	const struct mp_analysis_progress told = { progress_start, progress_update, progress_done,
						   &progress };
	struct symbolizer z = { a, NULL, { NULL, 0, 0, 64 } };
	struct strbuf msg = STRBUF_INIT;
	char **all;
	const char *path;
	size_t n;
	int ret;

	if (o)
		opts = *o;
	opts.flags |= args->flags;
	opts.temporary_threshold = args->threshold;
	if (!opts.symbolize) {
		opts.symbolize = symbolize;
		opts.symbolize_ctx = &z;
	}
	mp_intmap_init(&z.added);
	mp_progress_init(&progress, STDERR_FILENO, "Analysing");
	opts.progress = &told;
	mp_analysis_init(a, &opts);
	if (!expand(paths, npaths, args, &all, &n) || (n > 1 && !args->merge && !one_family(all, n))) {
		for (size_t i = 0; i < n; i++)
			free(all[i]);
		free(all);
		mp_intmap_release(&z.added);
		return false;
	}
	path = all[0];
	ret = mp_analysis_read_files(a, (const char *const *)all, n, &msg);
	a->opts.progress = NULL;
	a->opts.symbolize = NULL;
	a->opts.symbolize_ctx = NULL;
	if (ret < 0) {
		error("%s", msg.buf);
	} else if (ret > 0) {
		/* A line for each capture cut short. */
		for (char *line = msg.buf, *nl; line; line = nl ? nl + 1 : NULL) {
			nl = strchr(line, '\n');
			if (nl)
				*nl = '\0';
			warning("%s", line);
		}
	}
	if (ret >= 0 && a->aggregated && !a->agg_totals)
		warning("'%s' is an aggregated capture cut short before its end, where its totals per "
			"stack are written: it shows no allocations", path);
	if (ret >= 0 && args->children)
		say_missing(a);
	if (ret >= 0 && a->aggregated) {
		/* What totals per stack cannot answer: said once, as an error. */
		const char *why = NULL;
		if (args->view == MP_VIEW_TEMPORARY)
			why = "temporary allocations need the order of its events";
		else if (opts.flags & MP_ANALYSIS_TEMPORAL)
			why = "--temporal needs when each block lived";
		else if (opts.flags & MP_ANALYSIS_NO_MMAP)
			why = "its peak counts the mappings, so --no-mmap needs every event";
		if (why) {
			error("'%s' is an aggregated capture (--aggregate), with totals per stack and no "
			      "events: %s; profile without --aggregate for this report", path, why);
			ret = -1;
		}
	}
	if (ret >= 0 && mp_analysis_estimated(a) && args->view == MP_VIEW_TEMPORARY) {
		/* Which allocations came between two sampled ones is not known. */
		error("'%s' is a sampled capture (--sampling-interval): temporary allocations need "
		      "every allocation in its order; profile without --sampling-interval for this "
		      "report", path);
		ret = -1;
	}
	if (z.sym) {
		const char **lines;
		size_t nlines = mp_symbols_warnings(z.sym, &lines);
		char *hint = mp_symbols_hint(z.sym);
		for (size_t i = 0; i < nlines; i++)
			symbolizer_warning(lines[i]);
		if (hint)
			warning("capture has no symbols and %s", hint);
		free(hint);
		mp_symbols_free(z.sym);
	}
	mp_intmap_release(&z.added);
	strbuf_release(&msg);
	for (size_t i = 0; i < n; i++)
		free(all[i]);
	free(all);
	return ret >= 0;
}
