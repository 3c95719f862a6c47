/* The collector's symbolizing of addresses, and the warnings and notes it keeps for the end. */
#include <config.h>
#include "lib/process/collect-private.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/format/pyframe.h"
#include "lib/util/xalloc.h"

/* Append s (which the list then owns) to a list of distinct strings, or free it if there. */
static void add_once(char ***list, size_t *n, size_t *alloc, char *s)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*list)[i], s)) {
			free(s);
			return;
		}
	ALLOC_GROW(*list, *n + 1, *alloc);
	(*list)[(*n)++] = s;
}

void mp_collect_warn(struct mp_collector *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	add_once(&c->warnings, &c->nwarnings, &c->warnings_alloc, xvasprintf(fmt, ap));
	va_end(ap);
}

static uint64_t intern(struct mp_collector *c, struct stream *s, const char *str)
{
	uint64_t id;
	struct mp_record rec = { .type = MP_REC_STRING };
	if (!str)
		return 0;
	if (mp_intmap_get(&s->strings, (uint64_t)(uintptr_t)str, &id))
		return id;
	id = mp_writer_string(&s->w, str, strlen(str));
	mp_intmap_put(&s->strings, (uint64_t)(uintptr_t)str, id);
	rec.u.string.id = id;
	rec.u.string.text = str;
	rec.u.string.len = strlen(str);
	mp_collect_observe(c, s, &rec);
	return id;
}

void mp_collect_hold_module(struct stream *s, uint64_t id, const uint8_t *rec, size_t len)
{
	uint64_t at;
	if (mp_intmap_get(&s->module_at, id, &at)) /* (an id is unique among loaded modules) */
		return;
	ALLOC_GROW(s->held, s->nheld + 1, s->held_alloc);
	s->held[s->nheld].rec = xmalloc(len);
	memcpy(s->held[s->nheld].rec, rec, len);
	s->held[s->nheld].len = len;
	mp_intmap_put(&s->module_at, id, ++s->nheld);
}

bool mp_collect_unload_module(struct stream *s, uint64_t id)
{
	uint64_t at;
	bool written;
	if (!mp_intmap_take(&s->module_at, id, &at))
		return true; /* not one of ours: the record goes through as it came */
	written = !s->held[at - 1].rec;
	free(s->held[at - 1].rec);
	s->held[at - 1].rec = NULL;
	return written;
}

void mp_collect_release_modules(struct stream *s)
{
	for (size_t i = 0; i < s->nheld; i++)
		free(s->held[i].rec);
	free(s->held);
	s->held = NULL;
	s->nheld = s->held_alloc = 0;
	mp_intmap_release(&s->module_at);
}

/* The MODULE record of module id into the capture, if it is held there still. */
static void write_module(struct stream *s, uint64_t id)
{
	uint64_t at;
	struct held_module *m;
	if (!id || !mp_intmap_get(&s->module_at, id, &at) || !(m = &s->held[at - 1])->rec)
		return;
	mp_writer_raw(&s->w, m->rec, m->len);
	free(m->rec);
	m->rec = NULL;
}

/* A SYMBOL record, into the capture and to its observer (after its module's MODULE). */
static void write_symbol(struct mp_collector *c, struct stream *s, uint64_t ip, uint64_t module,
			 uint64_t offset, const struct mp_frame *frames, size_t n)
{
	struct mp_record rec = { .type = MP_REC_SYMBOL };
	write_module(s, module);
	mp_writer_symbol(&s->w, ip, module, offset, frames, n);
	rec.u.symbol.ip = ip;
	rec.u.symbol.module = module;
	rec.u.symbol.offset = offset;
	rec.u.symbol.nframes = n;
	rec.u.symbol.frames = frames;
	mp_collect_observe(c, s, &rec);
	s->info.symbols++;
}

bool mp_collect_new_ip(struct stream *s, uint64_t ip)
{
	uint64_t module;
	if (!mp_intmap_get(&s->seen_ips, ip, &module) ||
	    (module > 0 && !mp_symbols_has_module(s->sym, module - 1))) {
		mp_intmap_put(&s->seen_ips, ip, 0);
		return true;
	}
	return false;
}

/* Write the SYMBOL record of ip; false when no module contains it (yet). */
bool mp_collect_symbolize(struct mp_collector *c, struct stream *s, uint64_t ip)
{
	struct mp_sym sym;
	struct mp_frame frames[64];
	size_t n;
	const char **lines;
	size_t nw;
	if (mp_symbols_lookup(s->sym, ip, true, &sym) < 0)
		return false;
	n = sym.nframes < 64 ? sym.nframes : 64;
	for (size_t i = 0; i < n; i++) {
		frames[i].function = intern(c, s, sym.frames[i].function);
		frames[i].file = intern(c, s, sym.frames[i].file);
		frames[i].line = sym.frames[i].line;
		frames[i].column = sym.frames[i].column;
	}
	write_symbol(c, s, ip, sym.module_id, sym.offset, frames, n);
	mp_intmap_put(&s->seen_ips, ip, sym.module_id + 1);
	nw = mp_symbols_warnings(s->sym, &lines);
	for (; s->sym_warned < nw; s->sym_warned++)
		mp_collect_warn(c, "%s", lines[s->sym_warned]);
	return true;
}

void mp_collect_pyframe(struct mp_collector *c, struct stream *s, const uint8_t *data, size_t len)
{
	struct mp_pyframe f;
	struct mp_frame frame;
	if (mp_dec_pyframe(data, len, &f) || !mp_intmap_put(&s->seen_ips, f.ip, 1))
		return; /* malformed, or described already */
	/* The strings' interned texts stand for them in `strings`, which is keyed by address. */
	frame.function = intern(c, s, mp_strtab_get(&s->pystrings,
				mp_strtab_intern(&s->pystrings, f.function, f.function_len)));
	frame.file = intern(c, s, mp_strtab_get(&s->pystrings,
			    mp_strtab_intern(&s->pystrings, f.file, f.file_len)));
	frame.line = f.line;
	frame.column = f.column;
	write_symbol(c, s, f.ip, 0, 0, &frame, 1);
}

void mp_collect_retry_pending(struct mp_collector *c, struct stream *s)
{
	size_t k = 0;
	for (size_t i = 0; i < s->npending; i++)
		if (!mp_collect_symbolize(c, s, s->pending[i]))
			s->pending[k++] = s->pending[i];
	s->npending = k;
}

void mp_collect_note(struct mp_collector *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ALLOC_GROW(c->notes, c->nnotes + 1, c->notes_alloc);
	c->notes[c->nnotes++] = xvasprintf(fmt, ap);
	va_end(ap);
}

size_t mp_collector_notes(struct mp_collector *c, const char ***lines)
{
	*lines = (const char **)c->notes;
	return c->nnotes;
}

size_t mp_collector_warnings(struct mp_collector *c, const char ***lines)
{
	*lines = (const char **)c->warnings;
	return c->nwarnings;
}

char *mp_collector_symbols_hint(struct mp_collector *c)
{
	/* Every process's symbolizer shares the cache of c->shared. */
	return c->shared ? mp_symbols_hint(c->shared) : NULL;
}
