/*
 * The demo program of `make demo`: a tiny word-frequency indexer with the
 * memory habits memprof is for. It reads generated "documents", keeps a
 * hash table of words (freed at the end), a per-document summary cache
 * that is never freed (a leak), and makes a short-lived scratch buffer for
 * every line (temporary allocations). Deterministic: the same run every time.
 *
 *   examples/demo [DOCUMENTS]    (default 200)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct word {
	char *text;
	unsigned long count;
	struct word *next;
};

struct index {
	struct word **buckets;
	size_t nbuckets, nwords;
};

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next_random(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n);
	if (!p) {
		fputs("demo: out of memory\n", stderr);
		exit(1);
	}
	return p;
}

static size_t hash_word(const char *s)
{
	size_t h = 5381;
	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h;
}

__attribute__((noinline)) static void index_grow(struct index *ix)
{
	size_t n = ix->nbuckets ? ix->nbuckets * 2 : 64;
	struct word **b = calloc(n, sizeof(*b));
	if (!b) {
		fputs("demo: out of memory\n", stderr);
		exit(1);
	}
	for (size_t i = 0; i < ix->nbuckets; i++)
		for (struct word *w = ix->buckets[i], *next; w; w = next) {
			next = w->next;
			w->next = b[hash_word(w->text) % n];
			b[hash_word(w->text) % n] = w;
		}
	free(ix->buckets);
	ix->buckets = b;
	ix->nbuckets = n;
}

__attribute__((noinline)) static void index_add(struct index *ix, const char *text)
{
	struct word *w;
	if (ix->nwords >= ix->nbuckets)
		index_grow(ix);
	for (w = ix->buckets[hash_word(text) % ix->nbuckets]; w; w = w->next)
		if (!strcmp(w->text, text)) {
			w->count++;
			return;
		}
	w = xmalloc(sizeof(*w));
	w->text = strdup(text);
	w->count = 1;
	w->next = ix->buckets[hash_word(text) % ix->nbuckets];
	ix->buckets[hash_word(text) % ix->nbuckets] = w;
	ix->nwords++;
}

static void index_free(struct index *ix)
{
	for (size_t i = 0; i < ix->nbuckets; i++)
		for (struct word *w = ix->buckets[i], *next; w; w = next) {
			next = w->next;
			free(w->text);
			free(w);
		}
	free(ix->buckets);
}

/* A line of generated text in a fresh buffer: the caller frees it (temporary). */
__attribute__((noinline)) static char *make_line(void)
{
	size_t words = 4 + next_random() % 12, len = 0;
	char *line = xmalloc(words * 12 + 1);
	for (size_t i = 0; i < words; i++) {
		size_t wl = 2 + next_random() % 6;
		/* Few distinct words: a natural-language-like vocabulary. */
		uint64_t stem = next_random() % 3000;
		for (size_t j = 0; j < wl; j++)
			line[len++] = (char)('a' + (stem >> (j * 2)) % 26);
		line[len++] = ' ';
	}
	line[len] = 0;
	return line;
}

__attribute__((noinline)) static void index_line(struct index *ix, char *line)
{
	for (char *tok = strtok(line, " "); tok; tok = strtok(NULL, " "))
		index_add(ix, tok);
}

/* The summary cache: one string per document, never freed (the leak). */
static char **summaries;
static size_t nsummaries;

__attribute__((noinline)) static void remember_summary(unsigned doc, size_t lines)
{
	char *s = xmalloc(64);
	snprintf(s, 64, "document %u: %zu lines", doc, lines);
	summaries = realloc(summaries, (nsummaries + 1) * sizeof(*summaries));
	summaries[nsummaries++] = s;
}

__attribute__((noinline)) static void index_document(struct index *ix, unsigned doc)
{
	size_t lines = 20 + next_random() % 80;
	for (size_t i = 0; i < lines; i++) {
		char *line = make_line();
		index_line(ix, line);
		free(line);
	}
	remember_summary(doc, lines);
}

int main(int argc, char **argv)
{
	struct index ix = { 0 };
	unsigned docs = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 200;
	unsigned long total = 0;
	for (unsigned d = 0; d < docs; d++)
		index_document(&ix, d);
	for (size_t i = 0; i < ix.nbuckets; i++)
		for (struct word *w = ix.buckets[i]; w; w = w->next)
			total += w->count;
	printf("demo: indexed %u documents, %zu distinct words, %lu words in all\n", docs,
	       ix.nwords, total);
	index_free(&ix);
	return 0;
}
