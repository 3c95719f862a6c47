/*
 * mkcapture: compile the text of `memprof parse` back into a capture, through
 * the real writer. Tests use it to build exact event streams by hand and to
 * regenerate the golden files. SWITCH lines are ignored: the writer emits
 * switches itself when the thread of consecutive events changes.
 *
 * usage: mkcapture [-r] [-f] [-s] [-1] [-3] -o OUT [IN]
 *   -r  no compression        -s  heap blocks by serial number (as `memprof run` writes)
 *   -f  overwrite OUT         -1  compressed blocks of one zstd frame (codec 1, format 1.0)
 *   -3  format 3.0 (codec 3 blocks), as memprof wrote it before 4.0
 * Lines with block=N (as parse prints serial captures) are written by serial number.
 */
#include <config.h>

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/format/decode.h"
#include "lib/format/encode.h"
#include "lib/format/format.h"
#include "lib/format/writer.h"
#include "lib/util/strbuf.h"
#include "lib/util/usage.h"
#include "lib/util/xalloc.h"

#define USAGE "usage: mkcapture [-r] [-f] [-s] [-1] [-3] -o OUT [IN]"

struct field {
	char *key;
	char *val;   /* unquoted text, or the inside of [...] */
	int quoted;
};

static int lineno;

#define MAXF 64
static struct field fields[MAXF];
static int nfields;

static void syntax(const char *msg, const char *what) __attribute__((noreturn));
static void syntax(const char *msg, const char *what)
{
	die("line %d: %s '%s'", lineno, msg, what);
}

/* Unquote a C-quoted string starting at *p (which is '"'); advances *p. */
static char *unquote(const char **p, size_t *len)
{
	struct strbuf sb = STRBUF_INIT;
	const char *s = *p + 1;
	while (*s && *s != '"') {
		if (*s == '\\') {
			s++;
			switch (*s) {
			case 'n': strbuf_addch(&sb, '\n'); s++; break;
			case 't': strbuf_addch(&sb, '\t'); s++; break;
			case 'r': strbuf_addch(&sb, '\r'); s++; break;
			case 'x': {
				char hex[3] = { s[1], s[2], 0 };
				strbuf_addch(&sb, (int)strtol(hex, NULL, 16));
				s += 3;
				break;
			}
			case '\0': syntax("unterminated escape in", *p);
			default: strbuf_addch(&sb, *s++);
			}
		} else {
			strbuf_addch(&sb, *s++);
		}
	}
	if (*s != '"')
		syntax("unterminated string", *p);
	*p = s + 1;
	if (len)
		*len = sb.len;
	return strbuf_detach(&sb, NULL);
}

static void split_fields(const char *s)
{
	for (int i = 0; i < nfields; i++) {
		free(fields[i].key);
		free(fields[i].val);
	}
	nfields = 0;
	while (*s) {
		const char *k;
		struct field *f;
		while (isspace((unsigned char)*s))
			s++;
		if (!*s)
			break;
		if (nfields == MAXF)
			syntax("too many fields in", s);
		f = &fields[nfields++];
		f->quoted = 0;
		k = s;
		while (*s && *s != '=' && !isspace((unsigned char)*s))
			s++;
		if (*s != '=') {
			/* A positional value (STRING's text). */
			f->key = xstrdup("");
			if (*k == '"') {
				s = k;
				f->val = unquote(&s, NULL);
				f->quoted = 1;
			} else {
				f->val = xstrndup(k, (size_t)(s - k));
			}
			continue;
		}
		f->key = xstrndup(k, (size_t)(s - k));
		s++;
		if (*s == '"') {
			f->val = unquote(&s, NULL);
			f->quoted = 1;
		} else if (*s == '[') {
			const char *start = ++s;
			int inq = 0;
			while (*s && (inq || *s != ']')) {
				if (*s == '\\' && inq && s[1])
					s++;
				else if (*s == '"')
					inq = !inq;
				s++;
			}
			if (*s != ']')
				syntax("unterminated list in", k);
			f->val = xstrndup(start, (size_t)(s - start));
			s++;
		} else {
			const char *start = s;
			while (*s && !isspace((unsigned char)*s))
				s++;
			f->val = xstrndup(start, (size_t)(s - start));
		}
	}
}

static const char *get(const char *key)
{
	for (int i = 0; i < nfields; i++)
		if (!strcmp(fields[i].key, key))
			return fields[i].val;
	return NULL;
}

static const char *need(const char *key)
{
	const char *v = get(key);
	if (!v)
		syntax("missing field", key);
	return v;
}

static uint64_t num(const char *s)
{
	char *end;
	uint64_t v;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end)
		syntax("bad number", s);
	return v;
}

static uint64_t getnum(const char *key, uint64_t dflt)
{
	const char *v = get(key);
	return v ? num(v) : dflt;
}

static uint64_t parse_time(const char *s)
{
	struct tm tm = { 0 };
	unsigned us = 0;
	const char *rest = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!rest || sscanf(rest, ".%6uZ", &us) != 1)
		syntax("bad time", s);
	return (uint64_t)timegm(&tm) * 1000000u + us;
}

static unsigned kind(const char *s)
{
	int k = mp_kind_from_name(s);
	if (k >= 0)
		return (unsigned)k;
	if (!strncmp(s, "kind#", 5))
		return (unsigned)num(s + 5);
	syntax("unknown kind", s);
}

/* Split a list value at top-level commas; returns a NULL-terminated array. */
static char **list_items(const char *s)
{
	char **items = NULL;
	size_t n = 0, alloc = 0;
	int inq = 0;
	const char *start = s;
	for (const char *p = s;; p++) {
		if (*p == '\\' && inq && p[1]) {
			p++;
			continue;
		}
		if (*p == '"')
			inq = !inq;
		if (!*p || (*p == ',' && !inq)) {
			while (isspace((unsigned char)*start))
				start++;
			if (p > start) {
				ALLOC_GROW(items, n + 2, alloc);
				items[n++] = xstrndup(start, (size_t)(p - start));
			}
			if (!*p)
				break;
			start = p + 1;
		}
	}
	ALLOC_GROW(items, n + 1, alloc);
	items[n] = NULL;
	return items;
}

static void free_items(char **items)
{
	for (char **i = items; *i; i++)
		free(*i);
	free(items);
}

/* String ids by text, for SYMBOL frames written with quoted names. */
static char **strings;
static size_t nstrings, strings_alloc;

static uint64_t string_ref(const char **p)
{
	if (**p == '"') {
		char *s = unquote(p, NULL);
		for (size_t i = 0; i < nstrings; i++)
			if (!strcmp(strings[i], s)) {
				free(s);
				return i + 1;
			}
		syntax("string not declared by a STRING line:", s);
	}
	if (**p == '?') {
		(*p)++;
		return 0;
	}
	if (**p == '#') {
		char *end;
		uint64_t v = strtoull(*p + 1, &end, 10);
		*p = end;
		return v;
	}
	syntax("bad string reference", *p);
}

static void marker(struct mp_writer *w, unsigned tag)
{
	struct mp_marker m = { 0 };
	const char *v;
	if ((v = get("time_us"))) { m.has |= MP_HAS_TIME; m.time_us = num(v); }
	if ((v = get("rss"))) { m.has |= MP_HAS_RSS; m.rss = num(v); }
	if ((v = get("heap_arena"))) { m.has |= MP_HAS_HEAP_ARENA; m.heap_arena = num(v); }
	if ((v = get("heap_in_use"))) { m.has |= MP_HAS_HEAP_IN_USE; m.heap_in_use = num(v); }
	if ((v = get("child_pid"))) { m.has |= MP_HAS_CHILD_PID; m.child_pid = num(v); }
	if ((v = get("count"))) { m.has |= MP_HAS_COUNT; m.count = num(v); }
	if ((v = get("status"))) { m.has |= MP_HAS_STATUS; m.status = strtoll(v, NULL, 10); }
	if ((v = get("level"))) { m.has |= MP_HAS_LEVEL; m.level = num(v); }
	if ((v = get("text"))) { m.has |= MP_HAS_TEXT; m.text = v; m.text_len = strlen(v); }
	mp_writer_marker(w, tag, &m);
}

static void header(struct mp_writer *w)
{
	struct mp_header h = { 0 };
	const char *v;
	char **argv = NULL;
	h.pid = getnum("pid", 0);
	h.ppid = getnum("ppid", 0);
	h.main_tid = getnum("main_tid", h.pid);
	v = get("mode");
	h.mode = !v || !strcmp(v, "run") ? MP_MODE_RUN : !strcmp(v, "preload") ? MP_MODE_PRELOAD
		 : !strcmp(v, "attach") ? MP_MODE_ATTACH : num(v);
	h.start_time_us = (v = get("start_time")) ? parse_time(v) : 0;
	h.page_size = getnum("page_size", 4096);
	h.max_depth = getnum("max_depth", 128);
	h.interval_ms = getnum("interval_ms", 10);
	v = get("flags");
	h.flags = 0;
	if (v && strstr(v, "symbolized"))
		h.flags |= MP_HF_SYMBOLIZED;
	if (v && strstr(v, "follow-fork"))
		h.flags |= MP_HF_FOLLOW_FORK;
	if (v && strstr(v, "fork-child"))
		h.flags |= MP_HF_FORK_CHILD;
	v = get("machine");
	h.machine = !v || !strcmp(v, "x86_64") ? 62 : !strcmp(v, "aarch64") ? 183
		    : !strncmp(v, "machine#", 8) ? num(v + 8) : 0;
	h.pointer_size = getnum("pointer_size", 8);
	h.forked_from = getnum("forked_from", 0);
	h.sampling_interval = getnum("sampling_interval", 0);
	if ((v = get("family")))
		h.family = strtoull(v, NULL, 16);
	h.hostname = (char *)get("hostname");
	h.tracker_version = (char *)get("tracker");
	h.exe = (char *)get("exe");
	h.cwd = (char *)get("cwd");
	if ((v = get("argv"))) {
		char **items = list_items(v);
		size_t n = 0;
		while (items[n])
			n++;
		argv = xcalloc(n + 1, sizeof(char *));
		for (size_t i = 0; i < n; i++) {
			const char *p = items[i];
			argv[i] = unquote(&p, NULL);
		}
		h.argv = argv;
		h.argc = n;
		free_items(items);
	}
	mp_writer_header(w, &h);
	for (size_t i = 0; i < h.argc; i++)
		free(argv[i]);
	free(argv);
}

static void trailer(struct mp_writer *w)
{
	struct mp_trailer t = { 0 };
	const char *v;
	t.end_time_us = (v = get("end_time")) ? parse_time(v) : 0;
	t.duration_us = getnum("duration_us", 0);
	v = get("end");
	t.end_reason = !v ? 0 : !strcmp(v, "exit") ? MP_END_EXIT : !strcmp(v, "detach") ? MP_END_DETACH
		       : !strcmp(v, "disconnect") ? MP_END_DISCONNECT : 0;
	if ((v = get("exit_code"))) { t.has_exit_code = true; t.exit_code = (int)num(v); }
	if ((v = get("exit_signal"))) { t.has_exit_signal = true; t.exit_signal = (int)num(v); }
	t.core_dumped = (int)getnum("core_dumped", 0);
	/* Totals default to what was written, so hand-written tests stay short. */
	t.n_allocs = getnum("allocs", w->n_allocs);
	t.n_frees = getnum("frees", w->n_frees);
	t.bytes_allocated = getnum("bytes_allocated", w->bytes_allocated);
	t.n_traces = getnum("traces", w->n_traces);
	t.n_symbols = getnum("symbols", w->n_symbols);
	t.n_records = getnum("records", w->n_records + 1);
	t.n_lost = getnum("lost", 0);
	mp_writer_trailer(w, &t);
}

static void module(struct mp_writer *w)
{
	const char *bid = need("build_id"), *segs = get("segments");
	uint8_t build_id[256];
	size_t blen = 0;
	struct mp_segment seg[64];
	size_t nseg = 0;
	if (strcmp(bid, "-")) {
		for (const char *p = bid; p[0] && p[1] && blen < sizeof(build_id); p += 2) {
			char hex[3] = { p[0], p[1], 0 };
			build_id[blen++] = (uint8_t)strtoul(hex, NULL, 16);
		}
	}
	if (segs) {
		char **items = list_items(segs);
		for (char **it = items; *it && nseg < 64; it++, nseg++) {
			char *end, *plus = strchr(*it, '+'), *colon;
			if (!plus || !(colon = strchr(plus, ':')))
				syntax("bad segment", *it);
			seg[nseg].vaddr = strtoull(*it, &end, 0);
			seg[nseg].memsz = strtoull(plus + 1, &end, 0);
			seg[nseg].flags = (colon[1] == 'r' ? 4 : 0) | (colon[2] == 'w' ? 2 : 0) |
					  (colon[3] == 'x' ? 1 : 0);
		}
		free_items(items);
	}
	mp_writer_module(w, num(need("id")), num(need("base")), need("path"), build_id, blen, seg,
			 nseg);
}

static void symbol(struct mp_writer *w)
{
	struct mp_frame frames[MP_MAX_FRAMES];
	size_t n = 0;
	const char *list = get("frames");
	if (list) {
		char **items = list_items(list);
		for (char **it = items; *it && n < MP_MAX_FRAMES; it++, n++) {
			const char *p = *it;
			unsigned line = 0, col = 0;
			frames[n].function = string_ref(&p);
			while (*p == ' ')
				p++;
			frames[n].file = string_ref(&p);
			if (sscanf(p, ":%u:%u", &line, &col) != 2)
				syntax("bad frame position", *it);
			frames[n].line = line;
			frames[n].column = col;
		}
		free_items(items);
	}
	mp_writer_symbol(w, num(need("ip")), getnum("module", 0), getnum("offset", 0), frames, n);
}

static void line(struct mp_writer *w, char *s)
{
	char *type = s, *rest;
	while (*s && !isspace((unsigned char)*s))
		s++;
	rest = *s ? s + 1 : s;
	*s = '\0';
	if (!*type || *type == '#')
		return;
	split_fields(rest);
	if (!strcmp(type, "HEADER")) {
		header(w);
	} else if (!strcmp(type, "TRAILER")) {
		trailer(w);
	} else if (!strcmp(type, "SWITCH")) {
		/* emitted by the writer */
	} else if (!strcmp(type, "ALLOC") && get("block")) {
		if (mp_writer_alloc_seq(w, (uint32_t)num(need("thread")), kind(need("kind")),
					num(need("size")), num(need("stack"))) != num(need("block")))
			syntax("blocks must be numbered 0, 1, ... in order; got", need("block"));
	} else if (!strcmp(type, "ALLOC")) {
		mp_writer_alloc(w, (uint32_t)num(need("thread")), kind(need("kind")),
				num(need("addr")), num(need("size")), num(need("stack")));
	} else if (!strcmp(type, "FREE") && get("block")) {
		if (num(need("block")) >= w->n_seq)
			syntax("a free of a block not yet allocated:", need("block"));
		mp_writer_free_seq(w, (uint32_t)num(need("thread")), kind(need("kind")),
				   num(need("block")));
	} else if (!strcmp(type, "FREE")) {
		if (get("size"))
			mp_writer_free_range(w, (uint32_t)num(need("thread")), kind(need("kind")),
					     num(need("addr")), num(need("size")));
		else
			mp_writer_free(w, (uint32_t)num(need("thread")), kind(need("kind")),
				       num(need("addr")));
	} else if (!strcmp(type, "TRACE")) {
		uint64_t want = num(need("node"));
		if (mp_writer_trace(w, num(need("parent")), num(need("ip"))) != want)
			syntax("trace nodes must be numbered 1, 2, ... in order; got", need("node"));
	} else if (!strcmp(type, "TICK")) {
		mp_writer_tick(w, num(need("time_us")), num(need("rss")));
	} else if (!strcmp(type, "THREAD")) {
		mp_writer_thread(w, (uint32_t)num(need("index")), num(need("tid")), need("name"));
	} else if (!strcmp(type, "MODULE")) {
		module(w);
	} else if (!strcmp(type, "MODULE_UNLOAD")) {
		mp_writer_module_unload(w, num(need("id")));
	} else if (!strcmp(type, "STRING")) {
		const char *text = nfields > 1 ? fields[1].val : "";
		uint64_t id = mp_writer_string(w, text, strlen(text));
		if (id != num(need("id")))
			syntax("strings must be numbered 1, 2, ... in order; got", need("id"));
		ALLOC_GROW(strings, nstrings + 1, strings_alloc);
		strings[nstrings++] = xstrdup(text);
	} else if (!strcmp(type, "SYMBOL")) {
		symbol(w);
	} else if (!strcmp(type, "ATTACH")) {
		marker(w, MP_TAG_ATTACH);
	} else if (!strcmp(type, "DETACH")) {
		marker(w, MP_TAG_DETACH);
	} else if (!strcmp(type, "FORK")) {
		marker(w, MP_TAG_FORK);
	} else if (!strcmp(type, "LOST")) {
		marker(w, MP_TAG_LOST);
	} else if (!strcmp(type, "EXIT")) {
		marker(w, MP_TAG_EXIT);
	} else if (!strcmp(type, "MESSAGE")) {
		marker(w, MP_TAG_MESSAGE);
	} else if (!strcmp(type, "UNKNOWN")) {
		/* A record type this writer does not know, for forward-compatibility tests. */
		uint64_t tag = num(need("type")), len = num(need("length"));
		uint8_t buf[1 + MP_VARINT_MAX + 4096] = { 0 }, *p = buf;
		if (tag < 0x80 || tag > 0xff || len > 4096)
			syntax("UNKNOWN needs a type from 0x80 and a length up to 4096:", need("type"));
		*p++ = (uint8_t)tag;
		p = mp_put_uvarint(p, len);
		memset(p, 0x5a, len);
		mp_writer_raw(w, buf, (size_t)(p - buf) + len);
		w->n_records++;
	} else {
		syntax("unknown record type", type);
	}
}

int main(int argc, char **argv)
{
	struct mp_writer w;
	unsigned flags = 0;
	const char *out = NULL;
	FILE *in = stdin;
	char *buf = NULL;
	size_t alloc = 0;
	int c;

	mp_set_progname("mkcapture");
	while ((c = getopt(argc, argv, "rfo:s13")) != -1) {
		switch (c) {
		case 'r': flags |= MP_WRITER_NO_COMPRESS; break;
		case 'f': flags |= MP_WRITER_FORCE; break;
		case 'o': out = optarg; break;
		case 's': flags |= MP_WRITER_SERIALS; break;
		case '1': flags |= MP_WRITER_ONE_FRAME; break;
		case '3': flags |= MP_WRITER_FORMAT3; break;
		default: die_usage(USAGE);
		}
	}
	if (!out)
		die_usage(USAGE);
	if (optind < argc && !(in = fopen(argv[optind], "r")))
		die_errno("cannot open '%s'", argv[optind]);
	if (mp_writer_open(&w, out, flags) < 0)
		die_errno("cannot create '%s'", out);
	while (getline(&buf, &alloc, in) > 0) {
		lineno++;
		buf[strcspn(buf, "\n")] = '\0';
		line(&w, buf);
	}
	free(buf);
	if (mp_writer_close(&w) < 0)
		die_errno("cannot write '%s'", out);
	return 0;
}
