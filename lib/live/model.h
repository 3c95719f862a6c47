/*
 * The model of the live view (memprof live, memprof run --live): one
 * process's stream, seen record by record as the collector receives it (the
 * model is the collector's observer), fed to an analysis as it goes; and, on
 * demand, the rows of the view. A row is a location (function and file, as
 * memprof summary has them) with:
 *  - own: the bytes live now that it allocated itself: the allocation site
 *    of their stack (mp_analysis_site_in(): past the runtime and allocator
 *    plumbing, as memprof table and stats name sites);
 *  - total: the bytes live now allocated by it or by what it called (each
 *    stack counted once, however often the location recurses in it);
 *  - allocs: the allocations it made itself since tracking began;
 *  - blocks: how many of those are live now.
 * Rows are sorted by one of the four, for every thread or one of them.
 * Everything here is plain data: the terminal is lib/live/tui.
 */
#ifndef MEMPROF_LIB_LIVE_MODEL_H
#define MEMPROF_LIB_LIVE_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/analysis/analysis.h"
#include "lib/format/decode.h"
#include "lib/process/collect.h"
#include "lib/util/hash.h"

enum mp_live_sort { MP_LIVE_BY_OWN, MP_LIVE_BY_TOTAL, MP_LIVE_BY_ALLOCS, MP_LIVE_BY_BLOCKS };

enum mp_live_state {
	MP_LIVE_WAITING,  /* no stream yet */
	MP_LIVE_RUNNING,  /* records come */
	MP_LIVE_ENDED,    /* the stream ended: the view keeps its last figures */
};

struct mp_live_row {
	uint32_t function;      /* string id of the analysis */
	uint32_t file;          /* string id: the source file, else the module path, else 0 */
	uint64_t own, total;    /* bytes live now */
	uint64_t allocs;        /* allocations made here since tracking began */
	uint64_t blocks;        /* of them, live now */
	uint32_t stamp_;        /* the last slot counted in total, to count a stack once */
};

struct mp_live {
	pid_t pid;              /* the process shown: the first stream's when 0 */
	/*
	 * How stacks and names are shown, set before the stream opens:
	 * MP_ANALYSIS_ALL_FRAMES, MP_ANALYSIS_RAW_LEAF (--all-frames,
	 * --raw-leaf; stacks as mp_analysis_view_stack() has them), and C++
	 * names whole (--full-names).
	 */
	unsigned flags;
	bool full_names;
	enum mp_live_state state;
	struct mp_analysis a;   /* of the stream (initialised once it opened) */
	bool have_analysis;
	unsigned streams;       /* 1 once the stream opened: the model shows one */
	/* What the records said. */
	uint64_t time_us;       /* since tracking began: the latest time a record gave */
	uint64_t rss;           /* at the latest tick (0: none yet) */
	bool exit_seen;         /* an EXIT record: the process is ending */
	bool exit_status_known;
	int64_t exit_status;    /* the argument of exit() */
	bool detached;          /* a DETACH record: tracking was stopped (memprof ctl stop, the view) */
	/* What the caller knows: the wait status of the process (memprof run's child). */
	bool waited;
	int wait_status;
	/* The rows, as of the last mp_live_update(). */
	struct mp_live_row *rows;
	size_t nrows, rows_alloc;
	struct mp_counts shown; /* live bytes and blocks of the threads shown */
	enum mp_live_sort sort;
	uint32_t thread;        /* the thread shown (index into a.threads), or MP_THREAD_MERGED */
	struct mp_idxset set_;
	uint32_t *stack_;
	size_t stack_alloc_;
};

/* A model of process pid (0: whichever process streams first). */
void mp_live_init(struct mp_live *m, pid_t pid);
void mp_live_release(struct mp_live *m);

/* The collector's observer that feeds m (m must outlive the collector's use of it). */
struct mp_collect_observer mp_live_observer(struct mp_live *m);
/*
 * The observer's calls, for tests: a stream of pid opens with its HEADER
 * record (false when the model does not show it: another process, or a
 * later stream), a record of it, its end.
 */
bool mp_live_open(struct mp_live *m, pid_t pid, const struct mp_record *header);
void mp_live_record(struct mp_live *m, const struct mp_record *rec);
void mp_live_close(struct mp_live *m);
/* The process ended with this wait status (memprof run knows it). */
void mp_live_exited(struct mp_live *m, int wait_status);

/* The heap now (every thread) and at its peak since tracking began. */
struct mp_counts mp_live_heap(const struct mp_live *m);
uint64_t mp_live_peak(const struct mp_live *m);

/* Recompute the rows for the current sort and thread. */
void mp_live_update(struct mp_live *m);
/* Sort the rows again (after m->sort changed). */
void mp_live_sort_rows(struct mp_live *m);
/*
 * Show the next thread (dir 1) or the previous one (-1), cycling through
 * every thread and "all of them" (MP_THREAD_MERGED).
 */
void mp_live_next_thread(struct mp_live *m, int dir);

#endif
