/*
 * The CSV export, in memray's columns: allocator, num_allocations, size,
 * tid, thread_name, stack_trace; one row per slot of the view (a stack, an
 * allocator and, with split threads, a thread). The stack is its frames,
 * innermost first, as "function;file;line" joined by "|". Fields are quoted
 * as RFC 4180 says when they need it; text from the capture has control
 * characters and invalid UTF-8 written as \xNN, and in the stack also ";"
 * and "|", so that it always splits right.
 */
#include <config.h>
#include <stdio.h>

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "lib/export/export-private.h"
#include "lib/report/render-text.h"
#include "lib/util/xalloc.h"

/* Append field (made safe already) to sb, quoted when it holds a comma, a quote or a newline. */
static void add_field(struct strbuf *sb, const char *field, size_t len)
{
	if (!memchr(field, ',', len) && !memchr(field, '"', len) && !memchr(field, '\n', len)) {
		strbuf_add(sb, field, len);
		return;
	}
	strbuf_addch(sb, '"');
	for (size_t i = 0; i < len; i++) {
		if (field[i] == '"')
			strbuf_addch(sb, '"');
		strbuf_addch(sb, field[i]);
	}
	strbuf_addch(sb, '"');
}

/* memray's allocator names: ours in capitals ("MALLOC", "POSIX_MEMALIGN"). */
static void add_allocator(struct strbuf *sb, uint32_t kind)
{
	for (const char *p = mp_kind_name(kind); *p; p++)
		strbuf_addch(sb, *p == '#' ? '_' : toupper((unsigned char)*p));
}

int mp_export_csv(const struct mp_analysis *a, const struct mp_export_opts *o,
		  struct mp_sink *out)
{
	struct strbuf cell = STRBUF_INIT, label = STRBUF_INIT;
	uint32_t *stack = NULL;
	size_t stack_alloc = 0;

	strbuf_addstr(&out->buf, "allocator,num_allocations,size,tid,thread_name,stack_trace\n");
	for (size_t i = 0; i < a->nslots && !mp_sink_failed(out); i++) {
		const struct mp_slot *s = &a->slots[i];
		struct mp_counts c = mp_slot_counts(s, o->view);
		size_t n;
		if (!c.count)
			continue;
		add_allocator(&out->buf, s->kind);
		strbuf_addf(&out->buf, ",%llu,%llu,%llu,", (unsigned long long)c.count,
			    (unsigned long long)c.bytes,
			    (unsigned long long)(s->thread == MP_THREAD_MERGED ? 0 :
						 a->threads[s->thread].tid));
		strbuf_reset(&label);
		strbuf_reset(&cell);
		mp_analysis_thread_label(a, s->thread, &label);
		mp_text_add_safe(&cell, label.buf, label.len);
		add_field(&out->buf, cell.buf, cell.len);
		strbuf_addch(&out->buf, ',');
		strbuf_reset(&cell);
		n = mp_analysis_view_stack(a, s->stack, &stack, &stack_alloc);
		for (size_t k = 0; k < n; k++) {
			const struct mp_location *l = mp_analysis_location(a, stack[k]);
			if (k)
				strbuf_addch(&cell, '|');
			mp_export_add_name(&cell, mp_analysis_string(a, l->function), ";|");
			strbuf_addch(&cell, ';');
			mp_export_add_name(&cell, mp_export_file(a, stack[k]), ";|");
			strbuf_addf(&cell, ";%u", l->line);
		}
		add_field(&out->buf, cell.buf, cell.len);
		strbuf_addch(&out->buf, '\n');
		mp_sink_check(out);
	}
	free(stack);
	strbuf_release(&cell);
	strbuf_release(&label);
	return mp_sink_failed(out) ? -1 : 0;
}
