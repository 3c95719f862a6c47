/*
 * Fuzz target: the capture reader, every record type of every format
 * version, as `memprof parse --stacks` reads it (a pass for the stacks,
 * then every record as text), and as the analysis reads it (in batches, a
 * thread opening the blocks ahead). Both ways must give the same records,
 * and the same end.
 */
#include <config.h>

#include <string.h>

#include "lib/format/dump.h"
#include "lib/format/reader.h"
#include "lib/util/hash.h"
#include "lib/util/strbuf.h"
#include "tests/fuzz/fuzz.h"

struct pass {
	uint64_t records, digest;
	enum mp_read_status status;
	struct strbuf err;
};

static void add_line(struct pass *p, const struct strbuf *line)
{
	p->records++;
	p->digest = mp_hash_combine(p->digest, mp_hash_bytes(line->buf, line->len));
}

static void end_pass(struct pass *p, const struct mp_reader *r)
{
	p->status = r->status;
	strbuf_add(&p->err, r->err.buf, r->err.len);
	if (r->status != MP_READ_OK)
		fuzz_check_line(&r->err);
}

static bool stack_record(enum mp_rec_type t)
{
	return t == MP_REC_TRACE || t == MP_REC_SYMBOL || t == MP_REC_MODULE ||
	       t == MP_REC_MODULE_UNLOAD;
}

/* As `memprof parse --stacks`: the stacks first, then each record, allocations with theirs. */
static void one_by_one(const uint8_t *data, size_t size, struct pass *p)
{
	struct mp_stacks *st = mp_stacks_new();
	struct strbuf line = STRBUF_INIT;
	struct mp_reader r;
	struct mp_record rec;
	if (fuzz_open(&r, data, size) == 0)
		while (mp_reader_next(&r, &rec))
			if (stack_record(rec.type))
				mp_stacks_add(st, &r, &rec);
	mp_reader_release(&r);
	if (fuzz_open(&r, data, size) == 0) {
		while (mp_reader_next(&r, &rec)) {
			strbuf_reset(&line);
			mp_dump_record(&line, &r, &rec);
			add_line(p, &line);
			if (rec.type == MP_REC_ALLOC)
				mp_stacks_render(st, &line, rec.u.ev.stack);
		}
		end_pass(p, &r);
	}
	mp_reader_release(&r);
	mp_stacks_free(st);
	strbuf_release(&line);
}

/* As the analysis: batches of records, the blocks opened ahead by a thread. */
static void batches(const uint8_t *data, size_t size, struct pass *p)
{
	struct strbuf line = STRBUF_INIT;
	struct mp_reader r;
	struct mp_record recs[64];
	size_t n;
	if (fuzz_open(&r, data, size) == 0) {
		mp_reader_read_ahead(&r);
		while ((n = mp_reader_read(&r, recs, 64)))
			for (size_t i = 0; i < n; i++) {
				strbuf_reset(&line);
				mp_dump_record(&line, &r, &recs[i]);
				add_line(p, &line);
			}
		end_pass(p, &r);
	}
	mp_reader_release(&r);
	strbuf_release(&line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pass one = { 0, 0, MP_READ_OK, STRBUF_INIT }, many = { 0, 0, MP_READ_OK, STRBUF_INIT };
	one_by_one(data, size, &one);
	batches(data, size, &many);
	FUZZ_CHECK(one.records == many.records);
	FUZZ_CHECK(one.digest == many.digest);
	FUZZ_CHECK(one.status == many.status);
	FUZZ_CHECK(!strcmp(one.err.buf, many.err.buf));
	strbuf_release(&one.err);
	strbuf_release(&many.err);
	return 0;
}
