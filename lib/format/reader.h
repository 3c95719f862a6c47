/*
 * The streaming reader of capture files: it reads a capture from a file or a
 * pipe, opens its compressed blocks and decodes it record by record (with
 * lib/format/decode.h), keeping its string table. The format is specified in
 * man/memprof-capture.5.
 */
#ifndef MEMPROF_LIB_FORMAT_READER_H
#define MEMPROF_LIB_FORMAT_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/format/decode.h"
#include "lib/format/fields.h"
#include "lib/util/strbuf.h"

enum mp_read_status {
	MP_READ_OK = 0,        /* so far, or the stream ended cleanly */
	MP_READ_TRUNCATED,     /* the stream ended inside a record */
	MP_READ_CORRUPT,       /* invalid bytes after a valid header */
};

struct mp_readahead;

/*
 * What a reading thread hands over (lib/format/readahead.h): records of the
 * file as they are (block false: whole records, but for the file's last
 * bytes), or a block's records (block true), from file offset `offset`;
 * or the end of the stream (end), with the reason when a block is damaged
 * or the file cannot be read (error).
 */
struct mp_chunk {
	const uint8_t *p;
	size_t len, pos;
	uint64_t offset, end_offset; /* of the first byte, and the file offset after the segment */
	bool block, end;
	const char *error;
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
	void *sdctx[MP_FS_COUNT]; /* codec 3: each field stream's zstd stream, continued block to block */
	struct mp_decoder dec;
	char **strings;        /* string table, by id */
	size_t nstrings, strings_alloc;
	uint64_t n_records;
	struct mp_readahead *ra;   /* the thread that opens blocks ahead (mp_reader_read_ahead()) */
	struct mp_chunk seg;       /* what it handed over last */
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
/*
 * For a reader that reads the capture at path twice ("-", /dev/stdin or a
 * pipe included): a descriptor that lseek() can take back to the start, the
 * file itself when it can, else a copy of what the pipe holds in an unnamed
 * temporary file ($TMPDIR, else /tmp). -1 with a one-line reason in err.
 */
int mp_reader_rewindable(const char *path, struct strbuf *err);
void mp_reader_release(struct mp_reader *r);
/*
 * Next record: 1 when rec is filled, 0 at the end. At the end, r->status
 * tells whether the stream was whole; if not, r->err says where and why.
 * Everything before the damage has been returned.
 */
int mp_reader_next(struct mp_reader *r, struct mp_record *rec);
/*
 * Up to max records into recs, as mp_reader_next() would give them one by
 * one, but stopping after a record that points to data (a string, a
 * module, a symbol...: the next call may reuse it); 0 at the end.
 */
size_t mp_reader_read(struct mp_reader *r, struct mp_record *recs, size_t max);
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
/*
 * From here on, a thread reads the file and opens its blocks ahead of
 * mp_reader_next(), which only decodes: the records are the same. Returns
 * 0, or -1 (errno set) when no thread can be started: reading stays as it
 * was. mp_reader_release() stops the thread.
 */
int mp_reader_read_ahead(struct mp_reader *r);
/* Bytes of the file consumed so far, for progress. */
static inline uint64_t mp_reader_offset(const struct mp_reader *r)
{
	return r->ra ? r->seg.end_offset : r->offset + r->buf_pos;
}

#endif
