/* Demangled C++ names: the qualified name past a return type, and template arguments elided. */
#include <config.h>
#include "lib/symbols/cxxname.h"

#include <string.h>

#define ANON "(anonymous namespace)"

static bool ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/* "operator" as a token at s + i (not "my_operator", not "operators"). */
static bool operator_at(const char *s, size_t i)
{
	return !strncmp(s + i, "operator", 8) && (i == 0 || s[i - 1] == ' ' || s[i - 1] == ':') &&
	       !ident_char(s[i + 8]);
}

/*
 * The length of the operator's symbol after "operator": the longest of
 * C++'s ("<<=", "->*", "()", "+"...); 0 for words (new, delete, a type).
 * What follows it may be its template arguments: operator+<char>.
 */
static size_t operator_span(const char *s)
{
	static const char *const ops[] = {
		"<<=", ">>=", "<=>", "->*", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "++", "--",
		"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "->", "()", "[]", "<", ">", "+", "-",
		"*", "/", "%", "^", "&", "|", "~", "!", "=", ",",
	};
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strncmp(s, ops[i], strlen(ops[i])))
			return strlen(ops[i]);
	return 0;
}

size_t mp_cxx_name_start(const char *name)
{
	size_t start = 0, i = 0;
	int depth = 0;
	if (!mp_cxx_is_name(name))
		return 0;
	while (name[i]) {
		char c = name[i];
		if (!strncmp(name + i, ANON, strlen(ANON))) {
			i += strlen(ANON);
			continue;
		}
		if (depth == 0 && operator_at(name, i))
			break; /* what follows belongs to the operator's name */
		if (c == '-' && name[i + 1] == '>') {
			i += 2;
			continue;
		}
		if (c == '<' || c == '{' || c == '[') {
			depth++;
		} else if (c == '>' || c == '}' || c == ']') {
			if (depth)
				depth--;
		} else if (c == '(') {
			if (!depth)
				break; /* the argument list */
			depth++;
		} else if (c == ')') {
			if (depth)
				depth--;
		} else if (c == ' ' && !depth) {
			start = i + 1;
		}
		i++;
	}
	return start;
}

bool mp_cxx_is_name(const char *name)
{
	return name[0] != '<' && name[0] != '[' && (strstr(name, "::") || strchr(name, '('));
}

void mp_cxx_shorten(const char *name, struct strbuf *out)
{
	size_t mark = out->len, i = 0;
	const char *s;
	int angle = 0;
	if (!mp_cxx_is_name(name)) {
		strbuf_addstr(out, name);
		return;
	}
	s = name + mp_cxx_name_start(name);
	while (s[i]) {
		size_t op;
		if (operator_at(s, i)) {
			/* operator<, operator->, operator<=>: not brackets. */
			op = operator_span(s + i + 8);
			if (!angle)
				strbuf_add(out, s + i, 8 + op);
			i += 8 + op;
			continue;
		}
		if (s[i] == '-' && s[i + 1] == '>') {
			if (!angle)
				strbuf_add(out, s + i, 2);
			i += 2;
			continue;
		}
		if (s[i] == '<') {
			if (!angle++)
				strbuf_addstr(out, "<\u2026");
		} else if (s[i] == '>' && angle) {
			if (!--angle)
				strbuf_addch(out, '>');
		} else if (!angle) {
			strbuf_addch(out, s[i]);
		}
		i++;
	}
	if (angle) {
		/* Brackets that do not balance: not a name this reads. */
		strbuf_setlen(out, mark);
		strbuf_addstr(out, name);
	}
}
