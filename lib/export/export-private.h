/* What the exporters (pprof, speedscope, folded, csv) share: internal to lib/export. */
#ifndef MEMPROF_LIB_EXPORT_EXPORT_PRIVATE_H
#define MEMPROF_LIB_EXPORT_EXPORT_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/analysis/analysis.h"
#include "lib/export/export.h"
#include "lib/export/sink.h"
#include "lib/util/strbuf.h"

/* One writer per format; each returns 0, or -1 when writing failed. */
int mp_export_pprof(const struct mp_analysis *a, const struct mp_export_opts *o,
		    struct mp_sink *out);
int mp_export_speedscope(const struct mp_analysis *a, const struct mp_export_opts *o,
			 struct mp_sink *out);
int mp_export_folded(const struct mp_analysis *a, const struct mp_export_opts *o,
		     struct mp_sink *out);
int mp_export_csv(const struct mp_analysis *a, const struct mp_export_opts *o,
		  struct mp_sink *out);

/* Whether the analysis keeps threads apart (slots carry a thread). */
static inline bool mp_export_split_threads(const struct mp_analysis *a)
{
	return (a->opts.flags & MP_ANALYSIS_SPLIT_THREADS) != 0;
}

/* The file of a location as the exports name it: its source file, else its module's path. */
const char *mp_export_file(const struct mp_analysis *a, uint32_t loc);
/*
 * Append a name from the capture for a text format: control characters,
 * invalid UTF-8 and each byte of special (the format's separators) as
 * \xNN, so nothing in it can break a line or a field.
 */
void mp_export_add_name(struct strbuf *sb, const char *s, const char *special);
/* What a view holds, in a few words: "peak memory", "leaked memory", "temporary allocations". */
const char *mp_export_view_words(enum mp_view view);

#endif
