/*
 * The analysis of a capture: one streaming pass over its records computes,
 * per allocation stack, what was live at the peak of the tracked heap, what
 * leaked, what was temporary and what was allocated in all, plus the totals,
 * the size histogram and the memory time series. Memory is bounded by the
 * number of unique stacks and of live blocks, never by the number of events.
 * The semantics are DESIGN.md section 3; every reporter builds on this.
 *
 * Typical use:
 *
 *	struct mp_analysis a;
 *	struct mp_analysis_opts o = MP_ANALYSIS_OPTS_INIT;
 *	mp_analysis_init(&a, &o);
 *	if (mp_analysis_read_file(&a, path, &err) < 0) ...   (or feed records)
 *	for (size_t i = 0; i < a.nslots; i++) a.slots[i].peak ...
 *	mp_analysis_release(&a);
 */
#ifndef MEMPROF_LIB_ANALYSIS_ANALYSIS_H
#define MEMPROF_LIB_ANALYSIS_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/format/decode.h"
#include "lib/format/reader.h"
#include "lib/util/strbuf.h"
#include "lib/symbols/symbols.h"
#include "lib/util/strtab.h"

/*
 * Told how far mp_analysis_read_file() got, for a progress bar: the file's
 * size (0 when unknown) at the start, then bytes and records read, then the
 * end. Every function may be NULL.
 */
struct mp_analysis_progress {
	void (*start)(void *ctx, uint64_t total);
	void (*update)(void *ctx, uint64_t bytes, uint64_t records);
	void (*done)(void *ctx);
	void *ctx;
};

/* "No such index": the root's location, a merged thread, a block never freed. */
#define MP_NONE UINT32_MAX
/* The thread of aggregates when threads are merged. */
#define MP_THREAD_MERGED MP_NONE

enum mp_analysis_flags {
	/* Leave the mapping kinds (mmap, mremap and munmap) out of everything. */
	MP_ANALYSIS_NO_MMAP = 1 << 0,
	/* Keep threads apart in the slots (else every slot's thread is MP_THREAD_MERGED). */
	MP_ANALYSIS_SPLIT_THREADS = 1 << 1,
	/* Collect per-slot lifetime intervals over the time buckets (a->intervals). */
	MP_ANALYSIS_TEMPORAL = 1 << 2,
	/*
	 * How stacks are shown (mp_analysis_view_stack(), slots' sites; the
	 * reporters' --all-frames and --raw-leaf, memprof(1) "FRAMES"):
	 * keep the interpreter's own frames in a Python program's stacks, and
	 * make the innermost frame shown each stack's site.
	 */
	MP_ANALYSIS_ALL_FRAMES = 1 << 3,
	MP_ANALYSIS_RAW_LEAF = 1 << 4,
	/*
	 * Several captures (mp_analysis_read_files()): keep the processes apart
	 * (each slot has its process) and put each one's frame, named by its
	 * command and pid, at the root of its stacks (a->processes[].location).
	 */
	MP_ANALYSIS_SPLIT_PROCESSES = 1 << 5,
};

/* What a report shows of each slot. */
enum mp_view {
	MP_VIEW_PEAK,      /* blocks live when the heap first reached its maximum */
	MP_VIEW_LEAKS,     /* blocks live at the end of the capture */
	MP_VIEW_TEMPORARY, /* allocations freed soon after (see temporary_threshold) */
	MP_VIEW_ALLOCATED, /* every allocation, freed or not */
};

/*
 * Bytes and blocks. A size is any 64-bit value (an allocation of 2^63 bytes
 * is legal in a capture), so every count of the analysis is unsigned,
 * modulo 2^64: exact whenever the true value fits, as a real program's do.
 */
struct mp_counts {
	uint64_t bytes, count;
};

/*
 * A count as a signed 64-bit number, for the formats that carry only those
 * (pprof's values, the HTML reports' data): above INT64_MAX it saturates
 * rather than turning negative.
 */
static inline int64_t mp_count_i64(uint64_t v)
{
	return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

struct mp_module;

/* A frame supplied by a symbolizer: struct mp_sym_frame of lib/symbols/symbols.h. The
   strings are copied before the hook returns, so they may be scratch buffers. */

/*
 * The hook for captures without SYMBOL records (header flag "symbolized"
 * missing, or an ip the collector could not symbolize): called once per
 * distinct instruction pointer that has no SYMBOL record yet, during the
 * pass, when the first TRACE record using it is read, with the module that
 * contains it then (NULL when none does) and ip - module base. (A SYMBOL
 * record for the ip read later replaces what the hook gave.) The ip is a
 * return address as recorded: look up ip - 1. Fill up to max frames,
 * innermost (inlined) first, and return how many; 0 means "unknown": the
 * location becomes module+0xoffset.
 */
typedef size_t (*mp_symbolize_fn)(void *ctx, const struct mp_module *mod, uint64_t ip,
				  uint64_t offset, struct mp_sym_frame *out, size_t max);

struct mp_analysis_opts {
	unsigned flags;                 /* enum mp_analysis_flags */
	/*
	 * An allocation is temporary when the thread that made it frees it
	 * with at most this many other allocations by that thread in between
	 * (memray's rule; 0: freed before the thread's next allocation).
	 */
	uint64_t temporary_threshold;
	/* At most this many points in a->samples (and time buckets); 0: 10000; odd: one less. */
	size_t max_memory_records;
	mp_symbolize_fn symbolize;      /* may be NULL */
	void *symbolize_ctx;
	const struct mp_analysis_progress *progress; /* told by mp_analysis_read(); may be NULL */
};
#define MP_ANALYSIS_OPTS_INIT { 0, 1, 0, NULL, NULL, NULL }
#define MP_DEFAULT_MAX_MEMORY_RECORDS 10000

struct mp_module {
	uint64_t id;            /* the capture's module id */
	uint64_t base;          /* load bias */
	uint32_t path;          /* string id */
	uint32_t name;          /* string id of the path's last component */
	uint8_t *build_id;
	size_t build_id_len;
	struct mp_segment *seg;
	size_t nseg;
	bool loaded;            /* false after its MODULE_UNLOAD */
	bool runtime;           /* libc.so*, libstdc++.so*, libgcc_s.so*, ld-linux*, libc++*, libmemprof*,
				   and the Python interpreter */
	bool interpreter;       /* python3*, python, libpython3*: the Python interpreter */
	bool program;           /* the capture's executable (the header's exe) */
	bool source;            /* a Python source file: the module of its frames, no segments */
};

enum mp_location_flags {
	MP_LOC_RUNTIME = 1 << 0,      /* in a runtime module: not an allocation site */
	MP_LOC_UNSYMBOLIZED = 1 << 1, /* "module+0xoffset" or "0xip": no symbol known */
	MP_LOC_TRUNCATED = 1 << 2,    /* the <stack truncated> pseudo frame */
	MP_LOC_NO_STACK = 1 << 3,     /* the <unknown stack> of allocations without a stack */
	/*
	 * Classes, derived from the fields when the location is made, for how
	 * reports show stacks (memprof(1) "FRAMES" documents each rule).
	 */
	MP_LOC_PYTHON = 1 << 4,       /* a Python function's frame */
	MP_LOC_INTERPRETER = 1 << 5,  /* in the Python interpreter (module->interpreter) */
	MP_LOC_STARTUP = 1 << 6,      /* starting the process or a thread: _start, start_thread... */
	MP_LOC_PLUMBING = 1 << 7,     /* allocator plumbing: operator new, std::, /usr/include/c++ */
	MP_LOC_PROGRAM = 1 << 8,      /* in the capture's executable (module->program) */
	MP_LOC_GROUP = 1 << 9,        /* [python interpreter]: a->interpreter_loc */
	MP_LOC_PROCESS = 1 << 12,     /* a process's frame (MP_ANALYSIS_SPLIT_PROCESSES) */
};
/* The flags that make a location what it is; the others follow from its fields. */
#define MP_LOC_IDENTITY (MP_LOC_RUNTIME | MP_LOC_UNSYMBOLIZED | MP_LOC_TRUNCATED | MP_LOC_NO_STACK | \
			 MP_LOC_GROUP | MP_LOC_PROCESS)

/* A source location: what report lines, tree nodes and rows are keyed on. */
struct mp_location {
	uint32_t function;      /* string id: function name, or the unsymbolized form */
	uint32_t file;          /* string id, 0 when unknown */
	uint32_t line;          /* 0 when unknown */
	uint32_t module;        /* index into a->modules, or MP_NONE */
	uint32_t flags;         /* enum mp_location_flags */
};
/* Location 0 is always <unknown stack>, the single frame of stack 0. */
#define MP_LOCATION_NO_STACK 0

struct mp_thread {
	uint64_t tid;           /* the kernel's thread id (0 when never declared) */
	uint32_t index;         /* the capture's thread index */
	uint32_t name;          /* string id, 0 when unnamed */
	uint64_t n_allocs, bytes_allocated, n_frees;
	struct mp_counts live;  /* allocated by this thread and live (at the end: leaked) */
	uint32_t process;       /* index into a->processes (0 for a single capture) */
};

/*
 * A process: the capture of one, among the several read as one by
 * mp_analysis_read_files() (a program and the children it forked), or the
 * one capture. Process 0 started first; their clocks are put on one axis,
 * from its start.
 */
struct mp_process {
	uint64_t pid;
	uint64_t parent_pid;    /* the pid it was forked from (else its parent's), 0 unknown */
	uint32_t parent;        /* index of that process among a->processes, or MP_NONE */
	uint32_t name;          /* string id: its command, short ("cc1", "python3 mp.py") */
	uint32_t capture;       /* string id: the capture's path */
	uint32_t location;      /* its frame, with MP_ANALYSIS_SPLIT_PROCESSES; else MP_NONE */
	uint64_t start_us;      /* since the start of process 0 */
	uint64_t duration_us;
	struct mp_trailer trailer;
	uint64_t n_allocs, bytes_allocated, n_frees, n_forks;
	struct mp_counts leaked; /* live when it ended */
	bool cut;               /* its capture was truncated or damaged: read up to there */
	uint64_t sampling_interval; /* its capture's (0: every event) */
};

/*
 * A slot aggregates the allocations of one stack (a trace node), one
 * allocator kind and, with MP_ANALYSIS_SPLIT_THREADS, one thread.
 */
struct mp_slot {
	uint32_t stack;         /* trace node of the innermost frame; 0 when unknown */
	uint32_t thread;        /* index into a->threads, or MP_THREAD_MERGED */
	uint32_t kind;          /* enum mp_kind (or a newer kind number) */
	uint32_t site;          /* location of the allocation site; set by mp_analysis_finish() */
	uint32_t caller;        /* the Python frame that called a native site, or MP_NONE (finish) */
	uint32_t process;       /* with MP_ANALYSIS_SPLIT_PROCESSES its process, else MP_NONE */
	struct mp_counts allocated;  /* every allocation */
	struct mp_counts peak;       /* live at the peak; set by mp_analysis_finish() */
	struct mp_counts leaked;     /* live at the end (during the pass: live now) */
	struct mp_counts temporary;  /* freed within the temporary threshold */
	/* Private to the pass: the value at the last peak, if changed since. */
	struct mp_counts at_peak_;
	uint64_t epoch_;
};

static inline struct mp_counts mp_slot_counts(const struct mp_slot *s, enum mp_view v)
{
	switch (v) {
	case MP_VIEW_PEAK: return s->peak;
	case MP_VIEW_LEAKS: return s->leaked;
	case MP_VIEW_TEMPORARY: return s->temporary;
	default: return s->allocated;
	}
}

/* Allocation sizes by powers of two: bucket 0 holds size 0, bucket k >= 1 [2^(k-1), 2^k). */
#define MP_HIST_BUCKETS 65
uint64_t mp_hist_bucket_min(unsigned k);
uint64_t mp_hist_bucket_max(unsigned k); /* inclusive */

struct mp_kind_totals {
	uint32_t kind;
	uint64_t n_allocs, bytes_allocated;
	uint64_t n_frees;       /* deallocations of this kind that released tracked memory */
};

struct mp_totals {
	uint64_t n_allocs, bytes_allocated;
	uint64_t n_frees;          /* deallocations that released tracked memory */
	uint64_t n_unknown_frees;  /* deallocations of memory not tracked as live */
	uint64_t n_null_frees;     /* free(NULL): ignored, counted here only */
	uint64_t n_ignored;        /* events left out by MP_ANALYSIS_NO_MMAP */
	uint64_t n_lost;           /* events the tracker reported lost (LOST records) */
	uint64_t n_libunwind;      /* stacks the tracker walked with libunwind (UNWIND records) */
	uint64_t peak_bytes, peak_count;
	uint64_t peak_time_us;     /* time of the last tick before the peak (0: none) */
	uint64_t peak_ticks;       /* ticks seen before the peak (0: it came before the first) */
	uint64_t peak_event;       /* the peak was reached at this event (1-based; 0: never) */
	uint64_t leaked_bytes, leaked_count;
	uint64_t temporary_bytes, temporary_count;
	uint64_t hist[MP_HIST_BUCKETS];
	uint64_t min_size, max_size; /* of allocations (0 when there were none) */
	/*
	 * Sampled captures: the variances of the estimates of the bytes
	 * allocated, at the peak and leaked (the sum over the blocks recorded
	 * of s^2 (1 - pi) / pi^2, an unbiased estimate of each; 0 when exact).
	 */
	double var_allocated, var_peak, var_leaked;
};

/*
 * A point of the memory time series: one per TICK, downsampled to at most
 * max_memory_records by merging neighbours (keeping maxima). A point covers
 * the time since the previous point: a time bucket.
 */
struct mp_sample {
	uint64_t time_us;       /* since the start: the point's last tick */
	uint64_t rss;           /* the highest RSS of the ticks it covers */
	uint64_t heap;          /* tracked heap at its last tick */
	uint64_t heap_max;      /* highest tracked heap within the time it covers, from its start */
	uint64_t hwm_time_us;   /* when heap_max was first reached (the last tick before it) */
};

/*
 * Temporal data (MP_ANALYSIS_TEMPORAL): when blocks lived, relative to the
 * high-water mark of each time bucket. Bucket b is the time covered by
 * a->samples[b] (the events after the last tick form the last bucket, see
 * mp_analysis_finish()); its high-water mark is samples[b].heap_max,
 * counting the heap at the bucket's start, and is first reached at one
 * event (or at the start, when the heap only fell). An event of bucket b is
 * in half 2b when it came at or before that moment, else in half 2b + 1.
 *
 * An interval aggregates the blocks of one slot allocated in half `alloc`
 * and freed in half `free` (MP_NONE: never freed). A block is live at
 * bucket b's high-water mark when alloc <= 2b < free, so the intervals give
 * what was live at the high-water mark of any bucket (and at the peak, the
 * highest of them) and what leaked from any window of buckets. Blocks with
 * alloc == free are live at no high-water mark and are left out. This is
 * the "timeline" of the HTML reports' data (share/templates/README.md).
 */
struct mp_interval {
	uint32_t slot;
	uint32_t alloc, free;
	struct mp_counts c;
};

/*
 * When buckets 2i and 2i + 1 merge into bucket i (the series is full), the
 * half of an event that was in half h: the merged high-water mark is the
 * higher of theirs (the first on a tie), x_wins[i] when that is 2i's.
 * MP_NONE stays MP_NONE. HTML reports merge buckets the same way.
 */
uint32_t mp_analysis_merged_half(uint32_t h, const bool *x_wins);

struct mp_analysis_private;

struct mp_analysis {
	struct mp_analysis_opts opts;
	/* Metadata. */
	struct mp_header header;        /* a copy of the capture's header */
	struct mp_trailer trailer;      /* trailer.present is false for a cut capture */
	bool attached;                  /* mode attach, or an ATTACH record: "since attach" */
	uint64_t attach_time_us;
	bool detached;
	uint64_t detach_time_us;
	/*
	 * The header's flag "aggregated": slots, totals and samples come from
	 * AGG_* records (memprof run --aggregate), with no events; the temporary
	 * view, MP_ANALYSIS_TEMPORAL and MP_ANALYSIS_NO_MMAP cannot be answered.
	 */
	bool aggregated;
	/* Its AGG_TOTALS record was read (written at the end: one cut short has none). */
	bool agg_totals;
	bool has_exit_marker;           /* an EXIT record: the argument of exit() */
	int64_t exit_marker_status;
	uint64_t n_forks;
	uint64_t duration_us;           /* trailer's, else the last time seen */
	uint64_t n_records, n_events;
	uint64_t n_ticks;
	/* Tables; locations and strings grow during the pass. */
	struct mp_strtab strings;
	struct mp_location *locs;
	size_t nlocs, locs_alloc;
	struct mp_module *modules;
	size_t nmodules, modules_alloc;
	struct mp_thread *threads;
	size_t nthreads, threads_alloc;
	struct mp_slot *slots;
	size_t nslots, slots_alloc;
	size_t ntraces;                 /* trace nodes 1..ntraces (node 0 is the root) */
	/*
	 * The location "[python interpreter]", made with the first Python
	 * frame: where folded stacks (mp_analysis_view_stack()) without one
	 * gather. MP_NONE in captures without Python frames.
	 */
	uint32_t interpreter_loc;
	/*
	 * The processes: one per capture (so one unless read with
	 * mp_analysis_read_files()). With several, header and trailer are
	 * process 0's and duration_us spans them all.
	 */
	struct mp_process *processes;
	size_t nprocesses;
	/* The FORK records: the process (index) that forked and the child's pid. */
	struct mp_fork { uint32_t process; uint64_t pid; bool followed; } *forks;
	size_t nforks, forks_alloc;
	/* Results. */
	struct mp_totals totals;
	struct mp_kind_totals *kinds;   /* by kind number, sorted */
	size_t nkinds, kinds_alloc;
	struct mp_sample *samples;
	size_t nsamples, samples_alloc;
	uint64_t ticks_per_sample;      /* downsampling stride */
	struct mp_interval *intervals;  /* MP_ANALYSIS_TEMPORAL, after finish */
	size_t nintervals;
	bool finished;
	/*
	 * Sampled captures (memprof run --sampling-interval): the largest
	 * interval among the captures read, 0 when every event of each was
	 * recorded; and whether they differ (sampled and not, or at different
	 * intervals). Each capture's blocks are weighed by its own interval:
	 * every count and byte above is then an estimate (estimate.c).
	 */
	uint64_t sampling_interval;
	bool sampling_mixed;
	struct mp_analysis_private *p;  /* the pass's state: live blocks, mappings, maps */
};

/*
 * What one block of size bytes recorded in a capture sampled every
 * interval bytes stands for: 1/(1 - e^(-(size+1)/interval)) blocks (and
 * that many times its bytes); 1 from interval bytes up, or at interval 0.
 */
double mp_sampling_weight(uint64_t size, uint64_t interval);
/*
 * The relative standard error of an estimate of bytes made of blocks much
 * smaller than the interval: sqrt(interval / bytes) (0 at interval 0).
 * Larger blocks make it smaller; blocks of the interval and up add none.
 */
double mp_sampling_error(uint64_t interval, uint64_t bytes);
/* Whether a's figures are estimates (a capture of it was sampled). */
static inline bool mp_analysis_estimated(const struct mp_analysis *a)
{
	return a->sampling_interval != 0;
}

void mp_analysis_init(struct mp_analysis *a, const struct mp_analysis_opts *opts);
void mp_analysis_release(struct mp_analysis *a);

/*
 * Feed one record, in stream order; the first must be the header
 * (mp_reader_open() returns it separately: pass mp_reader_header() to
 * mp_analysis_header()). Records are decoded by lib/capture.
 */
void mp_analysis_header(struct mp_analysis *a, const struct mp_header *h);
void mp_analysis_record(struct mp_analysis *a, const struct mp_record *rec);
/*
 * End the pass: computes each slot's peak and site, leaks, the final time
 * series point and the intervals, and frees the pass's working memory.
 * Records fed afterwards are ignored.
 */
void mp_analysis_finish(struct mp_analysis *a);

/*
 * Feed every record of an open reader, then finish. Returns 0 when the
 * capture was read whole, 1 when it was truncated or corrupt after its
 * header (what came before was analysed; the reason is in *warn, one line).
 */
int mp_analysis_read(struct mp_analysis *a, struct mp_reader *r, struct strbuf *warn);
/*
 * Open path and mp_analysis_read() it. Returns -1 when it cannot be opened
 * or is not a readable capture (the reader's one-line reason in *err), else
 * as mp_analysis_read() (a warning in *err).
 */
int mp_analysis_read_file(struct mp_analysis *a, const char *path, struct strbuf *err);

/*
 * Analyse the captures at paths[0..n) as one: the processes of a process
 * tree (memprof(1) "SEVERAL CAPTURES"). Their records are read in the
 * order of time, a tick's worth at a time from the process furthest behind,
 * so the heap is the sum of theirs at each moment and its peak that of the
 * sum; a process's blocks live when it ended are its leaks and leave the
 * heap then. Stacks that show the same frames are one, whatever process
 * made them. One capture is read as mp_analysis_read_file() does. Returns
 * -1 when a capture cannot be opened or is not readable (the reason, naming
 * it, in *err), 1 when some were cut short (a line each in *err), else 0.
 * Aggregated captures cannot be read with others (-1).
 */
int mp_analysis_read_files(struct mp_analysis *a, const char *const *paths, size_t n,
			   struct strbuf *err);

/*
 * Whether the captures whose headers are h[0..n) make one process tree
 * (they name one family, or each names as its parent the pid of another)
 * or are all of one program; else false with why, one line, naming them
 * by paths.
 */
bool mp_analysis_one_family(const struct mp_header *const *h, const char *const *paths, size_t n,
			    struct strbuf *why);

/*
 * The captures of root's family (memprof run --follow-fork): root and
 * those next to it (root.PID, root.PID.N) that name its family, or, in
 * captures older than family ids, that a followed child of its wrote; the
 * later captures of one process (memprof ctl start) are not its children.
 * Appends their paths (new strings) to *paths; returns how many were
 * added, or -1 with a one-line reason in *err (root unreadable, or not
 * recorded with --follow-fork).
 */
int mp_family_find(const char *root, char ***paths, size_t *npaths, size_t *alloc,
		   struct strbuf *err);
/*
 * Children forked by the processes of a (FORK records of captures written
 * with --follow-fork) that are none of its processes: their pids into
 * *pids (allocated), how many returned.
 */
size_t mp_analysis_missing_children(const struct mp_analysis *a, uint64_t **pids);

/* A process's name: "<command> (pid <pid>)". */
void mp_analysis_process_label(const struct mp_analysis *a, uint32_t process, struct strbuf *sb);
/*
 * A short name for a command line: the last component of argv[0], and for
 * an interpreter (python, perl, sh, node...) its script's too, e.g.
 * "python3 mp.py"; "?" when there is none.
 */
void mp_process_command_name(char *const *argv, size_t argc, const char *exe, struct strbuf *sb);

/*
 * The state of the pass so far (or its result, once finished) as the records
 * of an aggregated capture: a THREAD record per thread (numbered anew), an
 * AGG_SLOT per slot, then the totals, histogram, kinds, threads' totals and
 * time series. Each record goes to emit, whole. The analysis must have been
 * made with MP_ANALYSIS_SPLIT_THREADS, so each slot has its thread.
 */
void mp_aggregate_emit(const struct mp_analysis *a,
		       void (*emit)(void *ctx, const uint8_t *rec, size_t len), void *ctx);

/* Lookups. */
static inline const struct mp_location *mp_analysis_location(const struct mp_analysis *a,
							     uint32_t loc)
{
	return &a->locs[loc];
}
static inline const char *mp_analysis_string(const struct mp_analysis *a, uint32_t id)
{
	return mp_strtab_get(&a->strings, id);
}
/* The parent of a trace node (0 for the root's children). */
uint32_t mp_analysis_parent(const struct mp_analysis *a, uint32_t node);
/*
 * The locations of a trace node's own instruction pointer, innermost
 * (inlined) first: one or more. Node 0 (no stack) has MP_LOCATION_NO_STACK.
 */
size_t mp_analysis_node_frames(const struct mp_analysis *a, uint32_t node, const uint32_t **locs);
/*
 * The instruction pointer of a trace node as recorded (a return address) in
 * *ip and the module that contained it in *module (an index into a->modules,
 * or MP_NONE). Returns a number from 1 that nodes share exactly when they
 * have the same ip in the same load of its module (exporters number their
 * addresses with it), or 0 for node 0, which has no ip.
 */
uint32_t mp_analysis_node_ip(const struct mp_analysis *a, uint32_t node, uint64_t *ip,
			     uint32_t *module);
/*
 * Append the locations of the whole stack ending at trace node `stack`,
 * innermost first, to *buf (grown as needed); returns how many.
 */
size_t mp_analysis_stack(const struct mp_analysis *a, uint32_t stack, uint32_t **buf,
			 size_t *alloc);
/*
 * Whether reports fold this analysis' stacks: it has Python frames and was
 * not made with MP_ANALYSIS_ALL_FRAMES.
 */
bool mp_analysis_folds(const struct mp_analysis *a);
/* Whether a frame is left out of folded stacks: the interpreter's, or start-up's. */
static inline bool mp_location_folded(const struct mp_location *l)
{
	return (l->flags & (MP_LOC_INTERPRETER | MP_LOC_STARTUP)) != 0;
}
/*
 * The frames of the stack ending at trace node `stack` as reports show
 * them, innermost first, into *buf (grown as needed); returns how many (at
 * least 1). That is mp_analysis_stack(), except when mp_analysis_folds():
 * then the folded frames are left out, and a stack with the interpreter's
 * frames but no Python frame (start-up, finalization, garbage collection)
 * ends, outermost, at a->interpreter_loc. A stack that would have no frame
 * left keeps all of them.
 */
size_t mp_analysis_view_stack(const struct mp_analysis *a, uint32_t stack, uint32_t **buf,
			      size_t *alloc);
/*
 * The allocation site of a stack, among the frames mp_analysis_view_stack()
 * shows: its innermost frame that is none of a runtime module's, plumbing
 * or the <stack truncated> mark; else a->interpreter_loc for a folded
 * stack that ends there; else its innermost frame shown. With
 * MP_ANALYSIS_RAW_LEAF: its innermost frame shown. Complete after
 * mp_analysis_finish(); slot.site holds it for each slot.
 */
uint32_t mp_analysis_site(const struct mp_analysis *a, uint32_t stack);
/*
 * The same from the frames of a stack as mp_analysis_view_stack() gives
 * them (innermost first, n >= 1): their first frame that is none of a
 * runtime module's, plumbing or the <stack truncated> mark
 * (a->interpreter_loc is none of them), else the first; with
 * MP_ANALYSIS_RAW_LEAF the first. For views made during the pass.
 */
uint32_t mp_analysis_site_in(const struct mp_analysis *a, const uint32_t *shown, size_t n);
/*
 * The innermost Python frame of a stack whose site is a native frame (a C
 * extension or library called from Python), else MP_NONE. After
 * mp_analysis_finish(); slot.caller holds it for each slot.
 */
uint32_t mp_analysis_caller(const struct mp_analysis *a, uint32_t stack);
/* The name shown for a thread: "0x<tid> (<name>)", "merged thread" (into sb). */
void mp_analysis_thread_label(const struct mp_analysis *a, uint32_t thread, struct strbuf *sb);

enum mp_location_style {
	MP_LOC_STYLE_COLON,  /* "function:file:line" (memray's stats); "function" without a file */
	MP_LOC_STYLE_AT,     /* "function at file:line" */
	MP_LOC_STYLE_AT_FILE /* "function at file" (summary: no line) */
};
/* Append a location in a style; line 0 and unknown files are left out. */
void mp_location_format(const struct mp_analysis *a, uint32_t loc, enum mp_location_style style,
			struct strbuf *sb);
/* The module path of a location, or "<unknown>". */
const char *mp_location_module(const struct mp_analysis *a, uint32_t loc);

/*
 * Flat aggregations of the slots: group them by any of the fields below
 * (those not grouped on are MP_NONE in the rows) and sum a view's counts.
 * Rows with a zero count are left out. Used for stats' top lists, the table
 * report's rows (site | kind | thread) and tree's biggest stacks.
 */
enum mp_group_by {
	MP_BY_STACK = 1 << 0,
	MP_BY_SITE = 1 << 1,      /* the slot's allocation site location (and its caller) */
	MP_BY_MODULE = 1 << 2,    /* the site's module */
	MP_BY_KIND = 1 << 3,
	MP_BY_THREAD = 1 << 4,    /* needs MP_ANALYSIS_SPLIT_THREADS to mean anything */
	MP_BY_PROCESS = 1 << 5,   /* needs MP_ANALYSIS_SPLIT_PROCESSES to mean anything */
};

struct mp_group_row {
	uint32_t stack, site, module, kind, thread, process;
	uint32_t caller;          /* with MP_BY_SITE: the site's Python caller (slot.caller) */
	struct mp_counts c;
};

enum mp_sort_key { MP_SORT_BYTES, MP_SORT_COUNT };

/*
 * Fill *rows (allocated; the caller frees it) and return how many, sorted by
 * key, descending, ties broken by the other count, then by the grouped
 * fields, so output is deterministic.
 */
size_t mp_analysis_group(const struct mp_analysis *a, enum mp_view view, unsigned by,
			 enum mp_sort_key key, struct mp_group_row **rows);
/* Sort rows as mp_analysis_group() does, by another key. */
void mp_group_sort(struct mp_group_row *rows, size_t n, enum mp_sort_key key);

/* Totals of a view over every slot. */
struct mp_counts mp_analysis_view_total(const struct mp_analysis *a, enum mp_view view);
/* The totals entry of a kind, or NULL. */
const struct mp_kind_totals *mp_analysis_kind(const struct mp_analysis *a, uint32_t kind);

#endif
