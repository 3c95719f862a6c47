/* The model of the live view: one process's stream into an analysis, and the view's rows. */
#include <config.h>
#include "lib/live/model.h"

#include <stdlib.h>
#include <string.h>

#include "lib/util/sort.h"
#include "lib/util/xalloc.h"

void mp_live_init(struct mp_live *m, pid_t pid)
{
	memset(m, 0, sizeof(*m));
	m->pid = pid;
	m->state = MP_LIVE_WAITING;
	m->sort = MP_LIVE_BY_OWN;
	m->thread = MP_THREAD_MERGED;
	mp_idxset_init(&m->set_);
}

void mp_live_release(struct mp_live *m)
{
	if (m->have_analysis)
		mp_analysis_release(&m->a);
	free(m->rows);
	free(m->stack_);
	mp_idxset_release(&m->set_);
	memset(m, 0, sizeof(*m));
}

/* ---- the stream ---------------------------------------------------------- */

bool mp_live_open(struct mp_live *m, pid_t pid, const struct mp_record *header)
{
	struct mp_analysis_opts o = MP_ANALYSIS_OPTS_INIT;
	/*
	 * One stream: the process's first. A later one (a program it executed,
	 * with --follow-fork) is not shown: its records could come before the
	 * end of the first one's.
	 */
	if ((m->pid && pid != m->pid) || m->streams)
		return false;
	o.flags = MP_ANALYSIS_SPLIT_THREADS | m->flags;
	mp_analysis_init(&m->a, &o);
	m->have_analysis = true;
	m->pid = pid;
	m->streams++;
	m->state = MP_LIVE_RUNNING;
	mp_analysis_record(&m->a, header);
	return true;
}

static void seen_time(struct mp_live *m, const struct mp_marker *mk)
{
	if ((mk->has & MP_HAS_TIME) && mk->time_us > m->time_us)
		m->time_us = mk->time_us;
}

void mp_live_record(struct mp_live *m, const struct mp_record *rec)
{
	if (m->state != MP_LIVE_RUNNING)
		return;
	switch (rec->type) {
	case MP_REC_TICK:
		if (rec->u.tick.time_us > m->time_us)
			m->time_us = rec->u.tick.time_us;
		m->rss = rec->u.tick.rss;
		break;
	case MP_REC_EXIT:
		m->exit_seen = true;
		if (rec->u.marker.has & MP_HAS_STATUS) {
			m->exit_status_known = true;
			m->exit_status = rec->u.marker.status;
		}
		seen_time(m, &rec->u.marker);
		break;
	case MP_REC_DETACH:
		m->detached = true;
		seen_time(m, &rec->u.marker);
		break;
	case MP_REC_ATTACH: case MP_REC_FORK: case MP_REC_LOST: case MP_REC_MESSAGE: case MP_REC_UNWIND:
	case MP_REC_SNAPSHOT:
		seen_time(m, &rec->u.marker);
		break;
	default:
		break;
	}
	mp_analysis_record(&m->a, rec);
}

void mp_live_close(struct mp_live *m)
{
	if (m->state == MP_LIVE_RUNNING)
		m->state = MP_LIVE_ENDED;
}

void mp_live_exited(struct mp_live *m, int wait_status)
{
	m->waited = true;
	m->wait_status = wait_status;
}

static void *obs_open(void *ctx, pid_t pid, const char *path, const struct mp_record *header)
{
	(void)path;
	return mp_live_open(ctx, pid, header) ? ctx : NULL;
}

static void obs_record(void *sctx, const struct mp_record *rec)
{
	mp_live_record(sctx, rec);
}

static void obs_close(void *sctx, const struct mp_capture_info *info)
{
	(void)info;
	mp_live_close(sctx);
}

static void obs_ended(void *sctx)
{
	mp_live_close(sctx);
}

struct mp_collect_observer mp_live_observer(struct mp_live *m)
{
	struct mp_collect_observer o = { .open = obs_open, .record = obs_record, .close = obs_close,
					 .ctx = m, .ended = obs_ended };
	return o;
}

/* ---- figures ------------------------------------------------------------- */

struct mp_counts mp_live_heap(const struct mp_live *m)
{
	struct mp_counts c = { 0, 0 };
	if (!m->have_analysis)
		return c;
	for (size_t i = 0; i < m->a.nthreads; i++) {
		c.bytes += m->a.threads[i].live.bytes;
		c.count += m->a.threads[i].live.count;
	}
	return c;
}

uint64_t mp_live_peak(const struct mp_live *m)
{
	return m->have_analysis ? m->a.totals.peak_bytes : 0;
}

void mp_live_next_thread(struct mp_live *m, int dir)
{
	size_t n = m->have_analysis ? m->a.nthreads : 0;
	/* Positions 0 (every thread) to n (the last thread), round. */
	size_t pos = m->thread == MP_THREAD_MERGED || m->thread >= n ? 0 : m->thread + 1;
	pos = (pos + (dir < 0 ? n : 1)) % (n + 1);
	m->thread = pos ? (uint32_t)(pos - 1) : MP_THREAD_MERGED;
}

/* ---- rows ---------------------------------------------------------------- */

struct row_probe {
	const struct mp_live *m;
	uint32_t function, file;
};

static bool row_eq(const void *ctx, uint32_t idx)
{
	const struct row_probe *p = ctx;
	return p->m->rows[idx].function == p->function && p->m->rows[idx].file == p->file;
}

/* The row of a location: its function and file (its module when the file is unknown). */
static uint32_t row_of(struct mp_live *m, uint32_t loc)
{
	const struct mp_location *l = mp_analysis_location(&m->a, loc);
	struct row_probe probe = { m, l->function, l->file };
	uint64_t h;
	uint32_t idx;
	if (!probe.file && l->module != MP_NONE)
		probe.file = m->a.modules[l->module].path;
	h = mp_hash_combine(mp_hash_u64(probe.function), probe.file);
	idx = mp_idxset_find(&m->set_, h, row_eq, &probe);
	if (idx != MP_NONE)
		return idx;
	ALLOC_GROW(m->rows, m->nrows + 1, m->rows_alloc);
	idx = (uint32_t)m->nrows++;
	memset(&m->rows[idx], 0, sizeof(m->rows[idx]));
	m->rows[idx].function = probe.function;
	m->rows[idx].file = probe.file;
	m->rows[idx].stamp_ = MP_NONE;
	mp_idxset_add(&m->set_, h, idx);
	return idx;
}

static uint64_t sort_key(const struct mp_live_row *r, enum mp_live_sort by)
{
	switch (by) {
	case MP_LIVE_BY_TOTAL: return r->total;
	case MP_LIVE_BY_ALLOCS: return r->allocs;
	case MP_LIVE_BY_BLOCKS: return r->blocks;
	default: return r->own;
	}
}

static int cmp_desc(uint64_t x, uint64_t y)
{
	return x > y ? -1 : x < y;
}

static int row_cmp(const void *x, const void *y, void *ctx)
{
	const struct mp_live *m = ctx;
	const struct mp_live_row *r1 = x, *r2 = y;
	int c;
	if ((c = cmp_desc(sort_key(r1, m->sort), sort_key(r2, m->sort))) ||
	    (c = cmp_desc(r1->total, r2->total)) || (c = cmp_desc(r1->own, r2->own)) ||
	    (c = cmp_desc(r1->allocs, r2->allocs)) || (c = cmp_desc(r1->blocks, r2->blocks)))
		return c;
	if ((c = strcmp(mp_analysis_string(&m->a, r1->function),
			mp_analysis_string(&m->a, r2->function))))
		return c;
	return strcmp(r1->file ? mp_analysis_string(&m->a, r1->file) : "",
		      r2->file ? mp_analysis_string(&m->a, r2->file) : "");
}

void mp_live_sort_rows(struct mp_live *m)
{
	if (m->nrows)
		mp_qsort_r(m->rows, m->nrows, sizeof(*m->rows), row_cmp, m);
}

void mp_live_update(struct mp_live *m)
{
	size_t keep = 0;
	m->nrows = 0;
	m->shown = (struct mp_counts){ 0, 0 };
	mp_idxset_release(&m->set_);
	mp_idxset_init(&m->set_);
	if (!m->have_analysis)
		return;
	for (size_t i = 0; i < m->a.nslots; i++) {
		const struct mp_slot *s = &m->a.slots[i];
		size_t n;
		uint32_t own;
		if (m->thread != MP_THREAD_MERGED && s->thread != m->thread)
			continue;
		if (!s->allocated.count)
			continue;
		m->shown.bytes += s->leaked.bytes;
		m->shown.count += s->leaked.count;
		n = mp_analysis_view_stack(&m->a, s->stack, &m->stack_, &m->stack_alloc_);
		own = row_of(m, mp_analysis_site_in(&m->a, m->stack_, n)); /* may move m->rows */
		m->rows[own].own += s->leaked.bytes;
		m->rows[own].allocs += s->allocated.count;
		m->rows[own].blocks += s->leaked.count;
		if (!s->leaked.bytes)
			continue;
		for (size_t k = 0; k < n; k++) {
			uint32_t idx = row_of(m, m->stack_[k]); /* may move m->rows */
			struct mp_live_row *r = &m->rows[idx];
			if (r->stamp_ == i)
				continue; /* recursion: this stack is counted already */
			r->stamp_ = (uint32_t)i;
			r->total += s->leaked.bytes;
		}
	}
	/* Locations with nothing live and no allocation of their own have nothing to show. */
	for (size_t i = 0; i < m->nrows; i++)
		if (m->rows[i].total || m->rows[i].allocs)
			m->rows[keep++] = m->rows[i];
	m->nrows = keep;
	/* The set indexes rows by position: rebuilt at the next update. */
	mp_idxset_release(&m->set_);
	mp_idxset_init(&m->set_);
	mp_live_sort_rows(m);
}
