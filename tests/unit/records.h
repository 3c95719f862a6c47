/*
 * Records built by hand for the unit tests that feed them to a consumer
 * (analysis-fixture.h's global analysis, test-live.c's live model). Each
 * returns the record; names, segments and frames stay the caller's.
 */
#ifndef MEMPROF_TESTS_RECORDS_H
#define MEMPROF_TESTS_RECORDS_H

#include <string.h>

#include "lib/format/decode.h"
#include "lib/format/format.h"

static inline struct mp_record rec_alloc(uint32_t th, unsigned kind, uint64_t addr, uint64_t size,
					 uint64_t stack)
{
	struct mp_record r = { .type = MP_REC_ALLOC, .thread = th };
	r.u.ev.kind = kind;
	r.u.ev.addr = addr;
	r.u.ev.size = size;
	r.u.ev.stack = stack;
	return r;
}

static inline struct mp_record rec_free(uint32_t th, unsigned kind, uint64_t addr)
{
	struct mp_record r = { .type = MP_REC_FREE, .thread = th };
	r.u.ev.kind = kind;
	r.u.ev.addr = addr;
	return r;
}

/* A FREE_RANGE: the pages [addr, addr + size). */
static inline struct mp_record rec_free_range(uint32_t th, unsigned kind, uint64_t addr, uint64_t size)
{
	struct mp_record r = rec_free(th, kind, addr);
	r.u.ev.size = size;
	r.u.ev.ranged = true;
	return r;
}

static inline struct mp_record rec_trace(uint64_t index, uint64_t parent, uint64_t ip)
{
	struct mp_record r = { .type = MP_REC_TRACE };
	r.u.trace.index = index;
	r.u.trace.parent = parent;
	r.u.trace.ip = ip;
	return r;
}

static inline struct mp_record rec_tick(uint64_t time_us, uint64_t rss)
{
	struct mp_record r = { .type = MP_REC_TICK };
	r.u.tick.time_us = time_us;
	r.u.tick.rss = rss;
	return r;
}

static inline struct mp_record rec_thread(uint32_t index, uint64_t tid, const char *name)
{
	struct mp_record r = { .type = MP_REC_THREAD };
	r.u.thread.index = index;
	r.u.thread.tid = tid;
	r.u.thread.name = name;
	r.u.thread.name_len = strlen(name);
	return r;
}

static inline struct mp_record rec_string(uint64_t id, const char *s)
{
	struct mp_record r = { .type = MP_REC_STRING };
	r.u.string.id = id;
	r.u.string.text = s;
	r.u.string.len = strlen(s);
	return r;
}

/* A MODULE of one segment. */
static inline struct mp_record rec_module(uint64_t id, uint64_t base, const char *path,
					  const struct mp_segment *seg)
{
	struct mp_record r = { .type = MP_REC_MODULE };
	r.u.module.id = id;
	r.u.module.base = base;
	r.u.module.path = path;
	r.u.module.path_len = strlen(path);
	r.u.module.nseg = 1;
	r.u.module.seg = seg;
	return r;
}

static inline struct mp_record rec_symbol(uint64_t ip, uint64_t mod, uint64_t offset, size_t n,
					  const struct mp_frame *f)
{
	struct mp_record r = { .type = MP_REC_SYMBOL };
	r.u.symbol.ip = ip;
	r.u.symbol.module = mod;
	r.u.symbol.offset = offset;
	r.u.symbol.nframes = n;
	r.u.symbol.frames = f;
	return r;
}

#endif
