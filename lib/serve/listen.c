/* Where memprof serve listens, and who is on the other end of a connection. */
#include <config.h>
#include "lib/serve/serve-private.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
		return IN6_IS_ADDR_LOOPBACK(a) || (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
	}
	return false;
}

int mp_serve_parse_listen(const char *spec, struct sockaddr_storage *ss, socklen_t *len,
			  bool *loopback, struct strbuf *err)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
	struct addrinfo *ai = NULL;
	char host[256] = "127.0.0.1", port[16] = "0";
	const char *colon;
	char *end;
	unsigned long p;
	int r;
	if (!spec)
		spec = "127.0.0.1:0";
	colon = strrchr(spec, ':');
	if (spec[0] == '[') {
		const char *close = strchr(spec, ']');
		if (!close || close[1] != ':' || (size_t)(close - spec - 1) >= sizeof(host))
			goto bad;
		memcpy(host, spec + 1, (size_t)(close - spec - 1));
		host[close - spec - 1] = '\0';
		colon = close + 1;
	} else if (!colon) {
		colon = spec - 1; /* PORT alone */
	} else if (colon > spec) {
		if ((size_t)(colon - spec) >= sizeof(host) || memchr(spec, ':', (size_t)(colon - spec)))
			goto bad; /* an IPv6 address goes in brackets */
		memcpy(host, spec, (size_t)(colon - spec));
		host[colon - spec] = '\0';
	}
	errno = 0;
	p = strtoul(colon + 1, &end, 10);
	if (!colon[1] || *end || errno || p > 65535 || colon[1] < '0' || colon[1] > '9')
		goto bad;
	snprintf(port, sizeof(port), "%lu", p);
	r = getaddrinfo(host, port, &hints, &ai);
	if (r) {
		strbuf_addf(err, "cannot listen on '%s': %s", spec, gai_strerror(r));
		return -1;
	}
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	*len = ai->ai_addrlen;
	*loopback = is_loopback(ai->ai_addr);
	freeaddrinfo(ai);
	return 0;
bad:
	strbuf_addf(err, "invalid listen address '%s' (ADDR:PORT, [IPV6]:PORT, :PORT or PORT)", spec);
	return -1;
}

int mp_serve_listen(struct sockaddr_storage *ss, socklen_t len, struct strbuf *err)
{
	struct strbuf where = STRBUF_INIT;
	int one = 1, fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	mp_serve_addr_str((struct sockaddr *)ss, &where);
	if (fd >= 0) {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, (struct sockaddr *)ss, len) == 0 && listen(fd, 32) == 0 &&
		    getsockname(fd, (struct sockaddr *)ss, &len) == 0) {
			strbuf_release(&where);
			return fd;
		}
	}
	strbuf_addf(err, "cannot listen on '%s': %s", where.buf, strerror(errno));
	if (fd >= 0)
		close(fd);
	strbuf_release(&where);
	return -1;
}

void mp_serve_addr_str(const struct sockaddr *sa, struct strbuf *out)
{
	char a[INET6_ADDRSTRLEN] = "?";
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
		inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof(a));
		strbuf_addf(out, "[%s]:%u", a, ntohs(s6->sin6_port));
	} else if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;
		inet_ntop(AF_INET, &s4->sin_addr, a, sizeof(a));
		strbuf_addf(out, "%s:%u", a, ntohs(s4->sin_port));
	} else {
		strbuf_addstr(out, "?");
	}
}

/* An address of /proc/net/tcp{,6} ("0100007F", 32 hex digits for IPv6) as its raw words. */
static int hex_words(const char *hex, uint32_t *w, int n)
{
	if (strlen(hex) != (size_t)n * 8)
		return -1;
	for (int i = 0; i < n; i++) {
		char word[9];
		memcpy(word, hex + i * 8, 8);
		word[8] = '\0';
		w[i] = (uint32_t)strtoul(word, NULL, 16);
	}
	return 0;
}

/* The raw words of an address (what the kernel prints) and its port. */
static int words_of(const struct sockaddr *sa, uint32_t w[4], unsigned *port)
{
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;
		memcpy(w, &s4->sin_addr, 4);
		*port = ntohs(s4->sin_port);
		return 1;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
		memcpy(w, &s6->sin6_addr, 16);
		*port = ntohs(s6->sin6_port);
		return 4;
	}
	return 0;
}

int mp_serve_peer_uid(int fd, const struct sockaddr *peer, uid_t *uid)
{
	struct sockaddr_storage self;
	socklen_t slen = sizeof(self);
	uint32_t pw[4], sw[4];
	unsigned pport, sport;
	int n;
	char line[512];
	FILE *f;
	int found = -1;
	if (!is_loopback(peer) || getsockname(fd, (struct sockaddr *)&self, &slen) < 0)
		return -1;
	n = words_of(peer, pw, &pport);
	if (!n || words_of((struct sockaddr *)&self, sw, &sport) != n)
		return -1;
	f = fopen(n == 1 ? "/proc/net/tcp" : "/proc/net/tcp6", "re");
	if (!f)
		return -1;
	/* The peer's own socket: its local address is our peer's, its remote ours. */
	while (found < 0 && fgets(line, sizeof(line), f)) {
		char la[40], ra[40];
		unsigned lp, rp, u;
		uint32_t lw[4], rw[4];
		if (sscanf(line, " %*u: %39[0-9A-Fa-f]:%x %39[0-9A-Fa-f]:%x %*x %*x:%*x %*x:%*x %*x %u", la,
			   &lp, ra, &rp, &u) != 5 ||
		    hex_words(la, lw, n) || hex_words(ra, rw, n))
			continue;
		if (lp == pport && rp == sport && !memcmp(lw, pw, (size_t)n * 4) &&
		    !memcmp(rw, sw, (size_t)n * 4)) {
			*uid = (uid_t)u;
			found = 0;
		}
	}
	fclose(f);
	return found;
}

bool mp_serve_same_secret(const char *given, const char *secret)
{
	size_t lg = strlen(given), ls = strlen(secret);
	unsigned char d = lg != ls || !ls;
	/* Every byte given is looked at, whatever matched before: the time tells the length only. */
	for (size_t i = 0; i < lg; i++)
		d |= (unsigned char)given[i] ^ (unsigned char)secret[ls ? i % ls : 0];
	return d == 0;
}
