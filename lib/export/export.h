/*
 * Exports of a finished analysis to the formats other tools read (memprof
 * transform): pprof (a gzipped profile.proto for go tool pprof, Pyroscope,
 * Parca), speedscope's JSON, folded stacks (flamegraph.pl, inferno) and
 * memray's CSV. Each shows one view (peak, leaks or temporary allocations)
 * and streams over the analysis' slots into a sink: memory grows with the
 * unique stacks and locations, never with the events. Threads are kept apart
 * when the analysis was made with MP_ANALYSIS_SPLIT_THREADS.
 *
 *	struct mp_export_opts o = { MP_EXPORT_FOLDED, MP_VIEW_LEAKS };
 *	if (mp_export_write(&a, &o, &sink) < 0) ...
 */
#ifndef MEMPROF_LIB_EXPORT_EXPORT_H
#define MEMPROF_LIB_EXPORT_EXPORT_H

#include "lib/analysis/analysis.h"
#include "lib/export/sink.h"
#include "lib/util/strbuf.h"

enum mp_export_format {
	MP_EXPORT_PPROF,
	MP_EXPORT_SPEEDSCOPE,
	MP_EXPORT_FOLDED,
	MP_EXPORT_CSV,
	MP_EXPORT_NFORMATS
};

struct mp_export_opts {
	enum mp_export_format format;
	enum mp_view view;      /* MP_VIEW_PEAK, MP_VIEW_LEAKS or MP_VIEW_TEMPORARY */
};

/* The format called name, or -1. */
int mp_export_format_parse(const char *name);
/* "pprof", "speedscope", "folded", "csv". */
const char *mp_export_format_name(enum mp_export_format f);
/*
 * The suffix of the default output name (memray's rule, see
 * mp_report_output_path()): ".pb.gz", ".speedscope.json", ".folded", ".csv".
 */
const char *mp_export_format_suffix(enum mp_export_format f);
/* Whether the format is gzip-compressed (pprof): the sink must be opened so. */
bool mp_export_format_gzip(enum mp_export_format f);
/*
 * Whether the format says itself that a sampled capture's figures are
 * estimates (pprof: its period and a comment; speedscope: the names);
 * folded stacks and memray's CSV have no place for it.
 */
bool mp_export_format_labels(enum mp_export_format f);
/* The format names separated by ", ", for messages. */
void mp_export_format_list(struct strbuf *sb);

/*
 * Write a finished analysis in o's format and view to out. Returns 0, or -1
 * when writing failed (mp_sink_close() says why).
 */
int mp_export_write(const struct mp_analysis *a, const struct mp_export_opts *o,
		    struct mp_sink *out);

#endif
