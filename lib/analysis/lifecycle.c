/* An analysis before and after its pass: set up, given a header, finished and released. */
#include <config.h>
#include "lib/analysis/analysis.h"

#include <stdlib.h>
#include <string.h>

#include "lib/analysis/analysis-private.h"
#include "lib/analysis/blocks.h"
#include "lib/analysis/rangemap.h"
#include "lib/util/hash.h"
#include "lib/util/sort.h"
#include "lib/util/xalloc.h"

void mp_analysis_init(struct mp_analysis *a, const struct mp_analysis_opts *opts)
{
	struct mp_analysis_private *p;
	memset(a, 0, sizeof(*a));
	if (opts)
		a->opts = *opts;
	else
		a->opts = (struct mp_analysis_opts)MP_ANALYSIS_OPTS_INIT;
	if (!a->opts.max_memory_records)
		a->opts.max_memory_records = MP_DEFAULT_MAX_MEMORY_RECORDS;
	if (a->opts.max_memory_records < 2)
		a->opts.max_memory_records = 2;
	/* Full series merge in pairs. */
	a->opts.max_memory_records &= ~(size_t)1;
	a->ticks_per_sample = 1;
	a->interpreter_loc = MP_NONE;
	mp_strtab_init(&a->strings);
	p = a->p = xcalloc(1, sizeof(*p));
	mp_blocks_init(&p->blocks);
	mp_rangemap_init(&p->maps);
	mp_idxset_init(&p->pendset);
	p->free_origin = MP_NONE;
	mp_idxset_init(&p->slotset);
	mp_idxset_init(&p->locset);
	mp_idxset_init(&p->ivset);
	mp_intmap_init(&p->ipmap);
	mp_intmap_init(&p->modmap);
	mp_intmap_init(&p->srcmods);
	mp_intmap_init(&p->modbypath);
	p->traces = xcalloc(1, sizeof(*p->traces));
	p->traces_alloc = 1;
	/* Location 0 is the single frame of allocations without a stack. */
	mp_frames_add_no_stack(a);
}

/* The pass's working state, not needed once it is finished. */
static void release_pass_state(struct mp_analysis_private *p)
{
	mp_blocks_release(&p->blocks);
	mp_rangemap_release(&p->maps);
	mp_idxset_release(&p->pendset);
	free(p->pend);
	p->pend = NULL;
	p->npend = p->pend_alloc = 0;
	free(p->ev_start);
	free(p->ev_hwm);
	p->ev_start = p->ev_hwm = NULL;
	p->ev_alloc = 0;
	free(p->origins);
	p->origins = NULL;
	p->norigins = p->origins_alloc = 0;
	mp_idxset_release(&p->slotset);
	free(p->stack_slot);
	p->stack_slot = NULL;
	p->stack_slot_alloc = 0;
	mp_idxset_release(&p->ivset);
	mp_intmap_release(&p->ipmap);
	mp_intmap_release(&p->modmap);
	mp_intmap_release(&p->srcmods);
	mp_intmap_release(&p->modbypath);
	free(p->segs);
	p->segs = NULL;
	free(p->sidmap);
	p->sidmap = NULL;
	p->nsid = p->sid_alloc = 0;
	free(p->thread_of);
	p->thread_of = NULL;
	p->thread_of_alloc = 0;
	free(p->symbuf);
	p->symbuf = NULL;
}

void mp_analysis_release(struct mp_analysis *a)
{
	struct mp_analysis_private *p = a->p;
	if (p) {
		release_pass_state(p);
		mp_idxset_release(&p->locset);
		free(p->traces);
		free(p->ips);
		free(p->orphans);
		free(p->frames);
		free(p->site_memo);
		free(p->caller_memo);
		mp_family_free(p->family);
		free(p->exited);
		free(p);
	}
	for (size_t i = 0; i < a->nmodules; i++) {
		free(a->modules[i].build_id);
		free(a->modules[i].seg);
	}
	free(a->modules);
	mp_header_release(&a->header);
	mp_strtab_release(&a->strings);
	free(a->locs);
	free(a->threads);
	free(a->slots);
	free(a->kinds);
	free(a->samples);
	free(a->intervals);
	free(a->processes);
	free(a->forks);
	memset(a, 0, sizeof(*a));
}

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

void mp_analysis_header(struct mp_analysis *a, const struct mp_header *h)
{
	mp_header_release(&a->header);
	a->header = *h;
	a->header.exe = dup_or_null(h->exe);
	a->header.hostname = dup_or_null(h->hostname);
	a->header.cwd = dup_or_null(h->cwd);
	a->header.tracker_version = dup_or_null(h->tracker_version);
	a->header.parent_capture = dup_or_null(h->parent_capture);
	if (h->argv) {
		a->header.argv = xcalloc(h->argc + 1, sizeof(char *));
		for (size_t i = 0; i < h->argc; i++)
			a->header.argv[i] = xstrdup(h->argv[i]);
	}
	if (h->mode == MP_MODE_ATTACH)
		a->attached = true;
	a->aggregated = (h->flags & MP_HF_AGGREGATED) != 0;
	mp_analysis_note_sampling(a, h->sampling_interval);
}

static int kind_cmp(const void *x, const void *y)
{
	const struct mp_kind_totals *a = x, *b = y;
	return a->kind < b->kind ? -1 : a->kind > b->kind;
}

void mp_analysis_finish(struct mp_analysis *a)
{
	struct mp_analysis_private *p = a->p;
	if (a->finished)
		return;
	a->finished = true;
	/* The trailer knows; without one, the last time any record gave. */
	if (p->last_time_us > a->duration_us)
		a->duration_us = p->last_time_us;
	if (a->trailer.present && a->trailer.duration_us)
		a->duration_us = a->trailer.duration_us;
	if (a->trailer.present && a->trailer.n_lost > a->totals.n_lost)
		a->totals.n_lost = a->trailer.n_lost;
	if (a->trailer.present && a->trailer.n_libunwind > a->totals.n_libunwind)
		a->totals.n_libunwind = a->trailer.n_libunwind;
	mp_series_finish(a);
	/* (Blocks of processes that ended, read with others, still count: they leaked.) */
	if (!a->aggregated)
		a->totals.var_leaked = p->heap_var > 0 ? p->heap_var : 0;
	for (size_t i = 0; i < a->nslots; i++) {
		struct mp_slot *s = &a->slots[i];
		s->peak = s->epoch_ == p->epoch ? s->at_peak_ : s->leaked;
		if (p->exited && i < p->exited_alloc) {
			s->leaked.bytes += p->exited[i].bytes;
			s->leaked.count += p->exited[i].count;
		}
		a->totals.leaked_bytes += s->leaked.bytes;
		a->totals.leaked_count += s->leaked.count;
	}
	if (p->family)
		mp_family_finish(a);
	mp_frames_compute_sites(a);
	for (size_t i = 0; i < a->nslots; i++) {
		a->slots[i].site = mp_analysis_site(a, a->slots[i].stack);
		if (a->interpreter_loc != MP_NONE) /* (no caller without Python frames) */
			a->slots[i].caller = mp_analysis_caller(a, a->slots[i].stack);
	}
	if (a->opts.flags & MP_ANALYSIS_TEMPORAL)
		mp_series_live_intervals(a);
	mp_qsort(a->kinds, a->nkinds, sizeof(*a->kinds), kind_cmp);
	release_pass_state(p);
}
