/* Text form of capture records. */
#include <config.h>
#include "lib/format/dump.h"
#include "lib/format/aggregate.h"

#include <stdlib.h>

#include "lib/util/hash.h"
#include "lib/util/machine.h"
#include "lib/util/xalloc.h"

#include <elf.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>

static void quoted(struct strbuf *out, const char *s, size_t len)
{
	strbuf_addch(out, '"');
	strbuf_add_cquoted(out, s, len);
	strbuf_addch(out, '"');
}

static void quoted_id(struct strbuf *out, const struct mp_reader *r, uint64_t id)
{
	const char *s = r ? mp_reader_string(r, id) : NULL;
	if (s)
		quoted(out, s, strlen(s));
	else if (id)
		strbuf_addf(out, "#%" PRIu64, id);
	else
		strbuf_addstr(out, "?");
}

void mp_format_time(struct strbuf *out, uint64_t epoch_us)
{
	time_t sec = (time_t)(epoch_us / 1000000);
	struct tm tm;
	char buf[64];
	gmtime_r(&sec, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	strbuf_addf(out, "%s.%06uZ", buf, (unsigned)(epoch_us % 1000000));
}

const char *mp_machine_name(uint64_t machine)
{
	static __thread char buf[32];
	const char *name = mp_elf_machine((unsigned long)machine);
	if (name && machine == (unsigned long)machine)
		return name;
	snprintf(buf, sizeof(buf), "machine#%" PRIu64, machine);
	return buf;
}

static const char *mode_name(uint64_t mode)
{
	switch (mode) {
	case MP_MODE_RUN: return "run";
	case MP_MODE_PRELOAD: return "preload";
	case MP_MODE_ATTACH: return "attach";
	}
	return "unknown";
}

static void dump_header(struct strbuf *out, const struct mp_header *h)
{
	strbuf_addf(out, "HEADER format=%u.%u pid=%" PRIu64 " ppid=%" PRIu64 " main_tid=%" PRIu64
		    " mode=%s start_time=", h->major, h->minor, h->pid, h->ppid, h->main_tid,
		    mode_name(h->mode));
	mp_format_time(out, h->start_time_us);
	strbuf_addf(out, " page_size=%" PRIu64 " max_depth=%" PRIu64 " interval_ms=%" PRIu64
		    " flags=%s%s%s%s%s%s machine=%s pointer_size=%" PRIu64,
		    h->page_size, h->max_depth, h->interval_ms,
		    h->flags & MP_HF_SYMBOLIZED ? "symbolized" : "raw",
		    h->flags & MP_HF_FOLLOW_FORK ? ",follow-fork" : "",
		    h->flags & MP_HF_FORK_CHILD ? ",fork-child" : "",
		    h->flags & MP_HF_RESTARTED ? ",restarted" : "",
		    h->flags & MP_HF_AGGREGATED ? ",aggregated" : "",
		    h->flags & MP_HF_PYTHON_FRAMES ? ",python-frames" : "",
		    mp_machine_name(h->machine), h->pointer_size);
	if (h->forked_from)
		strbuf_addf(out, " forked_from=%" PRIu64, h->forked_from);
	if (h->family)
		strbuf_addf(out, " family=%016" PRIx64, h->family);
	if (h->sampling_interval)
		strbuf_addf(out, " sampling_interval=%" PRIu64, h->sampling_interval);
	if (h->parent_capture) {
		strbuf_addstr(out, " parent_capture=");
		quoted(out, h->parent_capture, strlen(h->parent_capture));
	}
	strbuf_addstr(out, " hostname=");
	quoted(out, h->hostname ? h->hostname : "", h->hostname ? strlen(h->hostname) : 0);
	strbuf_addstr(out, " tracker=");
	quoted(out, h->tracker_version ? h->tracker_version : "",
	       h->tracker_version ? strlen(h->tracker_version) : 0);
	strbuf_addstr(out, " exe=");
	quoted(out, h->exe ? h->exe : "", h->exe ? strlen(h->exe) : 0);
	strbuf_addstr(out, " cwd=");
	quoted(out, h->cwd ? h->cwd : "", h->cwd ? strlen(h->cwd) : 0);
	strbuf_addstr(out, " argv=[");
	for (size_t i = 0; i < h->argc; i++) {
		if (i)
			strbuf_addch(out, ',');
		quoted(out, h->argv[i], strlen(h->argv[i]));
	}
	strbuf_addch(out, ']');
}

static void dump_trailer(struct strbuf *out, const struct mp_trailer *t)
{
	static const char *const reasons[] = { "unknown", "exit", "detach", "disconnect", "snapshot", "exec" };
	strbuf_addstr(out, "TRAILER end_time=");
	mp_format_time(out, t->end_time_us);
	strbuf_addf(out, " duration_us=%" PRIu64 " end=%s", t->duration_us,
		    t->end_reason < sizeof(reasons) / sizeof(reasons[0]) ? reasons[t->end_reason] : "unknown");
	if (t->has_exit_code)
		strbuf_addf(out, " exit_code=%d", t->exit_code);
	if (t->has_exit_signal)
		strbuf_addf(out, " exit_signal=%d%s", t->exit_signal,
			    t->core_dumped ? " core_dumped=1" : "");
	strbuf_addf(out, " allocs=%" PRIu64 " frees=%" PRIu64 " bytes_allocated=%" PRIu64
		    " traces=%" PRIu64 " symbols=%" PRIu64 " records=%" PRIu64 " lost=%" PRIu64,
		    t->n_allocs, t->n_frees, t->bytes_allocated, t->n_traces, t->n_symbols,
		    t->n_records, t->n_lost);
	if (t->n_libunwind)
		strbuf_addf(out, " libunwind=%" PRIu64, t->n_libunwind);
}

static void dump_marker(struct strbuf *out, const char *name, const struct mp_marker *m)
{
	strbuf_addstr(out, name);
	if (m->has & MP_HAS_TIME)
		strbuf_addf(out, " time_us=%" PRIu64, m->time_us);
	if (m->has & MP_HAS_CHILD_PID)
		strbuf_addf(out, " child_pid=%" PRIu64, m->child_pid);
	if (m->has & MP_HAS_STATUS)
		strbuf_addf(out, " status=%" PRId64, m->status);
	if (m->has & MP_HAS_COUNT)
		strbuf_addf(out, " count=%" PRIu64, m->count);
	if (m->has & MP_HAS_RSS)
		strbuf_addf(out, " rss=%" PRIu64, m->rss);
	if (m->has & MP_HAS_HEAP_ARENA)
		strbuf_addf(out, " heap_arena=%" PRIu64, m->heap_arena);
	if (m->has & MP_HAS_HEAP_IN_USE)
		strbuf_addf(out, " heap_in_use=%" PRIu64, m->heap_in_use);
	if (m->has & MP_HAS_LEVEL)
		strbuf_addf(out, " level=%" PRIu64, m->level);
	if (m->has & MP_HAS_TEXT) {
		strbuf_addstr(out, " text=");
		quoted(out, m->text, m->text_len);
	}
}

static void flags_string(struct strbuf *out, uint32_t flags)
{
	strbuf_addch(out, flags & 4 ? 'r' : '-'); /* PF_R */
	strbuf_addch(out, flags & 2 ? 'w' : '-'); /* PF_W */
	strbuf_addch(out, flags & 1 ? 'x' : '-'); /* PF_X */
}

/* A block by address, or by serial number (block=N) in captures that number them. */
static void dump_block(struct strbuf *out, const struct mp_record *rec)
{
	if (rec->u.ev.serial)
		strbuf_addf(out, "block=%" PRIu64, (uint64_t)((rec->u.ev.addr & ~MP_SERIAL_ADDR_BASE) >> 4));
	else
		strbuf_addf(out, "addr=0x%" PRIx64, rec->u.ev.addr);
}

void mp_dump_record(struct strbuf *out, const struct mp_reader *r, const struct mp_record *rec)
{
	switch (rec->type) {
	case MP_REC_HEADER:
		dump_header(out, rec->u.header);
		break;
	case MP_REC_TRAILER:
		dump_trailer(out, rec->u.trailer);
		break;
	case MP_REC_ALLOC:
		strbuf_addf(out, "ALLOC thread=%u kind=%s ", rec->thread, mp_kind_name(rec->u.ev.kind));
		dump_block(out, rec);
		strbuf_addf(out, " size=%" PRIu64 " stack=%" PRIu64, rec->u.ev.size, rec->u.ev.stack);
		break;
	case MP_REC_FREE:
		strbuf_addf(out, "FREE thread=%u kind=%s ", rec->thread, mp_kind_name(rec->u.ev.kind));
		dump_block(out, rec);
		if (rec->u.ev.ranged)
			strbuf_addf(out, " size=%" PRIu64, rec->u.ev.size);
		break;
	case MP_REC_SWITCH:
		strbuf_addf(out, "SWITCH thread=%u", rec->thread);
		break;
	case MP_REC_TRACE:
		strbuf_addf(out, "TRACE node=%" PRIu64 " parent=%" PRIu64 " ip=0x%" PRIx64,
			    rec->u.trace.index, rec->u.trace.parent, rec->u.trace.ip);
		break;
	case MP_REC_TICK:
		strbuf_addf(out, "TICK time_us=%" PRIu64 " rss=%" PRIu64, rec->u.tick.time_us,
			    rec->u.tick.rss);
		break;
	case MP_REC_THREAD:
		strbuf_addf(out, "THREAD index=%u tid=%" PRIu64 " name=", rec->u.thread.index,
			    rec->u.thread.tid);
		quoted(out, rec->u.thread.name, rec->u.thread.name_len);
		break;
	case MP_REC_MODULE:
		strbuf_addf(out, "MODULE id=%" PRIu64 " base=0x%" PRIx64 " path=", rec->u.module.id,
			    rec->u.module.base);
		quoted(out, rec->u.module.path, rec->u.module.path_len);
		strbuf_addstr(out, " build_id=");
		for (size_t i = 0; i < rec->u.module.build_id_len; i++)
			strbuf_addf(out, "%02x", rec->u.module.build_id[i]);
		if (!rec->u.module.build_id_len)
			strbuf_addch(out, '-');
		strbuf_addstr(out, " segments=[");
		for (size_t i = 0; i < rec->u.module.nseg; i++) {
			const struct mp_segment *s = &rec->u.module.seg[i];
			strbuf_addf(out, "%s0x%" PRIx64 "+0x%" PRIx64 ":", i ? "," : "", s->vaddr,
				    s->memsz);
			flags_string(out, s->flags);
		}
		strbuf_addch(out, ']');
		break;
	case MP_REC_MODULE_UNLOAD:
		strbuf_addf(out, "MODULE_UNLOAD id=%" PRIu64, rec->u.unload.id);
		break;
	case MP_REC_STRING:
		strbuf_addf(out, "STRING id=%" PRIu64 " ", rec->u.string.id);
		quoted(out, rec->u.string.text, rec->u.string.len);
		break;
	case MP_REC_SYMBOL:
		strbuf_addf(out, "SYMBOL ip=0x%" PRIx64 " module=%" PRIu64 " offset=0x%" PRIx64
			    " frames=[", rec->u.symbol.ip, rec->u.symbol.module,
			    rec->u.symbol.offset);
		for (size_t i = 0; i < rec->u.symbol.nframes; i++) {
			const struct mp_frame *f = &rec->u.symbol.frames[i];
			if (i)
				strbuf_addstr(out, ", ");
			quoted_id(out, r, f->function);
			strbuf_addch(out, ' ');
			quoted_id(out, r, f->file);
			strbuf_addf(out, ":%u:%u", f->line, f->column);
		}
		strbuf_addch(out, ']');
		break;
	case MP_REC_ATTACH: dump_marker(out, "ATTACH", &rec->u.marker); break;
	case MP_REC_DETACH: dump_marker(out, "DETACH", &rec->u.marker); break;
	case MP_REC_FORK: dump_marker(out, "FORK", &rec->u.marker); break;
	case MP_REC_LOST: dump_marker(out, "LOST", &rec->u.marker); break;
	case MP_REC_EXIT: dump_marker(out, "EXIT", &rec->u.marker); break;
	case MP_REC_MESSAGE: dump_marker(out, "MESSAGE", &rec->u.marker); break;
	case MP_REC_SNAPSHOT: dump_marker(out, "SNAPSHOT", &rec->u.marker); break;
	case MP_REC_UNWIND: dump_marker(out, "UNWIND", &rec->u.marker); break;
	case MP_REC_UNKNOWN: {
		struct mp_agg agg;
		int got = mp_agg_decode(rec->u.unknown.tag, rec->u.unknown.data, rec->u.unknown.len, &agg);
		if (got == 0) {
			char line[2048];
			mp_agg_format(&agg, line, sizeof(line));
			strbuf_addstr(out, line);
		} else {
			strbuf_addf(out, "%s type=0x%02x length=%zu", got < 0 ? "MALFORMED" : "UNKNOWN",
				    rec->u.unknown.tag, rec->u.unknown.len);
		}
		break;
	}
	}
	strbuf_addch(out, '\n');
}

/* ---- stacks ---- */

struct stack_module {
	uint64_t id, base;
	char *name;
	struct mp_segment *seg;
	size_t nseg;
	bool unloaded;
};

/* A SYMBOL record: its rendered function list, its module, the next record of its ip. */
struct stack_sym {
	char *text;
	uint64_t module;
	size_t next; /* SIZE_MAX: none (yet) */
};

/*
 * Which SYMBOL record describes a node's ip: a record's index, or one of
 * these. A record comes after the first node of its ip, and after the
 * first node of an ip reused by another module once the first was unloaded.
 */
#define BIND_FIRST SIZE_MAX                   /* the ip's first record */
#define BIND_AFTER(i) ((size_t)1 << 62 | (i)) /* the record after record i */

struct mp_stacks {
	uint64_t *parent, *ip;       /* by node index */
	size_t *bind;                /* by node index: BIND_FIRST, BIND_AFTER(i) or i */
	size_t nnodes, alloc;
	struct mp_intmap sym;        /* ip -> index into syms of its latest record */
	struct mp_intmap first;      /* ip -> index into syms of its first record */
	struct stack_sym *syms;
	size_t nsyms, syms_alloc;
	struct stack_module *mods;
	size_t nmods, mods_alloc;
};

struct mp_stacks *mp_stacks_new(void)
{
	return xcalloc(1, sizeof(struct mp_stacks));
}

void mp_stacks_free(struct mp_stacks *st)
{
	if (!st)
		return;
	free(st->parent);
	free(st->ip);
	free(st->bind);
	mp_intmap_release(&st->sym);
	mp_intmap_release(&st->first);
	for (size_t i = 0; i < st->nsyms; i++)
		free(st->syms[i].text);
	free(st->syms);
	for (size_t i = 0; i < st->nmods; i++) {
		free(st->mods[i].name);
		free(st->mods[i].seg);
	}
	free(st->mods);
	free(st);
}

static struct stack_module *stack_module(struct mp_stacks *st, uint64_t id)
{
	for (size_t i = 0; i < st->nmods; i++)
		if (st->mods[i].id == id)
			return &st->mods[i];
	return NULL;
}

/* The SYMBOL record a new node of ip takes (struct mp_stacks, bind). */
static size_t bind_now(struct mp_stacks *st, uint64_t ip)
{
	uint64_t idx;
	const struct stack_module *m;
	if (!mp_intmap_get(&st->sym, ip, &idx))
		return BIND_FIRST;
	/* (Module ids are reused by no other module while loaded; an unloaded one is gone for good.) */
	m = st->syms[idx].module ? stack_module(st, st->syms[idx].module) : NULL;
	return m && m->unloaded ? BIND_AFTER(idx) : (size_t)idx;
}

void mp_stacks_add(struct mp_stacks *st, const struct mp_reader *r, const struct mp_record *rec)
{
	if (rec->type == MP_REC_TRACE) {
		size_t i = (size_t)rec->u.trace.index;
		if (i + 1 > st->alloc) {
			size_t a = st->alloc ? st->alloc * 2 : 1024;
			while (a < i + 1)
				a *= 2;
			st->parent = xreallocarray(st->parent, a, sizeof(*st->parent));
			st->ip = xreallocarray(st->ip, a, sizeof(*st->ip));
			st->bind = xreallocarray(st->bind, a, sizeof(*st->bind));
			st->alloc = a;
		}
		st->parent[i] = rec->u.trace.parent;
		st->ip[i] = rec->u.trace.ip;
		st->bind[i] = bind_now(st, rec->u.trace.ip);
		if (i + 1 > st->nnodes)
			st->nnodes = i + 1;
	} else if (rec->type == MP_REC_MODULE_UNLOAD) {
		struct stack_module *m = stack_module(st, rec->u.unload.id);
		if (m)
			m->unloaded = true;
	} else if (rec->type == MP_REC_SYMBOL) {
		uint64_t prev;
		struct strbuf sb = STRBUF_INIT;
		for (size_t i = 0; i < rec->u.symbol.nframes; i++) {
			const char *f = mp_reader_string(r, rec->u.symbol.frames[i].function);
			if (i)
				strbuf_addch(&sb, ',');
			strbuf_addch(&sb, '"');
			if (f)
				strbuf_add_cquoted(&sb, f, strlen(f));
			else
				strbuf_addstr(&sb, "?");
			strbuf_addch(&sb, '"');
		}
		if (!rec->u.symbol.nframes) {
			const struct stack_module *m = stack_module(st, rec->u.symbol.module);
			strbuf_addf(&sb, "\"%s+0x%llx\"", m ? m->name : "?",
				    (unsigned long long)rec->u.symbol.offset);
		}
		ALLOC_GROW(st->syms, st->nsyms + 1, st->syms_alloc);
		st->syms[st->nsyms].text = strbuf_detach(&sb, NULL);
		st->syms[st->nsyms].module = rec->u.symbol.module;
		st->syms[st->nsyms].next = SIZE_MAX;
		if (mp_intmap_get(&st->sym, rec->u.symbol.ip, &prev))
			st->syms[prev].next = st->nsyms;
		else
			mp_intmap_put(&st->first, rec->u.symbol.ip, st->nsyms);
		mp_intmap_put(&st->sym, rec->u.symbol.ip, st->nsyms++);
	} else if (rec->type == MP_REC_MODULE) {
		struct stack_module *m;
		const char *base;
		ALLOC_GROW_ZERO(st->mods, st->nmods + 1, st->mods_alloc); /* not unloaded (yet) */
		m = &st->mods[st->nmods++];
		m->id = rec->u.module.id;
		m->base = rec->u.module.base;
		m->name = xstrndup(rec->u.module.path, rec->u.module.path_len);
		base = strrchr(m->name, '/');
		if (base)
			memmove(m->name, base + 1, strlen(base + 1) + 1);
		m->nseg = rec->u.module.nseg;
		m->seg = xmemdup(rec->u.module.seg, m->nseg * sizeof(*m->seg));
	}
}

/* The SYMBOL record node n's ip has, or SIZE_MAX. */
static size_t bound_symbol(const struct mp_stacks *st, uint64_t n)
{
	size_t b = st->bind[n];
	uint64_t idx;
	if (b == BIND_FIRST)
		return mp_intmap_get(&st->first, st->ip[n], &idx) ? (size_t)idx : SIZE_MAX;
	if (b & BIND_AFTER(0))
		return st->syms[b & ~BIND_AFTER(0)].next;
	return b;
}

void mp_stacks_render(struct mp_stacks *st, struct strbuf *out, uint64_t node)
{
	size_t guard = 0;
	strbuf_addch(out, '[');
	for (uint64_t n = node; n && n < st->nnodes && guard++ < 100000; n = st->parent[n]) {
		uint64_t ip = st->ip[n];
		size_t idx;
		if (n != node)
			strbuf_addch(out, ',');
		if (ip == MP_IP_TRUNCATED) {
			strbuf_addstr(out, "\"<stack truncated>\"");
		} else if ((idx = bound_symbol(st, n)) != SIZE_MAX) {
			strbuf_addstr(out, st->syms[idx].text);
		} else {
			const struct stack_module *m = NULL;
			for (size_t i = 0; i < st->nmods && !m; i++)
				for (size_t k = 0; k < st->mods[i].nseg; k++) {
					uint64_t lo = st->mods[i].base + st->mods[i].seg[k].vaddr;
					if (ip >= lo && ip < lo + st->mods[i].seg[k].memsz)
						m = &st->mods[i];
				}
			if (m)
				strbuf_addf(out, "\"%s+0x%llx\"", m->name,
					    (unsigned long long)(ip - m->base));
			else
				strbuf_addf(out, "\"0x%llx\"", (unsigned long long)ip);
		}
	}
	strbuf_addch(out, ']');
}
