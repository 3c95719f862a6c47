/* The export formats: names, default suffixes and dispatch. */
#include <config.h>
#include "lib/export/export.h"

#include <string.h>

#include "lib/export/export-private.h"
#include "lib/report/render-text.h"

static const struct {
	const char *name, *suffix;
	int (*write)(const struct mp_analysis *a, const struct mp_export_opts *o,
		     struct mp_sink *out);
} formats[MP_EXPORT_NFORMATS] = {
	[MP_EXPORT_PPROF] = { "pprof", ".pb.gz", mp_export_pprof },
	[MP_EXPORT_SPEEDSCOPE] = { "speedscope", ".speedscope.json", mp_export_speedscope },
	[MP_EXPORT_FOLDED] = { "folded", ".folded", mp_export_folded },
	[MP_EXPORT_CSV] = { "csv", ".csv", mp_export_csv },
};

int mp_export_format_parse(const char *name)
{
	for (int f = 0; f < MP_EXPORT_NFORMATS; f++)
		if (!strcmp(name, formats[f].name))
			return f;
	return -1;
}

const char *mp_export_format_name(enum mp_export_format f)
{
	return formats[f].name;
}

const char *mp_export_format_suffix(enum mp_export_format f)
{
	return formats[f].suffix;
}

bool mp_export_format_gzip(enum mp_export_format f)
{
	return f == MP_EXPORT_PPROF;
}

bool mp_export_format_labels(enum mp_export_format f)
{
	return f == MP_EXPORT_PPROF || f == MP_EXPORT_SPEEDSCOPE;
}

void mp_export_format_list(struct strbuf *sb)
{
	for (int f = 0; f < MP_EXPORT_NFORMATS; f++)
		strbuf_addf(sb, "%s%s", f ? ", " : "", formats[f].name);
}

int mp_export_write(const struct mp_analysis *a, const struct mp_export_opts *o,
		    struct mp_sink *out)
{
	return formats[o->format].write(a, o, out);
}

const char *mp_export_file(const struct mp_analysis *a, uint32_t loc)
{
	const struct mp_location *l = mp_analysis_location(a, loc);
	if (l->file)
		return mp_analysis_string(a, l->file);
	if (l->module != MP_NONE)
		return mp_analysis_string(a, a->modules[l->module].path);
	return "";
}

const char *mp_export_view_words(enum mp_view view)
{
	switch (view) {
	case MP_VIEW_LEAKS: return "leaked memory";
	case MP_VIEW_TEMPORARY: return "temporary allocations";
	case MP_VIEW_ALLOCATED: return "allocated memory";
	default: return "peak memory";
	}
}

void mp_export_add_name(struct strbuf *sb, const char *s, const char *special)
{
	size_t n;
	while (s[n = strcspn(s, special)]) {
		mp_text_add_safe(sb, s, n);
		strbuf_addf(sb, "\\x%02x", (unsigned char)s[n]);
		s += n + 1;
	}
	mp_text_add_safe(sb, s, n);
}
