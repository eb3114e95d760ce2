// SPDX-License-Identifier: GPL-2.0
/*
 * Small helpers: byte buffers, a string set, time and number parsing.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __GLIBC__
#include <malloc.h>	/* malloc_trim() */
#endif

#include "util.h"

static char empty_str[1];

void s3d_buf_init(struct s3d_buf *b, size_t max)
{
	memset(b, 0, sizeof(*b));
	b->max = max;
}

void s3d_buf_free(struct s3d_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
	b->err = 0;
}

/* Keep the memory, forget the contents and any error. */
void s3d_buf_reset(struct s3d_buf *b)
{
	b->len = 0;
	b->err = 0;
	if (b->p)
		b->p[0] = '\0';
}

static bool buf_grow(struct s3d_buf *b, size_t n)
{
	size_t want, cap;
	char *p;

	if (b->err)
		return false;
	if (n > SIZE_MAX - b->len - 1 || (b->max && b->len + n > b->max)) {
		b->err = -E2BIG;
		return false;
	}
	want = b->len + n + 1;
	if (want <= b->cap)
		return true;
	cap = b->cap ? b->cap : 64;
	while (cap < want)
		cap = cap > SIZE_MAX / 2 ? want : cap * 2;
	p = realloc(b->p, cap);
	if (!p) {
		b->err = -ENOMEM;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

void s3d_buf_add(struct s3d_buf *b, const void *data, size_t n)
{
	if (!buf_grow(b, n))
		return;
	memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void s3d_buf_adds(struct s3d_buf *b, const char *s)
{
	s3d_buf_add(b, s, strlen(s));
}

void s3d_buf_addc(struct s3d_buf *b, char c)
{
	s3d_buf_add(b, &c, 1);
}

void s3d_buf_addf(struct s3d_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		if (!b->err)
			b->err = -EINVAL;
		return;
	}
	if (!buf_grow(b, n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, n + 1, fmt, ap);
	va_end(ap);
	b->len += n;
}

/* Never NULL, so callers can print an empty buffer. */
const char *s3d_buf_str(const struct s3d_buf *b)
{
	return b->p ? b->p : empty_str;
}

/* Hand the string to the caller (who frees it); NULL if an append failed. */
char *s3d_buf_steal(struct s3d_buf *b)
{
	char *p;

	if (b->err) {
		s3d_buf_free(b);
		return NULL;
	}
	p = b->p ? b->p : strdup("");
	b->p = NULL;
	b->len = b->cap = 0;
	return p;
}

/* ---- string set: chained hash table, FNV-1a ---- */
struct s3d_strset_ent {
	struct s3d_strset_ent *next;
	int val;
	char key[];
};

/* FNV-1a of a string: the hash of the daemon's string tables. */
uint64_t s3d_hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (*s) {
		h ^= (unsigned char)*s++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

void s3d_strset_init(struct s3d_strset *s)
{
	memset(s, 0, sizeof(*s));
}

void s3d_strset_free(struct s3d_strset *s)
{
	struct s3d_strset_ent *e, *next;
	size_t i;

	for (i = 0; i < s->nbuckets; i++) {
		for (e = s->tab[i]; e; e = next) {
			next = e->next;
			free(e);
		}
	}
	free(s->tab);
	s3d_strset_init(s);
}

void s3d_heap_release(void)
{
#ifdef __GLIBC__
	malloc_trim(0);
#endif
}

static int strset_rehash(struct s3d_strset *s)
{
	size_t n = s->nbuckets ? s->nbuckets * 2 : 64, i;
	struct s3d_strset_ent **tab, *e, *next;

	tab = calloc(n, sizeof(*tab));
	if (!tab)
		return -ENOMEM;
	for (i = 0; i < s->nbuckets; i++) {
		for (e = s->tab[i]; e; e = next) {
			size_t h = s3d_hash_str(e->key) & (n - 1);

			next = e->next;
			e->next = tab[h];
			tab[h] = e;
		}
	}
	free(s->tab);
	s->tab = tab;
	s->nbuckets = n;
	return 0;
}

static struct s3d_strset_ent *strset_find(const struct s3d_strset *s,
					  const char *key)
{
	struct s3d_strset_ent *e;

	if (!s->nbuckets)
		return NULL;
	for (e = s->tab[s3d_hash_str(key) & (s->nbuckets - 1)]; e; e = e->next)
		if (!strcmp(e->key, key))
			return e;
	return NULL;
}

/* Insert or update. Returns 1 if added, 0 if updated, -ENOMEM. */
int s3d_strset_put(struct s3d_strset *s, const char *key, int val)
{
	struct s3d_strset_ent *e = strset_find(s, key);
	size_t len, h;

	if (e) {
		e->val = val;
		return 0;
	}
	if (s->count >= s->nbuckets && strset_rehash(s) < 0)
		return -ENOMEM;
	len = strlen(key);
	e = malloc(sizeof(*e) + len + 1);
	if (!e)
		return -ENOMEM;
	memcpy(e->key, key, len + 1);
	e->val = val;
	h = s3d_hash_str(key) & (s->nbuckets - 1);
	e->next = s->tab[h];
	s->tab[h] = e;
	s->count++;
	return 1;
}

bool s3d_strset_get(const struct s3d_strset *s, const char *key, int *val)
{
	struct s3d_strset_ent *e = strset_find(s, key);

	if (e && val)
		*val = e->val;
	return e != NULL;
}

/* ---- time and numbers ---- */
uint64_t s3d_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int s3d_parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		if (v > (UINT64_MAX - (*s - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (*s - '0');
	}
	*out = v;
	return 0;
}

/*
 * S3's LastModified: "2009-10-12T17:50:30.000Z" (fraction optional, always
 * UTC). Returns 0 and seconds since the epoch, or -EINVAL.
 */
int s3d_parse_iso8601(const char *s, time_t *out)
{
	struct tm tm = { 0 };
	int n = 0;
	time_t t;

	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon,
		   &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &n) != 6 ||
	    n != 19)
		return -EINVAL;
	s += n;
	if (*s == '.') {
		s++;
		if (*s < '0' || *s > '9')
			return -EINVAL;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	if (strcmp(s, "Z") && strcmp(s, "+00:00"))
		return -EINVAL;
	if (tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 ||
	    tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 ||
	    tm.tm_sec > 60)
		return -EINVAL;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	t = timegm(&tm);
	if (t == (time_t)-1)
		return -EINVAL;
	*out = t;
	return 0;
}

/*
 * The opaque part of an entity tag: without a weak marker ("W/") and
 * without the double quotes around it. S3 quotes ETags in headers and
 * listings alike, but servers differ (some listings leave the quotes out,
 * proxies mark responses weak), and they all name the same version.
 */
static void etag_core(const char *e, const char **p, size_t *n)
{
	size_t len;

	if ((e[0] == 'W' || e[0] == 'w') && e[1] == '/')
		e += 2;
	len = strlen(e);
	if (len >= 2 && e[0] == '"' && e[len - 1] == '"') {
		e++;
		len -= 2;
	}
	*p = e;
	*n = len;
}

/**
 * s3d_etag_eq() - do two ETags name the same object version?
 * @a: an ETag as one response gave it (quoted or not, weak or not)
 * @b: another
 *
 * Compares the values without a "W/" prefix and surrounding quotes, so
 * abc, "abc" and W/"abc" are equal. NULL equals nothing. Requests
 * still carry an ETag exactly as the server gave it (If-Match).
 *
 * Return: true if they are the same.
 */
bool s3d_etag_eq(const char *a, const char *b)
{
	const char *pa, *pb;
	size_t na, nb;

	if (!a || !b)
		return false;
	etag_core(a, &pa, &na);
	etag_core(b, &pb, &nb);
	return na == nb && !memcmp(pa, pb, na);
}

/**
 * s3d_etag_ok() - may an ETag a server sent be kept, logged and sent back?
 * @etag: the value as the response gave it
 * @n: its length in bytes (a NUL among them counts against it)
 *
 * An ETag goes into the cache file's tags, the kernel's inode, log lines
 * and If-Match headers: one with a control character (a CR or LF that
 * would end a header line, an escape sequence for a terminal) is refused
 * wherever it comes from (a listing, a HEAD, a GET, a write's answer).
 *
 * Return: true if @etag is not empty and holds no byte below 0x20 nor 0x7f.
 */
bool s3d_etag_ok(const char *etag, size_t n)
{
	size_t i;

	if (!etag || !n)
		return false;
	for (i = 0; i < n; i++)
		if ((unsigned char)etag[i] < 0x20 || etag[i] == 0x7f)
			return false;
	return true;
}

/**
 * s3d_etag_bare() - an ETag without a "W/" prefix and surrounding quotes
 * @etag: as a response gave it
 * @out: room for the result
 * @n: its size (the result is cut to fit)
 */
void s3d_etag_bare(const char *etag, char *out, size_t n)
{
	const char *p;
	size_t len;

	etag_core(etag, &p, &len);
	snprintf(out, n, "%.*s", (int)len, p);
}

/*
 * Length of the valid UTF-8 sequence at @s (of @n bytes) that is not a C1
 * control (U+0080..U+009F: some terminals take U+009B as CSI); 0 if none.
 * Overlong forms, surrogates and code points past U+10FFFF are invalid.
 */
static size_t utf8_ok(const unsigned char *s, size_t n)
{
	size_t len, i;
	unsigned char lo = 0x80, hi = 0xbf;

	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		if (s[0] == 0xc2)
			lo = 0xa0;	/* C1 controls */
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		if (s[0] == 0xe0)
			lo = 0xa0;	/* overlong */
		else if (s[0] == 0xed)
			hi = 0x9f;	/* surrogates */
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		if (s[0] == 0xf0)
			lo = 0x90;	/* overlong */
		else if (s[0] == 0xf4)
			hi = 0x8f;	/* past U+10FFFF */
	} else {
		return 0;
	}
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

/**
 * s3d_escape_mem() - @n bytes of @s fit for a log line
 * @s: text from outside (an S3 key, a path, a server's message)
 * @n: its length
 * @out: the result, always NUL terminated
 * @outlen: its size (at least 4)
 * @backslash: escape the backslash too (so the result reads back
 *	unambiguously); the logger does not, as callers may have escaped
 *
 * Control characters (below 0x20, 0x7f, and the C1 controls U+0080..
 * U+009F) and bytes that are not valid UTF-8 become \xNN, so a key cannot
 * forge or garble log lines (or drive a terminal); valid UTF-8 is kept.
 * What does not fit is cut and marked with "...".
 *
 * Return: the length of @out.
 */
size_t s3d_escape_mem(const char *s, size_t n, char *out, size_t outlen,
		      bool backslash)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, o = 0;

	while (i < n) {
		unsigned char c = u[i];
		size_t seq = c >= 0x80 ? utf8_ok(u + i, n - i) : 0;
		size_t need = seq ? seq :
			c < 0x20 || c >= 0x7f || (backslash && c == '\\') ?
			4 : 1;

		if (o + need + 4 > outlen) {
			if (o + 4 <= outlen) {
				memcpy(out + o, "...", 3);
				o += 3;
			}
			break;
		}
		if (seq) {
			memcpy(out + o, u + i, seq);
			o += seq;
			i += seq;
			continue;
		}
		if (need == 4) {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		} else {
			out[o++] = (char)c;
		}
		i++;
	}
	out[o] = '\0';
	return o;
}

/**
 * s3d_escape() - @s fit for a log line, backslash escaped too
 * @s: text from outside (an S3 key: any bytes but NUL)
 * @out: the result, always NUL terminated
 * @outlen: its size (at least 4)
 *
 * As s3d_escape_mem(), with the backslash as \x5c.
 */
void s3d_escape(const char *s, char *out, size_t outlen)
{
	s3d_escape_mem(s, strlen(s), out, outlen, true);
}

void s3d_hex(const unsigned char *in, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 15];
	}
	out[2 * n] = '\0';
}

/**
 * s3d_parse_size() - "123", "10G", "512MiB", "1.5T"? (integers only)
 * @s: the text
 * @out: bytes
 *
 * Return: 0 or -EINVAL/-ERANGE.
 */
int s3d_parse_size(const char *s, uint64_t *out)
{
	static const char units[] = "KMGTPE";
	uint64_t v = 0, mul = 1;
	const char *p = s, *u;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (*p && (u = strchr(units, *p & ~0x20))) {
		mul = 1ULL << (10 * (u - units + 1));
		p++;
		if (*p == 'i' && p[1] == 'B')
			p += 2;
		else if (*p == 'B' || *p == 'b')
			p++;
	} else if (*p == 'B' || *p == 'b') {
		p++;
	}
	if (*p)
		return -EINVAL;
	if (v && mul > UINT64_MAX / v)
		return -ERANGE;
	*out = v * mul;
	return 0;
}

/* Equal strings, or both NULL. */
bool s3d_str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static bool unreserved(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' ||
	       c == '~';
}

/**
 * s3d_uri_encode() - percent-encode as SigV4 and S3 require
 * @b: appended to
 * @s: bytes to encode (UTF-8 for keys)
 * @n: their number
 * @encode_slash: encode '/' too (query components); keep it in paths
 *
 * Everything but A-Z a-z 0-9 - _ . ~ becomes %XX with upper-case hex, byte
 * by byte, so multi-byte UTF-8 becomes one escape per byte.
 */
void s3d_uri_encode(struct s3d_buf *b, const char *s, size_t n,
		    bool encode_slash)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char c = s[i];

		if (unreserved(c) || (c == '/' && !encode_slash)) {
			s3d_buf_addc(b, c);
		} else {
			char esc[3] = { '%', hex[c >> 4], hex[c & 15] };

			s3d_buf_add(b, esc, 3);
		}
	}
}

/**
 * s3d_hexval() - the value of one hexadecimal digit
 * @c: the character
 *
 * Return: 0..15, or -1 if @c is not a hex digit.
 */
int s3d_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}
