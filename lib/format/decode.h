/*
 * The capture record decoder: the records of man/memprof-capture.5 as C
 * structures, and a decoder that turns bytes into them one record at a time,
 * keeping the stream's state (per-thread deltas, trace-node numbering). The
 * streaming reader (lib/format/reader.h) and the collector on a live stream
 * use it; allocator kinds are named here too.
 */
#ifndef MEMPROF_LIB_FORMAT_DECODE_H
#define MEMPROF_LIB_FORMAT_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/format/encode.h"
#include "lib/format/format.h"
#include "lib/util/hash.h"
#include "lib/util/strbuf.h"

/* Name of an allocator kind ("malloc", "munmap"...), or "kind#N" for unknown ones. */
const char *mp_kind_name(unsigned kind);
/* The kind with this name, or -1. */
int mp_kind_from_name(const char *name);
struct mp_header {
	unsigned major, minor;
	uint64_t pid, ppid, main_tid;
	uint64_t start_time_us;     /* Unix epoch */
	uint64_t page_size, mode, max_depth, interval_ms, flags;
	uint64_t machine, pointer_size, forked_from;
	uint64_t family;            /* 0 when the capture names none */
	uint64_t sampling_interval; /* 0: every event recorded; N: sampled, one per N bytes */
	char *parent_capture;       /* the parent's capture's file name, or NULL */
	char *exe, *hostname, *cwd, *tracker_version;
	char **argv;                /* argc strings, NULL-terminated */
	size_t argc;
};

struct mp_trailer {
	bool present;
	bool has_exit_code, has_exit_signal;
	int exit_code, exit_signal, core_dumped;
	uint64_t end_time_us, duration_us, end_reason;
	uint64_t n_allocs, n_frees, bytes_allocated, n_traces, n_symbols, n_records, n_lost;
	uint64_t n_libunwind;
};

/* Markers (ATTACH, DETACH, FORK, LOST, EXIT, MESSAGE, UNWIND): which fields are set. */
enum mp_marker_has {
	MP_HAS_TIME = 1 << 0, MP_HAS_RSS = 1 << 1, MP_HAS_HEAP_ARENA = 1 << 2,
	MP_HAS_HEAP_IN_USE = 1 << 3, MP_HAS_CHILD_PID = 1 << 4, MP_HAS_COUNT = 1 << 5,
	MP_HAS_STATUS = 1 << 6, MP_HAS_TEXT = 1 << 7, MP_HAS_LEVEL = 1 << 8,
};

struct mp_marker {
	unsigned has;
	uint64_t time_us, rss, heap_arena, heap_in_use, child_pid, count, level;
	int64_t status;
	const char *text;
	size_t text_len;
};

struct mp_segment {
	uint64_t vaddr, memsz; /* p_vaddr and p_memsz: mapped at base + vaddr */
	uint32_t flags;        /* PF_R | PF_W | PF_X */
};

struct mp_frame {
	uint64_t function, file; /* string ids, 0 for unknown */
	uint32_t line, column;
};

enum mp_rec_type {
	MP_REC_HEADER = 1, MP_REC_TRAILER, MP_REC_ALLOC, MP_REC_FREE, MP_REC_TRACE,
	MP_REC_TICK, MP_REC_THREAD, MP_REC_MODULE, MP_REC_MODULE_UNLOAD, MP_REC_STRING,
	MP_REC_SYMBOL, MP_REC_ATTACH, MP_REC_DETACH, MP_REC_FORK, MP_REC_LOST,
	MP_REC_EXIT, MP_REC_MESSAGE, MP_REC_SWITCH, MP_REC_UNKNOWN, MP_REC_SNAPSHOT, MP_REC_UNWIND,
};

/* One decoded record. Pointers stay valid until the next decode call. */
struct mp_record {
	enum mp_rec_type type;
	uint32_t thread;              /* ALLOC, FREE, SWITCH: the thread index in effect */
	union {
		struct {
			uint32_t kind;
			bool ranged;          /* FREE: size is the range length */
			bool serial;          /* addr is MP_SERIAL_ADDR(serial number) */
			uint64_t addr, size, stack;
		} ev;                         /* ALLOC, FREE */
		struct { uint64_t index, parent, ip; } trace;
		/* time since start; at: a stream's TICK_AT (its bytes are not a TICK's) */
		struct { uint64_t time_us, delta_us, rss; bool at; } tick;
		struct { uint32_t index; uint64_t tid; const char *name; size_t name_len; } thread;
		struct {
			uint64_t id, base;
			const char *path;
			size_t path_len;
			const uint8_t *build_id;
			size_t build_id_len, nseg;
			const struct mp_segment *seg;
		} module;
		struct { uint64_t id; } unload;
		struct { uint64_t id; const char *text; size_t len; } string;
		struct {
			uint64_t ip, module, offset;
			size_t nframes;                 /* innermost (inlined) frame first */
			const struct mp_frame *frames;
		} symbol;
		struct mp_marker marker;        /* ATTACH ... MESSAGE */
		const struct mp_header *header;
		const struct mp_trailer *trailer;
		struct { unsigned tag; size_t len; const uint8_t *data; } unknown;
	} u;
};

/*
 * The decoder: stream state (per-thread deltas, trace-node numbering) and a
 * function that decodes one record from a buffer. Used by the reader and by
 * the collector on the live stream.
 */
/* 3.0: an allocation class, what an ALLOC_REF record allocates. */
struct mp_class {
	uint64_t size, stack;
	uint32_t kind;
};

struct mp_decoder {
	struct mp_enc_thread *threads;
	size_t nthreads;
	uint32_t cur_thread;
	uint64_t n_traces, last_ip, time_us;
	uint64_t last_rss;            /* of the latest tick, for TICK_DELTA (3.0) */
	bool rss_known;
	uint64_t n_seq;               /* blocks allocated by number so far */
	uint64_t last_freed;          /* the number of the latest block freed by number */
	struct mp_class *classes;     /* 3.0: defined by ALLOC_SEQ records */
	size_t nclasses, classes_alloc;
	uint64_t n_strings;           /* STRING records so far (3.0 numbers them implicitly) */
	struct mp_intmap module_base; /* 3.0: module id -> the base of its MODULE record */
	bool seen_header;
	struct mp_header header;
	struct mp_trailer trailer;
	struct mp_segment *seg;
	size_t seg_alloc;
	struct mp_frame *frames;
	size_t frames_alloc;
	struct strbuf err;
};

void mp_decoder_init(struct mp_decoder *d);
void mp_decoder_release(struct mp_decoder *d);
/*
 * Check the preamble (magic and version) at the start of a stream. Returns
 * the bytes it takes, 0 when buf is too short, -1 when it is not a capture
 * or has a newer major version (message in d->err).
 */
ssize_t mp_decode_preamble(struct mp_decoder *d, const uint8_t *buf, size_t len);
/*
 * Decode one record at buf. Returns its length, 0 when buf holds only part
 * of a record (nothing is consumed; call again with more data), or -1 when
 * the bytes are not a valid record (message in d->err). BLOCK records are
 * returned as MP_REC_UNKNOWN with tag MP_TAG_BLOCK; the reader opens them.
 */
ssize_t mp_decode(struct mp_decoder *d, const uint8_t *buf, size_t len, struct mp_record *rec);

void mp_header_release(struct mp_header *h);

#endif
