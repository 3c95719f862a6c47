/* The records of aggregated captures: encoding, decoding and their text. */
#include <config.h>
#include "lib/format/aggregate.h"

#include <stdio.h>
#include <string.h>

#include "lib/format/encode.h"
#include "lib/format/format.h"

/*
 * Each record's fields: the key's id and where the value lives in struct
 * mp_agg. Ids are never reused; new fields get new ids.
 */
struct field {
	unsigned id;
	size_t off;
};
#define F(id, type, member) { id, offsetof(struct mp_agg, u) + offsetof(type, member) }

static const struct field slot_fields[] = {
	F(1, struct mp_agg_slot, stack), F(2, struct mp_agg_slot, thread),
	F(3, struct mp_agg_slot, kind), F(4, struct mp_agg_slot, alloc_bytes),
	F(5, struct mp_agg_slot, alloc_count), F(6, struct mp_agg_slot, peak_bytes),
	F(7, struct mp_agg_slot, peak_count), F(8, struct mp_agg_slot, leak_bytes),
	F(9, struct mp_agg_slot, leak_count), { 0, 0 },
};
static const struct field totals_fields[] = {
	F(1, struct mp_agg_totals, n_allocs), F(2, struct mp_agg_totals, bytes_allocated),
	F(3, struct mp_agg_totals, n_frees), F(4, struct mp_agg_totals, n_unknown_frees),
	F(5, struct mp_agg_totals, n_null_frees), F(6, struct mp_agg_totals, n_lost),
	F(7, struct mp_agg_totals, peak_bytes), F(8, struct mp_agg_totals, peak_count),
	F(9, struct mp_agg_totals, peak_time_us), F(10, struct mp_agg_totals, peak_ticks),
	F(11, struct mp_agg_totals, peak_event), F(12, struct mp_agg_totals, min_size),
	F(13, struct mp_agg_totals, max_size), F(14, struct mp_agg_totals, n_events),
	F(15, struct mp_agg_totals, n_ticks), F(16, struct mp_agg_totals, n_records),
	F(17, struct mp_agg_totals, ticks_per_sample), F(18, struct mp_agg_totals, sd_allocated),
	F(19, struct mp_agg_totals, sd_peak), F(20, struct mp_agg_totals, sd_leaked), { 0, 0 },
};
static const struct field kind_fields[] = {
	F(1, struct mp_agg_kind, kind), F(2, struct mp_agg_kind, n_allocs),
	F(3, struct mp_agg_kind, bytes_allocated), F(4, struct mp_agg_kind, n_frees), { 0, 0 },
};
static const struct field thread_fields[] = {
	F(1, struct mp_agg_thread, thread), F(2, struct mp_agg_thread, n_allocs),
	F(3, struct mp_agg_thread, bytes_allocated), F(4, struct mp_agg_thread, n_frees),
	F(5, struct mp_agg_thread, live_bytes), F(6, struct mp_agg_thread, live_count), { 0, 0 },
};
static const struct field sample_fields[] = {
	F(1, struct mp_agg_sample, time_us), F(2, struct mp_agg_sample, rss),
	F(3, struct mp_agg_sample, heap), F(4, struct mp_agg_sample, heap_max),
	F(5, struct mp_agg_sample, hwm_time_us), { 0, 0 },
};
#undef F

/* The histogram's buckets are ids 1..65 (bucket + 1), present only when not zero. */
static const struct field *fields_of(unsigned tag)
{
	switch (tag) {
	case MP_TAG_AGG_SLOT: return slot_fields;
	case MP_TAG_AGG_TOTALS: return totals_fields;
	case MP_TAG_AGG_KIND: return kind_fields;
	case MP_TAG_AGG_THREAD: return thread_fields;
	case MP_TAG_AGG_SAMPLE: return sample_fields;
	default: return NULL;
	}
}

static uint64_t *at(struct mp_agg *a, size_t off)
{
	return (uint64_t *)((char *)a + off);
}

size_t mp_agg_encode(uint8_t *buf, const struct mp_agg *a)
{
	const struct field *f = fields_of(a->tag);
	uint8_t *p = mp_enc_sized_begin(buf, a->tag);
	if (a->tag == MP_TAG_AGG_HIST) {
		for (unsigned k = 0; k < MP_AGG_HIST_BUCKETS; k++)
			if (a->u.hist.count[k])
				p = mp_enc_field_uint(p, k + 1, a->u.hist.count[k]);
	} else if (f) {
		/* Zeros are left out: a missing field reads as zero. */
		for (; f->id; f++) {
			uint64_t v = *at((struct mp_agg *)a, f->off);
			if (v)
				p = mp_enc_field_uint(p, f->id, v);
		}
	}
	return (size_t)(mp_enc_sized_end(buf, p) - buf);
}

/* A varint within [*p, end): 0, or -1 when it runs past the end or is too long. */
static int get_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	uint64_t x = 0;
	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (*p >= end)
			return -1;
		uint8_t b = *(*p)++;
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return -1;
}

int mp_agg_decode(unsigned tag, const uint8_t *data, size_t len, struct mp_agg *a)
{
	const struct field *f = fields_of(tag);
	const uint8_t *p = data, *end = len ? data + len : data; /* (an empty record may be NULL) */
	if (!f && tag != MP_TAG_AGG_HIST)
		return 1;
	memset(a, 0, sizeof(*a));
	a->tag = tag;
	while (p < end) {
		uint64_t key, v, id;
		if (get_varint(&p, end, &key) < 0)
			return -1;
		id = key >> 3;
		switch (key & 7) {
		case MP_FIELD_UINT:
		case MP_FIELD_SINT:
			if (get_varint(&p, end, &v) < 0)
				return -1;
			break;
		case MP_FIELD_BYTES:
			if (get_varint(&p, end, &v) < 0 || v > (uint64_t)(end - p))
				return -1;
			p += v;
			continue; /* no aggregate field is bytes yet: skipped */
		default:
			return -1;
		}
		if ((key & 7) != MP_FIELD_UINT)
			continue;
		if (tag == MP_TAG_AGG_HIST) {
			if (id >= 1 && id <= MP_AGG_HIST_BUCKETS)
				a->u.hist.count[id - 1] = v;
			continue;
		}
		for (const struct field *g = f; g->id; g++)
			if (g->id == id)
				*at(a, g->off) = v;
	}
	return 0;
}

static const char *const slot_names[] = { "stack", "thread", "kind", "alloc_bytes", "allocs",
					  "peak_bytes", "peak_blocks", "leaked_bytes", "leaked_blocks" };
static const char *const totals_names[] = {
	"allocs", "bytes_allocated", "frees", "unknown_frees", "null_frees", "lost", "peak_bytes",
	"peak_blocks", "peak_time_us", "peak_ticks", "peak_event", "min_size", "max_size",
	"events", "ticks", "records", "ticks_per_sample", "sd_allocated", "sd_peak", "sd_leaked",
};
/* AGG_TOTALS's fields from this one on (a sampled capture's) are shown only when set. */
#define TOTALS_SHOWN_WHEN_SET 18
static const char *const kind_names[] = { "kind", "allocs", "bytes_allocated", "frees" };
static const char *const thread_names[] = { "thread", "allocs", "bytes_allocated", "frees",
					    "live_bytes", "live_blocks" };
static const char *const sample_names[] = { "time_us", "rss", "heap", "heap_max", "hwm_time_us" };

void mp_agg_format(const struct mp_agg *a, char *buf, size_t cap)
{
	const struct field *f = fields_of(a->tag);
	const char *const *names = NULL;
	const char *what = "AGG_HIST";
	size_t n;
	switch (a->tag) {
	case MP_TAG_AGG_SLOT: what = "AGG_SLOT"; names = slot_names; break;
	case MP_TAG_AGG_TOTALS: what = "AGG_TOTALS"; names = totals_names; break;
	case MP_TAG_AGG_KIND: what = "AGG_KIND"; names = kind_names; break;
	case MP_TAG_AGG_THREAD: what = "AGG_THREAD"; names = thread_names; break;
	case MP_TAG_AGG_SAMPLE: what = "AGG_SAMPLE"; names = sample_names; break;
	default: break;
	}
	n = (size_t)snprintf(buf, cap, "%s", what);
	if (a->tag == MP_TAG_AGG_HIST) {
		for (unsigned k = 0; k < MP_AGG_HIST_BUCKETS && n < cap; k++)
			if (a->u.hist.count[k])
				n += (size_t)snprintf(buf + n, cap - n, " b%u=%llu", k,
						      (unsigned long long)a->u.hist.count[k]);
		return;
	}
	for (size_t i = 0; f && f[i].id && n < cap; i++) {
		uint64_t v = *at((struct mp_agg *)a, f[i].off);
		if (a->tag == MP_TAG_AGG_TOTALS && f[i].id >= TOTALS_SHOWN_WHEN_SET && !v)
			continue;
		n += (size_t)snprintf(buf + n, cap - n, " %s=%llu", names[i], (unsigned long long)v);
	}
}
