/* The JSON writer: structure, indentation and string escaping. */
#include <config.h>
#include "lib/report/json.h"

#include <string.h>

#include "lib/report/render-text.h"

void mp_json_init(struct mp_json *j, struct strbuf *out, unsigned flags)
{
	memset(j, 0, sizeof(*j));
	j->out = out;
	j->flags = flags;
	j->first[0] = true;
}

static void newline(struct mp_json *j)
{
	if (!(j->flags & MP_JSON_PRETTY))
		return;
	strbuf_addch(j->out, '\n');
	for (int i = 0; i < j->depth; i++)
		strbuf_addstr(j->out, "  ");
}

/* Separate a value from the previous one (unless it follows its key). */
static void before_value(struct mp_json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (!j->first[j->depth])
		strbuf_addch(j->out, ',');
	j->first[j->depth] = false;
	if (j->depth)
		newline(j);
}

static void json_open(struct mp_json *j, char c)
{
	before_value(j);
	strbuf_addch(j->out, c);
	if (j->depth + 1 < MP_JSON_MAX_DEPTH)
		j->depth++;
	j->first[j->depth] = true;
}

static void json_close(struct mp_json *j, char c)
{
	bool empty = j->first[j->depth];
	if (j->depth)
		j->depth--;
	if (!empty)
		newline(j);
	strbuf_addch(j->out, c);
	if (!j->depth && (j->flags & MP_JSON_PRETTY))
		strbuf_addch(j->out, '\n');
}

void mp_json_begin_object(struct mp_json *j)
{
	json_open(j, '{');
}

void mp_json_end_object(struct mp_json *j)
{
	json_close(j, '}');
}

void mp_json_begin_array(struct mp_json *j)
{
	json_open(j, '[');
}

void mp_json_end_array(struct mp_json *j)
{
	json_close(j, ']');
}

void mp_json_key(struct mp_json *j, const char *key)
{
	before_value(j);
	mp_json_quote(j->out, key, strlen(key), j->flags);
	strbuf_addstr(j->out, (j->flags & MP_JSON_PRETTY) ? ": " : ":");
	j->after_key = true;
}

void mp_json_string_len(struct mp_json *j, const char *s, size_t len)
{
	before_value(j);
	mp_json_quote(j->out, s ? s : "", s ? len : 0, j->flags);
}

void mp_json_string(struct mp_json *j, const char *s)
{
	mp_json_string_len(j, s, s ? strlen(s) : 0);
}

/* Decimal digits without printf: reports write millions of numbers. */
static void add_uint(struct strbuf *sb, uint64_t v)
{
	char buf[24], *p = buf + sizeof(buf);
	do
		*--p = (char)('0' + v % 10);
	while (v /= 10);
	strbuf_add(sb, p, (size_t)(buf + sizeof(buf) - p));
}

void mp_json_uint(struct mp_json *j, uint64_t v)
{
	before_value(j);
	add_uint(j->out, v);
}

void mp_json_int(struct mp_json *j, int64_t v)
{
	before_value(j);
	if (v < 0) {
		strbuf_addch(j->out, '-');
		add_uint(j->out, -(uint64_t)v);
	} else {
		add_uint(j->out, (uint64_t)v);
	}
}

void mp_json_bool(struct mp_json *j, bool v)
{
	before_value(j);
	strbuf_addstr(j->out, v ? "true" : "false");
}

void mp_json_null(struct mp_json *j)
{
	before_value(j);
	strbuf_addstr(j->out, "null");
}

void mp_json_field_uint(struct mp_json *j, const char *key, uint64_t v)
{
	mp_json_key(j, key);
	mp_json_uint(j, v);
}

void mp_json_field_int(struct mp_json *j, const char *key, int64_t v)
{
	mp_json_key(j, key);
	mp_json_int(j, v);
}

void mp_json_field_bool(struct mp_json *j, const char *key, bool v)
{
	mp_json_key(j, key);
	mp_json_bool(j, v);
}

void mp_json_field_string(struct mp_json *j, const char *key, const char *s)
{
	mp_json_key(j, key);
	mp_json_string(j, s);
}

void mp_json_quote(struct strbuf *sb, const char *str, size_t len, unsigned flags)
{
	const unsigned char *s = (const unsigned char *)str;
	bool html = flags & MP_JSON_HTML_SAFE;
	strbuf_addch(sb, '"');
	for (size_t i = 0; i < len;) {
		uint32_t cp;
		size_t n = mp_utf8_decode(s + i, len - i, &cp);
		if (!n) {
			strbuf_addstr(sb, "\\ufffd"); /* an invalid byte */
			i++;
			continue;
		}
		switch (cp) {
		case '"': strbuf_addstr(sb, "\\\""); break;
		case '\\': strbuf_addstr(sb, "\\\\"); break;
		case '\n': strbuf_addstr(sb, "\\n"); break;
		case '\r': strbuf_addstr(sb, "\\r"); break;
		case '\t': strbuf_addstr(sb, "\\t"); break;
		case '\b': strbuf_addstr(sb, "\\b"); break;
		case '\f': strbuf_addstr(sb, "\\f"); break;
		default:
			if (cp < 0x20 || cp == 0x7f ||
			    (html && (cp == '<' || cp == '>' || cp == '&' || cp == 0x2028 ||
				      cp == 0x2029)))
				strbuf_addf(sb, "\\u%04x", (unsigned)cp);
			else
				strbuf_add(sb, s + i, n);
		}
		i += n;
	}
	strbuf_addch(sb, '"');
}

void mp_json_field_strings(struct mp_json *j, const char *key, char *const *s, size_t n)
{
	mp_json_key(j, key);
	mp_json_begin_array(j);
	for (size_t i = 0; i < n; i++)
		mp_json_string(j, s[i]);
	mp_json_end_array(j);
}
