/*
 * The speedscope export: its file format (https://www.speedscope.app/
 * file-format-schema.json), sampled profiles whose samples are the stacks
 * of the view and whose weights are their bytes (unit "bytes") or their
 * allocation counts (unit "none"), as memray's transform writes them. One
 * frame per source location (function, file, line), shared by all profiles;
 * with split threads, one profile of each kind per thread.
 */
#include <config.h>
#include <stdio.h>

#include <stdlib.h>
#include <string.h>

#include "lib/export/export-private.h"
#include "lib/report/json.h"
#include "lib/report/report.h"
#include "lib/util/sort.h"
#include "lib/util/xalloc.h"

struct speedscope {
	const struct mp_analysis *a;
	enum mp_view view;
	struct mp_sink *out;
	struct mp_json j;
	uint32_t *frame_of;     /* location -> frame index, MP_NONE when not written */
	uint32_t nframes;
	uint32_t *order;        /* the slots shown, by thread */
	size_t norder;
	uint32_t *stack;
	size_t stack_alloc;
};

/* A stack's locations, innermost first, into sc->stack; returns how many. */
static size_t stack_of(struct speedscope *sc, uint32_t slot)
{
	return mp_analysis_view_stack(sc->a, sc->a->slots[slot].stack, &sc->stack, &sc->stack_alloc);
}

static void frames(struct speedscope *sc)
{
	const struct mp_analysis *a = sc->a;
	mp_json_key(&sc->j, "shared");
	mp_json_begin_object(&sc->j);
	mp_json_key(&sc->j, "frames");
	mp_json_begin_array(&sc->j);
	for (size_t i = 0; i < sc->norder && !mp_sink_failed(sc->out); i++) {
		size_t n = stack_of(sc, sc->order[i]);
		for (size_t k = n; k-- > 0;) {
			uint32_t loc = sc->stack[k];
			const struct mp_location *l;
			const char *file;
			if (sc->frame_of[loc] != MP_NONE)
				continue;
			sc->frame_of[loc] = sc->nframes++;
			l = mp_analysis_location(a, loc);
			file = mp_export_file(a, loc);
			mp_json_begin_object(&sc->j);
			mp_json_field_string(&sc->j, "name", mp_analysis_string(a, l->function));
			if (*file)
				mp_json_field_string(&sc->j, "file", file);
			if (l->line)
				mp_json_field_uint(&sc->j, "line", l->line);
			mp_json_end_object(&sc->j);
		}
		mp_sink_check(sc->out);
	}
	mp_json_end_array(&sc->j);
	mp_json_end_object(&sc->j);
}

static uint64_t weight(const struct speedscope *sc, uint32_t slot, bool bytes)
{
	struct mp_counts c = mp_slot_counts(&sc->a->slots[slot], sc->view);
	return bytes ? c.bytes : c.count;
}

/* One sampled profile of the slots order[from..to) (one thread, all, or none). */
static void profile(struct speedscope *sc, size_t from, size_t to, bool bytes)
{
	const struct mp_analysis *a = sc->a;
	uint32_t thread = from < to ? a->slots[sc->order[from]].thread : MP_THREAD_MERGED;
	struct strbuf name = STRBUF_INIT;
	uint64_t total = 0;

	strbuf_addstr(&name, bytes ? "Memory" : "Allocations");
	if (mp_analysis_estimated(a))
		strbuf_addstr(&name, " (estimated)");
	if (thread != MP_THREAD_MERGED) {
		strbuf_addstr(&name, ": ");
		mp_analysis_thread_label(a, thread, &name);
	}
	mp_json_begin_object(&sc->j);
	mp_json_field_string(&sc->j, "type", "sampled");
	mp_json_field_string(&sc->j, "name", name.buf);
	mp_json_field_string(&sc->j, "unit", bytes ? "bytes" : "none");
	mp_json_key(&sc->j, "samples");
	mp_json_begin_array(&sc->j);
	for (size_t i = from; i < to && !mp_sink_failed(sc->out); i++) {
		size_t n;
		if (!weight(sc, sc->order[i], bytes))
			continue;
		n = stack_of(sc, sc->order[i]);
		mp_json_begin_array(&sc->j);
		for (size_t k = n; k-- > 0;) /* speedscope's stacks start at the root */
			mp_json_uint(&sc->j, sc->frame_of[sc->stack[k]]);
		mp_json_end_array(&sc->j);
		mp_sink_check(sc->out);
	}
	mp_json_end_array(&sc->j);
	mp_json_key(&sc->j, "weights");
	mp_json_begin_array(&sc->j);
	for (size_t i = from; i < to; i++) {
		uint64_t w = weight(sc, sc->order[i], bytes);
		if (!w)
			continue;
		mp_json_uint(&sc->j, w);
		total += w;
		mp_sink_check(sc->out);
	}
	mp_json_end_array(&sc->j);
	mp_json_field_uint(&sc->j, "startValue", 0);
	mp_json_field_uint(&sc->j, "endValue", total);
	mp_json_end_object(&sc->j);
	strbuf_release(&name);
}

static int by_thread(const void *x, const void *y, void *ctx)
{
	const struct mp_analysis *a = ctx;
	uint32_t i = *(const uint32_t *)x, k = *(const uint32_t *)y;
	uint32_t ti = a->slots[i].thread, tk = a->slots[k].thread;
	if (ti != tk)
		return ti < tk ? -1 : 1;
	return i < k ? -1 : i > k;
}

int mp_export_speedscope(const struct mp_analysis *a, const struct mp_export_opts *o,
			 struct mp_sink *out)
{
	struct speedscope sc = { .a = a, .view = o->view, .out = out };
	struct strbuf name = STRBUF_INIT;

	sc.frame_of = xmalloc((a->nlocs + 1) * sizeof(*sc.frame_of));
	memset(sc.frame_of, 0xff, (a->nlocs + 1) * sizeof(*sc.frame_of));
	sc.order = xmalloc((a->nslots + 1) * sizeof(*sc.order));
	for (size_t i = 0; i < a->nslots; i++)
		if (mp_slot_counts(&a->slots[i], o->view).count)
			sc.order[sc.norder++] = (uint32_t)i;
	mp_qsort_r(sc.order, sc.norder, sizeof(*sc.order), by_thread, (void *)a);

	/* Written into the sink's buffer, which mp_sink_check() drains as it fills. */
	mp_json_init(&sc.j, &out->buf, 0);
	mp_json_begin_object(&sc.j);
	mp_json_field_string(&sc.j, "$schema", "https://www.speedscope.app/file-format-schema.json");
	mp_json_field_string(&sc.j, "exporter", "memprof@" PACKAGE_VERSION);
	for (size_t i = 0; i < a->header.argc; i++)
		strbuf_addf(&name, "%s%s", i ? " " : "", a->header.argv[i]);
	strbuf_addf(&name, "%s(%s", name.len ? " " : "", mp_export_view_words(o->view));
	if (mp_analysis_estimated(a)) {
		strbuf_addstr(&name, ", ");
		mp_report_estimated(a, &name);
	}
	strbuf_addch(&name, ')');
	mp_json_field_string(&sc.j, "name", name.buf);
	mp_json_field_uint(&sc.j, "activeProfileIndex", 0);
	frames(&sc);
	mp_json_key(&sc.j, "profiles");
	mp_json_begin_array(&sc.j);
	/* The bytes of every thread first, so that profile 0 shows memory. */
	for (int bytes = 1; bytes >= 0; bytes--) {
		size_t from = 0;
		if (!sc.norder) /* nothing in the view: still one (empty) profile of each kind */
			profile(&sc, 0, 0, bytes);
		while (from < sc.norder) {
			size_t to = from + 1;
			while (to < sc.norder &&
			       a->slots[sc.order[to]].thread == a->slots[sc.order[from]].thread)
				to++;
			profile(&sc, from, to, bytes);
			from = to;
		}
	}
	mp_json_end_array(&sc.j);
	mp_json_end_object(&sc.j);
	strbuf_addch(&out->buf, '\n');
	mp_sink_check(out);

	strbuf_release(&name);
	free(sc.frame_of);
	free(sc.order);
	free(sc.stack);
	return mp_sink_failed(out) ? -1 : 0;
}
