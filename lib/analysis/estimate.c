/*
 * Estimates from a sampled capture (header key 20, memprof-run(1) SAMPLING):
 * what each recorded block stands for.
 *
 * The tracker records a block of s bytes with probability
 * pi(s) = 1 - e^(-(s+1)/N) (N the interval; 1 from N bytes up), so a block
 * counted 1/pi(s) times, its bytes s/pi(s) times, makes every sum over
 * blocks an unbiased estimate of the sum over all the program's blocks
 * (Horvitz and Thompson's estimator), whatever the mix of sizes; for a
 * small block that is about N bytes. Bytes are rounded to whole bytes (at
 * most half a byte off, per block of N bytes or so); a count, whose weight
 * may be as small as 1.6, is its weight's whole part plus one with the
 * probability of its fraction, decided by a hash of the block's number
 * among its thread's (mp_estimate_key()), so that the sum stays unbiased and a block's free takes off
 * exactly what its allocation added. A mapping's pieces take off the part
 * of its bytes they are, rounded so that all of them add up to the whole.
 */
#include <config.h>

#include <math.h>

#include "lib/analysis/analysis-private.h"

double mp_sampling_weight(uint64_t size, uint64_t interval)
{
	if (!interval || size >= interval)
		return 1.0;
	return -1.0 / expm1(-(double)(size + 1) / (double)interval);
}

double mp_sampling_error(uint64_t interval, uint64_t bytes)
{
	if (!interval || !bytes)
		return 0.0;
	return sqrt((double)interval / (double)bytes);
}

void mp_estimate_block(const struct mp_analysis *a, uint64_t size, uint64_t key, uint64_t *bytes,
		       uint64_t *count)
{
	uint64_t t = a->header.sampling_interval;
	double w, whole;
	if (!t || size >= t) {
		*bytes = size;
		*count = 1;
		return;
	}
	w = mp_sampling_weight(size, t);
	*bytes = (uint64_t)llround((double)size * w);
	whole = floor(w);
	/* The fraction, by a uniform number of the block's key: the count is unbiased. */
	*count = (uint64_t)whole +
		 ((double)(mp_hash_u64(key ^ 0x5851f42d4c957f2dull) >> 11) * 0x1p-53 < w - whole);
}

double mp_estimate_var(const struct mp_analysis *a, uint64_t size)
{
	/* (1 - pi) / pi^2 = w^2 - w, w = 1/pi. */
	double w = mp_sampling_weight(size, a->header.sampling_interval), s = (double)size;
	return s * s * (w * w - w);
}

uint64_t mp_estimate_piece(const struct mp_analysis *a, struct origin *o, uint64_t bytes)
{
	uint64_t t = a->header.sampling_interval, all, count, before, after;
	if (!t || o->size >= t || !o->size)
		return bytes;
	mp_estimate_block(a, o->size, mp_estimate_key(a, o->thread, o->serial), &all, &count);
	before = o->released < o->size ? o->released : o->size;
	o->released = before + bytes < o->size ? before + bytes : o->size;
	after = o->released;
	/* The same rounding of the running total: the pieces add up to the whole. */
	return (uint64_t)((unsigned __int128)all * after / o->size) -
	       (uint64_t)((unsigned __int128)all * before / o->size);
}

void mp_analysis_note_sampling(struct mp_analysis *a, uint64_t interval)
{
	struct mp_analysis_private *p = a->p;
	if (!p->sampling_noted) {
		p->sampling_noted = true;
		p->sampling_first = interval;
	} else if (interval != p->sampling_first) {
		a->sampling_mixed = true;
	}
	if (interval > a->sampling_interval)
		a->sampling_interval = interval;
}
