/*
 * The writer of capture files: it produces a capture in one forward pass,
 * records grouped into compressed blocks, from records encoded by its event
 * functions or already encoded by a tracker. Also the encoders of the header
 * and marker records. The format is specified in man/memprof-capture.5.
 */
#ifndef MEMPROF_LIB_FORMAT_WRITER_H
#define MEMPROF_LIB_FORMAT_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/format/decode.h"
#include "lib/format/encode.h"
#include "lib/format/fields.h"
#include "lib/util/hash.h"

enum mp_writer_flags {
	MP_WRITER_FORCE = 1 << 0,     /* overwrite an existing file */
	MP_WRITER_NO_COMPRESS = 1 << 1,
	MP_WRITER_ONE_FRAME = 1 << 2, /* blocks of codec 1 (one zstd frame), not field streams */
	/*
	 * Heap blocks named by serial number (ALLOC_SEQ, FREE_SEQ), not by
	 * address: smaller captures, and nothing in a report needs the address.
	 */
	MP_WRITER_SERIALS = 1 << 3,
	/*
	 * Format 3.0, as memprof wrote before 4.0 (codec 3 blocks: sizes and
	 * stack deltas as whole varints): for tests that older files still read.
	 */
	MP_WRITER_FORMAT3 = 1 << 4,
};

#define MP_WRITER_STALL_MS 2000

struct mp_class_slot {
	uint64_t size, stack;
	uint32_t kind, idx1;
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
	uint64_t last_freed;          /* the serial freed by number last */
	/*
	 * The allocation classes (kind, size, stack) defined so far, by open
	 * addressing: each slot holds its class and its number + 1 (0: empty),
	 * so that a lookup touches one place, mostly not in the cache.
	 */
	struct mp_class_slot *class_slots;
	size_t class_cap, nclasses;   /* (class_cap: a power of two, or 0) */
	/* Once every class is defined: lookups and hits in this window, and the lookup stride. */
	uint32_t class_lookups, class_hits, class_stride, class_skipped;
	size_t hot_check;             /* when the tag stream is this long, check the block's size */
	void *cctx;                   /* one-frame blocks */
	void *scctx[MP_FS_COUNT];     /* the field streams' zstd streams, continued block to block */
	int errnum;            /* first write error, sticky */
	/*
	 * An output opened non-blocking (one that may take nothing for a
	 * while: a FIFO, a device) is waited for; once this descriptor (-1:
	 * none) is readable (memprof was told to stop), for MP_WRITER_STALL_MS
	 * at most: then the writing fails with ECANCELED.
	 */
	int cancel_fd;
	uint32_t waited;       /* intervals the block being built has waited (mp_writer_flush) */
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
/*
 * The end of an interval (the collector's ticks): the records buffered so
 * far go out as a block, unless they are under 16 KiB and have waited fewer
 * than 100 intervals. A block costs some 40 bytes of headers, more than an
 * idle interval's records; a busy program's blocks are not kept waiting.
 * Close and snapshot write everything. Returns 0 or -1 with errno.
 */
int mp_writer_flush(struct mp_writer *w);

void mp_writer_header(struct mp_writer *w, const struct mp_header *h);
void mp_writer_trailer(struct mp_writer *w, const struct mp_trailer *t);
/*
 * A snapshot: everything written so far (the current block flushed), then
 * extra (extra_len bytes of whole records, such as an aggregated capture's
 * totals so far; may be NULL) and trailer t, as a capture of its own at path;
 * the capture goes on. 0, or -1 with errno.
 */
int mp_writer_snapshot(struct mp_writer *w, const char *path, const uint8_t *extra,
		       size_t extra_len, const struct mp_trailer *t);
/*
 * Append already-encoded records (a tracker's stream after its preamble and
 * header). A writer fed this way must not also use the event functions
 * below, whose delta state would disagree with the stream's; and the
 * records must hold no STRING nor SYMBOL, which 3.0 numbers and encodes
 * from the writer's own state (mp_writer_string(), mp_writer_symbol()).
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

/* What mp_writer_events() took from a tracker's stream, added to the caller's counts. */
struct mp_writer_fed {
	uint64_t records, allocs, frees, bytes;
};
/*
 * A tracker's event records (buf, len bytes of its stream after the header,
 * which d decodes) written into w as mp_decode() and then mp_writer_alloc()
 * or mp_writer_free() would write them, d's state kept as mp_decode()
 * keeps it, without a struct mp_record each: the collector's hot path, for
 * a writer of MP_WRITER_SERIALS. Returns the bytes it took: it stops at the
 * first record that is no allocation or free of a heap kind below 16 nor a
 * THREAD_SWITCH to a known thread, at one it would have to check more
 * closely (mp_decode() then decodes it, or says what is wrong with it),
 * and a few dozen bytes before the end of buf.
 */
size_t mp_writer_events(struct mp_writer *w, struct mp_decoder *d, const uint8_t *buf, size_t len,
			struct mp_writer_fed *fed);
/* Whether mp_writer_events() may take a record with this tag (what it writes comes after what is in w). */
static inline bool mp_writer_events_tag(uint8_t tag)
{
	return (unsigned)(tag - MP_TAG_ALLOC) < 0x20 || tag == MP_TAG_THREAD_SWITCH;
}
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
