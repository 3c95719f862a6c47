/* HTML templates: a template and the report data expanded into one self-contained page. */
#include <config.h>
#include "lib/report/html-template.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/report/render-text.h"
#include "lib/util/strbuf.h"

/* ---- checking the data: strict UTF-8 JSON, a version 1 object ----------- */

#define JSON_MAX_DEPTH 512

struct jcheck {
	const unsigned char *s;
	size_t len, pos;
	const char *why;
	bool version_one;       /* the last top-level "version" member is the number 1 */
};

static bool jfail(struct jcheck *j, const char *why)
{
	if (!j->why)
		j->why = why;
	return false;
}

static void jspace(struct jcheck *j)
{
	while (j->pos < j->len && strchr(" \t\r\n", j->s[j->pos]) && j->s[j->pos])
		j->pos++;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A string at j->pos (its opening quote); its decoded text into *text when not NULL. */
static bool jstring(struct jcheck *j, struct strbuf *text)
{
	j->pos++;
	for (;;) {
		uint32_t cp;
		size_t n;
		if (j->pos >= j->len)
			return jfail(j, "unterminated string");
		if (j->s[j->pos] == '"') {
			j->pos++;
			return true;
		}
		if (j->s[j->pos] == '\\') {
			int c = j->pos + 1 < j->len ? j->s[j->pos + 1] : 0;
			const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t", *k;
			if (c == 'u') {
				unsigned v = 0;
				for (int i = 0; i < 4; i++) {
					int h = j->pos + 2 + i < j->len ? hexval(j->s[j->pos + 2 + i]) : -1;
					if (h < 0)
						return jfail(j, "bad \\u escape");
					v = v << 4 | (unsigned)h;
				}
				if (text) {
					/* Code units as Python keeps them: surrogates stay unpaired. */
					char buf[4];
					size_t m = v < 0x80 ? 1 : v < 0x800 ? 2 : 3;
					if (m == 1)
						buf[0] = (char)v;
					else if (m == 2)
						buf[0] = (char)(0xc0 | v >> 6), buf[1] = (char)(0x80 | (v & 0x3f));
					else
						buf[0] = (char)(0xe0 | v >> 12),
						buf[1] = (char)(0x80 | ((v >> 6) & 0x3f)),
						buf[2] = (char)(0x80 | (v & 0x3f));
					strbuf_add(text, buf, m);
				}
				j->pos += 6;
				continue;
			}
			if (!c || !(k = strchr(from, c)))
				return jfail(j, "bad escape");
			if (text)
				strbuf_addch(text, to[k - from]);
			j->pos += 2;
			continue;
		}
		n = mp_utf8_decode(j->s + j->pos, j->len - j->pos, &cp);
		if (!n)
			return jfail(j, "invalid UTF-8");
		if (cp < 0x20)
			return jfail(j, "control character in a string");
		if (text)
			strbuf_add(text, j->s + j->pos, n);
		j->pos += n;
	}
}

static bool digits(struct jcheck *j)
{
	size_t start = j->pos;
	while (j->pos < j->len && j->s[j->pos] >= '0' && j->s[j->pos] <= '9')
		j->pos++;
	return j->pos > start;
}

/* A number; *one when it equals 1. */
static bool jnumber(struct jcheck *j, bool *one)
{
	size_t start = j->pos;
	char buf[64];
	if (j->s[j->pos] == '-')
		j->pos++;
	if (j->pos < j->len && j->s[j->pos] == '0')
		j->pos++;
	else if (!digits(j))
		return jfail(j, "bad number");
	if (j->pos < j->len && j->s[j->pos] == '.') {
		j->pos++;
		if (!digits(j))
			return jfail(j, "bad number");
	}
	if (j->pos < j->len && (j->s[j->pos] == 'e' || j->s[j->pos] == 'E')) {
		j->pos++;
		if (j->pos < j->len && (j->s[j->pos] == '+' || j->s[j->pos] == '-'))
			j->pos++;
		if (!digits(j))
			return jfail(j, "bad number");
	}
	*one = false;
	if (j->pos - start < sizeof(buf)) {
		memcpy(buf, j->s + start, j->pos - start);
		buf[j->pos - start] = 0;
		*one = strtod(buf, NULL) == 1.0;
	}
	return true;
}

static bool jvalue(struct jcheck *j, int depth, bool *one);

static bool jmembers(struct jcheck *j, int depth, bool is_object)
{
	struct strbuf key = STRBUF_INIT;
	bool ok = true, first = true, one;
	char close = is_object ? '}' : ']';
	j->pos++;
	jspace(j);
	if (j->pos < j->len && j->s[j->pos] == close) {
		j->pos++;
		return true;
	}
	while (ok) {
		if (!first) {
			jspace(j);
			if (j->pos < j->len && j->s[j->pos] == close) {
				j->pos++;
				break;
			}
			if (j->pos >= j->len || j->s[j->pos] != ',') {
				ok = jfail(j, is_object ? "expected ',' or '}'" : "expected ',' or ']'");
				break;
			}
			j->pos++;
			jspace(j);
		}
		first = false;
		if (is_object) {
			strbuf_reset(&key);
			if (j->pos >= j->len || j->s[j->pos] != '"') {
				ok = jfail(j, "expected a member name");
				break;
			}
			if (!jstring(j, depth == 1 ? &key : NULL)) {
				ok = false;
				break;
			}
			jspace(j);
			if (j->pos >= j->len || j->s[j->pos] != ':') {
				ok = jfail(j, "expected ':'");
				break;
			}
			j->pos++;
			jspace(j);
		}
		ok = jvalue(j, depth, &one);
		if (ok && is_object && depth == 1 && key.len == 7 && !memcmp(key.buf, "version", 7))
			j->version_one = one;
	}
	strbuf_release(&key);
	return ok;
}

static bool jliteral(struct jcheck *j, const char *word)
{
	size_t n = strlen(word);
	if (j->len - j->pos < n || memcmp(j->s + j->pos, word, n))
		return jfail(j, "unexpected character");
	j->pos += n;
	return true;
}

/* A value at depth (0 for the top level); *one when it is the number 1. */
static bool jvalue(struct jcheck *j, int depth, bool *one)
{
	int c;
	*one = false;
	if (j->pos >= j->len)
		return jfail(j, "unexpected end");
	if (depth >= JSON_MAX_DEPTH)
		return jfail(j, "nested too deeply");
	c = j->s[j->pos];
	if (c == '{' || c == '[')
		return jmembers(j, depth + 1, c == '{');
	if (c == '"')
		return jstring(j, NULL);
	if (c == '-' || (c >= '0' && c <= '9'))
		return jnumber(j, one);
	if (c == 't')
		return jliteral(j, "true");
	if (c == 'f')
		return jliteral(j, "false");
	if (c == 'n')
		return jliteral(j, "null");
	return jfail(j, "unexpected character");
}

/* Check data[0..len) (already stripped); 0 or -1 with a reason. */
static int check_data(const char *data, size_t len, struct strbuf *err)
{
	struct jcheck j = { (const unsigned char *)data, len, 0, NULL, false };
	bool one, ok = jvalue(&j, 0, &one);
	if (ok) {
		jspace(&j);
		if (j.pos != j.len)
			ok = jfail(&j, "extra data");
	}
	if (!ok) {
		strbuf_addf(err, "data is not UTF-8 JSON: %s at byte %zu", j.why, j.pos);
		return -1;
	}
	if (data[0] != '{' || !j.version_one) {
		strbuf_addstr(err, "data is not a version 1 report object");
		return -1;
	}
	return 0;
}

/* ---- template expansion -------------------------------------------------- */

#define MARK "<!--memprof:"
#define DATA_DIRECTIVE "<!--memprof:data-->"
#define INCLUDE_PREFIX "<!--memprof:include "
#define DIRECTIVE_END "-->"

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static bool contains(const char *hay, size_t len, const char *needle)
{
	size_t n = strlen(needle);
	for (size_t i = 0; i + n <= len; i++)
		if (!memcmp(hay + i, needle, n))
			return true;
	return false;
}

/* ASCII case-insensitive search. */
static bool contains_nocase(const char *hay, size_t len, const char *needle)
{
	size_t n = strlen(needle);
	for (size_t i = 0; i + n <= len; i++) {
		size_t k = 0;
		while (k < n && (hay[i + k] | (hay[i + k] >= 'A' && hay[i + k] <= 'Z' ? 0x20 : 0)) ==
				       needle[k])
			k++;
		if (k == n)
			return true;
	}
	return false;
}

/* The extension of an include name ("css", "js", "html"), or NULL when the name is not allowed. */
static const char *include_ext(const char *name, size_t len)
{
	static const char *const exts[] = { "css", "js", "html" };
	if (!len || !(name[0] == '_' || (name[0] >= 'A' && name[0] <= 'Z') ||
		      (name[0] >= 'a' && name[0] <= 'z') || (name[0] >= '0' && name[0] <= '9')))
		return NULL;
	for (size_t i = 1; i < len; i++)
		if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-",
			    name[i]) || !name[i])
			return NULL;
	for (size_t i = 0; i < 3; i++) {
		size_t n = strlen(exts[i]);
		/* At least one character before the dot. */
		if (len >= n + 2 && name[len - n - 1] == '.' && !memcmp(name + len - n, exts[i], n))
			return exts[i];
	}
	return NULL;
}

static int add_include(const char *dir, const char *name, size_t len, const char *ext,
		       struct strbuf *out, struct strbuf *err)
{
	static const char *const forbidden_js[] = { "</script", "<script", "<!--", NULL };
	static const char *const forbidden_css[] = { "</style", NULL };
	const char *const *forbidden = !strcmp(ext, "js") ? forbidden_js
				       : !strcmp(ext, "css") ? forbidden_css
							     : NULL;
	struct strbuf path = STRBUF_INIT, body = STRBUF_INIT;
	int ret = -1;
	strbuf_addf(&path, "%s/", dir);
	strbuf_add(&path, name, len);
	if (strbuf_read_file(&body, path.buf, 0) < 0) {
		strbuf_addf(err, "cannot read include '%s': %s", path.buf, strerror(errno));
		goto out;
	}
	for (size_t i = 0; forbidden && forbidden[i]; i++)
		if (contains_nocase(body.buf, body.len, forbidden[i])) {
			strbuf_addf(err, "include '%s' contains '%s'", path.buf, forbidden[i]);
			goto out;
		}
	if (!forbidden && contains(body.buf, body.len, MARK)) {
		strbuf_addf(err, "include '%s' contains '%s'", path.buf, MARK);
		goto out;
	}
	if (body.len && body.buf[body.len - 1] != '\n')
		strbuf_addch(&body, '\n');
	strbuf_addstr(out, !strcmp(ext, "css") ? "<style>\n" : !strcmp(ext, "js") ? "<script>\n" : "");
	strbuf_add(out, body.buf, body.len);
	strbuf_addstr(out, !strcmp(ext, "css") ? "</style>\n" : !strcmp(ext, "js") ? "</script>\n" : "");
	ret = 0;
out:
	strbuf_release(&path);
	strbuf_release(&body);
	return ret;
}

/* The data element: the escaping rule of the README, on already stripped JSON text. */
static void add_data(const char *data, size_t len, struct strbuf *out)
{
	size_t from = 0;
	strbuf_grow(out, len + len / 16 + 64);
	strbuf_addstr(out, "<script type=\"application/json\" id=\"memprof-data\">");
	for (size_t i = 0; i < len; i++) {
		const char *esc = NULL;
		size_t skip = 1;
		switch (data[i]) {
		case '<': esc = "\\u003c"; break;
		case '>': esc = "\\u003e"; break;
		case '&': esc = "\\u0026"; break;
		case '\xe2':
			if (i + 2 < len && data[i + 1] == '\x80' &&
			    (data[i + 2] == '\xa8' || data[i + 2] == '\xa9')) {
				esc = data[i + 2] == '\xa8' ? "\\u2028" : "\\u2029";
				skip = 3;
			}
			break;
		}
		if (!esc)
			continue;
		strbuf_add(out, data + from, i - from);
		strbuf_addstr(out, esc);
		i += skip - 1;
		from = i + 1;
	}
	strbuf_add(out, data + from, len - from);
	strbuf_addstr(out, "</script>\n");
}

int mp_html_expand(const char *template_path, const char *data, size_t len, struct strbuf *out,
		   struct strbuf *err)
{
	struct strbuf tpl = STRBUF_INIT, page = STRBUF_INIT, dir = STRBUF_INIT;
	const char *slash = strrchr(template_path, '/');
	size_t pos = 0, lineno = 0, ndata = 0;
	int ret = -1;

	if (strbuf_read_file(&tpl, template_path, 0) < 0) {
		strbuf_addf(err, "cannot read template '%s': %s", template_path, strerror(errno));
		goto out;
	}
	if (slash)
		strbuf_add(&dir, template_path, slash == template_path ? 1 : (size_t)(slash - template_path));
	else
		strbuf_addch(&dir, '.');
	/* The data without the white space around it. */
	while (len && strchr(" \t\r\n", data[0]) && data[0])
		data++, len--;
	while (len && strchr(" \t\r\n", data[len - 1]) && data[len - 1])
		len--;

	while (pos < tpl.len) {
		const char *line = tpl.buf + pos, *nl = memchr(line, '\n', tpl.len - pos);
		size_t n = nl ? (size_t)(nl - line) : tpl.len - pos, s = 0, e = n;
		pos += nl ? n + 1 : n;
		lineno++;
		if (!contains(line, n, MARK)) {
			strbuf_add(&page, line, nl ? n + 1 : n);
			continue;
		}
		while (s < e && is_blank(line[s]))
			s++;
		while (e > s && is_blank(line[e - 1]))
			e--;
		if (e - s == strlen(DATA_DIRECTIVE) && !memcmp(line + s, DATA_DIRECTIVE, e - s)) {
			if (check_data(data, len, err) < 0)
				goto out;
			add_data(data, len, &page);
			ndata++;
			continue;
		}
		if (e - s > strlen(INCLUDE_PREFIX) + strlen(DIRECTIVE_END) &&
		    !memcmp(line + s, INCLUDE_PREFIX, strlen(INCLUDE_PREFIX)) &&
		    !memcmp(line + e - 3, DIRECTIVE_END, 3)) {
			const char *name = line + s + strlen(INCLUDE_PREFIX);
			size_t nlen = e - 3 - (s + strlen(INCLUDE_PREFIX));
			const char *ext = include_ext(name, nlen);
			if (ext) {
				if (add_include(dir.buf, name, nlen, ext, &page, err) < 0)
					goto out;
				continue;
			}
		}
		strbuf_addf(err, "%s:%zu: bad directive", template_path, lineno);
		goto out;
	}
	if (ndata != 1) {
		strbuf_addf(err, "'%s' has %zu data directives, expected one", template_path, ndata);
		goto out;
	}
	strbuf_add(out, page.buf, page.len);
	ret = 0;
out:
	strbuf_release(&tpl);
	strbuf_release(&page);
	strbuf_release(&dir);
	return ret;
}
