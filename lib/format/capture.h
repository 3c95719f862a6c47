/*
 * Capture files: a writer that produces them in one forward pass and a
 * streaming reader that decodes them record by record from a file or a pipe.
 * The format is specified in man/memprof-capture.5.
 */
#ifndef MEMPROF_LIB_FORMAT_CAPTURE_H
#define MEMPROF_LIB_FORMAT_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/format/encode.h"
#include "lib/format/fields.h"
#include "lib/format/format.h"
#include "lib/util/hash.h"
#include "lib/util/strbuf.h"

/* Name of an allocator kind ("malloc", "munmap"...), or "kind#N" for unknown ones. */
const char *mp_kind_name(unsigned kind);
/* The kind with this name, or -1. */
int mp_kind_from_name(const char *name);
/* True for kinds whose events are ranges of pages (mmap family). */
bool mp_kind_is_mapping(unsigned kind);

struct mp_header {
	unsigned major, minor;
	uint64_t pid, ppid, main_tid;
	uint64_t start_time_us;     /* Unix epoch */
	uint64_t page_size, mode, max_depth, interval_ms, flags;
	uint64_t machine, pointer_size, forked_from;
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
};

/* Markers (ATTACH, DETACH, FORK, LOST, EXIT, MESSAGE): which fields are set. */
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
	MP_REC_EXIT, MP_REC_MESSAGE, MP_REC_SWITCH, MP_REC_UNKNOWN,
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
		struct { uint64_t time_us, delta_us, rss; } tick; /* time since start */
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
struct mp_decoder {
	struct mp_enc_thread *threads;
	size_t nthreads;
	uint32_t cur_thread;
	uint64_t n_traces, last_ip, time_us;
	uint64_t n_seq;               /* ALLOC_SEQ records so far */
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

enum mp_read_status {
	MP_READ_OK = 0,        /* so far, or the stream ended cleanly */
	MP_READ_TRUNCATED,     /* the stream ended inside a record */
	MP_READ_CORRUPT,       /* invalid bytes after a valid header */
};

struct mp_reader {
	int fd;
	bool own_fd;
	char *name;
	uint8_t *buf;          /* bytes read from fd, not yet decoded */
	size_t buf_pos, buf_len, buf_alloc;
	bool eof;
	uint64_t offset;       /* file offset of buf[buf_pos] */
	uint64_t file_size;    /* 0 when unknown (a pipe) */
	uint8_t *fields;       /* a codec 2 BLOCK's field streams, decompressed */
	size_t fields_alloc;
	uint8_t *block;        /* decompressed BLOCK being decoded */
	size_t block_pos, block_len, block_alloc;
	uint64_t block_offset; /* file offset of the BLOCK record */
	void *dctx;
	struct mp_decoder dec;
	char **strings;        /* string table, by id */
	size_t nstrings, strings_alloc;
	uint64_t n_records;
	enum mp_read_status status;
	struct strbuf err;     /* why open failed, or why reading stopped */
};

/*
 * Open a capture ("-" is standard input) and read its header. Returns 0, or
 * -1 with a one-line reason in r->err; mp_reader_release() must be called
 * either way.
 */
int mp_reader_open(struct mp_reader *r, const char *path);
/* As mp_reader_open() on an open descriptor; name is used in messages. */
int mp_reader_open_fd(struct mp_reader *r, int fd, const char *name);
void mp_reader_release(struct mp_reader *r);
/*
 * Next record: 1 when rec is filled, 0 at the end. At the end, r->status
 * tells whether the stream was whole; if not, r->err says where and why.
 * Everything before the damage has been returned.
 */
int mp_reader_next(struct mp_reader *r, struct mp_record *rec);
static inline const struct mp_header *mp_reader_header(const struct mp_reader *r)
{
	return &r->dec.header;
}
static inline const struct mp_trailer *mp_reader_trailer(const struct mp_reader *r)
{
	return &r->dec.trailer;
}
/* A string by id, or NULL for 0 and unknown ids. */
const char *mp_reader_string(const struct mp_reader *r, uint64_t id);
/* Bytes of the file consumed so far, for progress. */
static inline uint64_t mp_reader_offset(const struct mp_reader *r)
{
	return r->offset + r->buf_pos;
}

enum mp_writer_flags {
	MP_WRITER_FORCE = 1 << 0,     /* overwrite an existing file */
	MP_WRITER_NO_COMPRESS = 1 << 1,
	MP_WRITER_ONE_FRAME = 1 << 2, /* blocks of codec 1 (one zstd frame), not field streams */
	/*
	 * Heap blocks named by serial number (ALLOC_SEQ, FREE_SEQ), not by
	 * address: smaller captures, and nothing in a report needs the address.
	 */
	MP_WRITER_SERIALS = 1 << 3,
};

struct mp_writer {
	int fd;
	char *path;
	unsigned flags;
	uint8_t *raw;          /* scratch: a record being encoded, or the block joined */
	size_t raw_alloc;
	uint8_t *out;          /* compressed block */
	size_t out_alloc;
	struct mp_fields fields;      /* the block being built, as field streams */
	struct mp_intmap serials;     /* MP_WRITER_SERIALS: live heap address -> serial */
	uint64_t n_seq;               /* serial numbers given */
	size_t hot_check;             /* when the tag stream is this long, check the block's size */
	void *cctx;
	int errnum;            /* first write error, sticky */
	/* Encoder state, for records written through the event functions. */
	struct mp_enc_thread *threads;
	size_t nthreads;
	uint32_t cur_thread;
	uint64_t n_traces, last_ip, last_tick_us, n_strings;
	/* Totals for the trailer. */
	uint64_t n_allocs, n_frees, bytes_allocated, n_symbols, n_records;
	uint64_t bytes_written;
};

/*
 * Create path for writing (refusing to overwrite unless MP_WRITER_FORCE) and
 * write the preamble. Returns 0 or -1 with errno set.
 */
int mp_writer_open(struct mp_writer *w, const char *path, unsigned flags);
int mp_writer_fdopen(struct mp_writer *w, int fd, const char *name, unsigned flags);
/* Finish: flush, fsync-free close. Returns 0 or -1 with errno of the first error. */
int mp_writer_close(struct mp_writer *w);
/* Compress and write the records buffered so far. Returns 0 or -1. */
int mp_writer_flush(struct mp_writer *w);

void mp_writer_header(struct mp_writer *w, const struct mp_header *h);
void mp_writer_trailer(struct mp_writer *w, const struct mp_trailer *t);
/*
 * Append already-encoded records (a tracker's stream after its preamble and
 * header). A writer fed this way must not also use the event functions
 * below, whose delta state would disagree with the stream's.
 */
void mp_writer_raw(struct mp_writer *w, const void *records, size_t len);

void mp_writer_thread(struct mp_writer *w, uint32_t index, uint64_t tid, const char *name);
void mp_writer_alloc(struct mp_writer *w, uint32_t thread, unsigned kind, uint64_t addr,
		     uint64_t size, uint64_t stack);
void mp_writer_free(struct mp_writer *w, uint32_t thread, unsigned kind, uint64_t addr);
/*
 * The same by serial number, whatever the flags: an allocation (kind < 16)
 * that returns its serial, and the free of a block by serial (< the serials
 * given so far).
 */
uint64_t mp_writer_alloc_seq(struct mp_writer *w, uint32_t thread, unsigned kind, uint64_t size,
			     uint64_t stack);
void mp_writer_free_seq(struct mp_writer *w, uint32_t thread, unsigned kind, uint64_t serial);
void mp_writer_free_range(struct mp_writer *w, uint32_t thread, unsigned kind, uint64_t addr,
			  uint64_t size);
/* Append a trace-tree node and return its index (1, 2, ...). */
uint64_t mp_writer_trace(struct mp_writer *w, uint64_t parent, uint64_t ip);
void mp_writer_tick(struct mp_writer *w, uint64_t time_us, uint64_t rss);
void mp_writer_module(struct mp_writer *w, uint64_t id, uint64_t base, const char *path,
		      const uint8_t *build_id, size_t build_id_len,
		      const struct mp_segment *seg, size_t nseg);
void mp_writer_module_unload(struct mp_writer *w, uint64_t id);
/* Append a string and return its id (1, 2, ...). */
uint64_t mp_writer_string(struct mp_writer *w, const char *s, size_t len);
void mp_writer_symbol(struct mp_writer *w, uint64_t ip, uint64_t module, uint64_t offset,
		      const struct mp_frame *frames, size_t nframes);
/* tag is one of ATTACH, DETACH, FORK, LOST, EXIT, MESSAGE. */
void mp_writer_marker(struct mp_writer *w, unsigned tag, const struct mp_marker *m);

/* Encode a marker record into buf (room for 64 + text_len bytes); returns the end. */
uint8_t *mp_encode_marker(uint8_t *buf, unsigned tag, const struct mp_marker *m);
/* Encode a header record; the caller owns the returned buffer. */
uint8_t *mp_encode_header(const struct mp_header *h, size_t *len);

#endif
