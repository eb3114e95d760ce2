// SPDX-License-Identifier: GPL-2.0
/*
 * sigv4-check - sign the requests of sigv4-vectors.js with s3cachefsd's own
 * S3 client (libs3c.a), for comparison with @smithy/signature-v4.
 *
 *   sigv4-check < INPUT > OUTPUT
 *
 * INPUT: one request a line, "name=HEX" fields (sigv4-vectors.js cinput).
 * OUTPUT: "ID URL AUTHORIZATION CANONICAL-REQUEST" a line, each but ID as
 * hex of its bytes.
 *
 * Unsigned payloads: the URL and Authorization are exactly what
 * s3d_s3_build() produces. A hashed body (which the daemon never sends) is
 * signed by s3d_sigv4() from the request s3d_s3_build() produced, with
 * x-amz-content-sha256 set to s3d_sha256_hex() of the body. The canonical
 * request printed is s3d_sigv4()'s for what goes on the wire: URL path and
 * query as sent, headers as sent.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "lib/s3.h"

#define MAX_KV	16

struct vec {
	char *id, *method, *endpoint, *bucket, *key, *region, *ak, *sk;
	char *token, *body;
	size_t body_len;
	int path_style;
	long long time;
	struct s3d_kv query[MAX_KV], hdrs[MAX_KV];
	size_t nquery, nhdrs;
	bool has_body;
};

static int unhex(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Decode N hex digits of S into a new NUL-terminated string (or NULL). */
static char *from_hex(const char *s, size_t n, size_t *len)
{
	char *d;
	size_t i;

	if (n % 2)
		return NULL;
	d = malloc(n / 2 + 1);
	if (!d)
		return NULL;
	for (i = 0; i < n / 2; i++) {
		int hi = unhex(s[2 * i]), lo = unhex(s[2 * i + 1]);

		if (hi < 0 || lo < 0) {
			free(d);
			return NULL;
		}
		d[i] = (char)(hi << 4 | lo);
	}
	d[n / 2] = '\0';
	if (len)
		*len = n / 2;
	return d;
}

static void put_hex(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		printf("%02x", (unsigned char)s[i]);
}

static void vec_free(struct vec *v)
{
	size_t i;

	free(v->id);
	free(v->method);
	free(v->endpoint);
	free(v->bucket);
	free(v->key);
	free(v->region);
	free(v->ak);
	free(v->sk);
	free(v->token);
	free(v->body);
	for (i = 0; i < v->nquery; i++) {
		free((char *)v->query[i].name);
		free((char *)v->query[i].value);
	}
	for (i = 0; i < v->nhdrs; i++) {
		free((char *)v->hdrs[i].name);
		free((char *)v->hdrs[i].value);
	}
	memset(v, 0, sizeof(*v));
}

static int parse_kv(const char *val, struct s3d_kv *kv, size_t *n)
{
	const char *comma = strchr(val, ',');

	if (!comma || *n >= MAX_KV)
		return -EINVAL;
	kv[*n].name = from_hex(val, (size_t)(comma - val), NULL);
	kv[*n].value = from_hex(comma + 1, strlen(comma + 1), NULL);
	if (!kv[*n].name || !kv[*n].value) {
		free((char *)kv[*n].name);
		free((char *)kv[*n].value);
		return -EINVAL;
	}
	(*n)++;
	return 0;
}

static int parse_line(char *line, struct vec *v)
{
	char *save = NULL, *f;

	memset(v, 0, sizeof(*v));
	for (f = strtok_r(line, " \n", &save); f; f = strtok_r(NULL, " \n", &save)) {
		char *val = strchr(f, '='), **dst = NULL;

		if (!val)
			return -EINVAL;
		*val++ = '\0';
		if (!strcmp(f, "id"))
			v->id = strdup(val);
		else if (!strcmp(f, "ps"))
			v->path_style = atoi(val);
		else if (!strcmp(f, "time"))
			v->time = atoll(val);
		else if (!strcmp(f, "body")) {
			v->has_body = true;
			v->body = from_hex(val, strcmp(val, "-") ? strlen(val) : 0,
					   &v->body_len);
			if (!v->body)
				return -EINVAL;
		} else if (!strcmp(f, "q")) {
			if (parse_kv(val, v->query, &v->nquery))
				return -EINVAL;
		} else if (!strcmp(f, "h")) {
			if (parse_kv(val, v->hdrs, &v->nhdrs))
				return -EINVAL;
		} else if (!strcmp(f, "method"))
			dst = &v->method;
		else if (!strcmp(f, "endpoint"))
			dst = &v->endpoint;
		else if (!strcmp(f, "bucket"))
			dst = &v->bucket;
		else if (!strcmp(f, "key"))
			dst = &v->key;
		else if (!strcmp(f, "region"))
			dst = &v->region;
		else if (!strcmp(f, "ak"))
			dst = &v->ak;
		else if (!strcmp(f, "sk"))
			dst = &v->sk;
		else if (!strcmp(f, "token"))
			dst = &v->token;
		else
			return -EINVAL;
		if (dst) {
			*dst = from_hex(val, strlen(val), NULL);
			if (!*dst)
				return -EINVAL;
		}
	}
	if (!v->id || !v->method || !v->endpoint || !v->bucket || !v->key ||
	    !v->region || !v->ak || !v->sk)
		return -EINVAL;
	return 0;
}

/* %XX-decode N bytes of S (the URL's query components). */
static char *pct_decode(const char *s, size_t n)
{
	char *d = malloc(n + 1), *p = d;
	size_t i;

	if (!d)
		return NULL;
	for (i = 0; i < n; i++) {
		if (s[i] == '%' && i + 2 < n && unhex(s[i + 1]) >= 0 &&
		    unhex(s[i + 2]) >= 0) {
			*p++ = (char)(unhex(s[i + 1]) << 4 | unhex(s[i + 2]));
			i += 2;
		} else {
			*p++ = s[i];
		}
	}
	*p = '\0';
	return d;
}

/*
 * Sign what @req sends (URL path and query, its headers but Authorization)
 * with s3d_sigv4(); @payload_hash replaces x-amz-content-sha256.
 */
static int resign(const struct vec *v, const struct s3d_http_req *req,
		  const char *payload_hash, struct s3d_sigv4_out *sig)
{
	struct s3d_kv q[MAX_KV], h[S3D_HDR_MAX];
	char *path = NULL, *hv[S3D_HDR_MAX] = { 0 }, *qs, *amz_date = NULL;
	size_t nq = 0, nh = 0, i;
	const char *p;
	int err = -EINVAL;

	memset(q, 0, sizeof(q));
	p = strstr(req->url, "://");
	p = p ? strchr(p + 3, '/') : NULL;
	if (!p)
		return -EINVAL;
	qs = strchr(p, '?');
	path = strndup(p, qs ? (size_t)(qs - p) : strlen(p));
	for (qs = qs ? qs + 1 : NULL; qs && *qs && nq < MAX_KV; nq++) {
		size_t len = strcspn(qs, "&"), nl = strcspn(qs, "=");

		if (nl > len)
			nl = len;
		q[nq].name = pct_decode(qs, nl);
		q[nq].value = pct_decode(qs + nl + (nl < len), len - nl - (nl < len));
		qs += len + (qs[len] == '&');
	}
	for (i = 0; i < req->nheaders; i++) {
		char *colon;

		if (!strncmp(req->headers[i], "Authorization:", 14))
			continue;
		/* "Name: value", or "Name;": libcurl's way to send it empty. */
		hv[nh] = strdup(req->headers[i]);
		if (!hv[nh] || !(colon = hv[nh] + strcspn(hv[nh], ":;")) ||
		    !*colon || (*colon == ';' && colon[1]))
			goto out;
		h[nh].name = hv[nh];
		h[nh].value = *colon == ';' ? "" : colon + 1 + (colon[1] == ' ');
		*colon = '\0';
		if (!strcasecmp(h[nh].name, "x-amz-content-sha256"))
			h[nh].value = payload_hash;
		if (!strcasecmp(h[nh].name, "x-amz-date"))
			amz_date = (char *)h[nh].value;
		nh++;
	}
	if (!path || !amz_date)
		goto out;
	err = s3d_sigv4(&(struct s3d_sigv4_in){
			.method = req->method, .uri = path,
			.query = q, .nquery = nq, .headers = h, .nheaders = nh,
			.payload_hash = payload_hash, .amz_date = amz_date,
			.region = v->region, .service = "s3",
			.access_key = v->ak, .secret_key = v->sk,
		}, sig);
out:
	free(path);
	for (i = 0; i < nq; i++) {
		free((char *)q[i].name);
		free((char *)q[i].value);
	}
	for (i = 0; i < nh; i++)
		free(hv[i]);
	return err;
}

static int check_one(const struct vec *v)
{
	struct s3d_sigv4_out sig = { 0 };
	struct s3d_http_req req = { 0 };
	struct s3d_s3 s3 = { 0 };
	const char *auth = NULL;
	char hash[65];
	size_t i;
	int err;

	err = s3d_s3_init(&s3, v->endpoint, v->region, v->path_style, false);
	if (err)
		return err;
	s3.creds.access_key = strdup(v->ak);
	s3.creds.secret_key = strdup(v->sk);
	s3.creds.token = v->token ? strdup(v->token) : NULL;
	err = s3d_s3_build(&s3, v->method, v->bucket, v->key, v->query,
			   v->nquery, v->hdrs, v->nhdrs, (time_t)v->time, &req);
	if (err)
		goto out;
	for (i = 0; i < req.nheaders; i++)
		if (!strncmp(req.headers[i], "Authorization: ", 15))
			auth = req.headers[i] + 15;
	if (v->has_body) {
		s3d_sha256_hex(v->body, v->body_len, hash);
		err = resign(v, &req, hash, &sig);
		auth = sig.auth.p;
	} else {
		err = resign(v, &req, "UNSIGNED-PAYLOAD", &sig);
	}
	if (err || !auth) {
		err = err ?: -EINVAL;
		goto out;
	}
	printf("%s ", v->id);
	put_hex(req.url, strlen(req.url));
	putchar(' ');
	put_hex(auth, strlen(auth));
	putchar(' ');
	/* The canonical request shown must be the one that was signed. */
	if (strcmp(sig.auth.p, auth)) {
		static const char note[] = "(s3d_sigv4() of the sent request differs from s3d_s3_build()'s signature: ";

		put_hex(note, strlen(note));
		put_hex(sig.auth.p, sig.auth.len);
		put_hex(")\n", 2);
	}
	put_hex(sig.creq.p, sig.creq.len);
	putchar('\n');
out:
	s3d_sigv4_out_free(&sig);
	s3d_http_req_free(&req);
	s3d_s3_fini(&s3);
	return err;
}

int main(void)
{
	char *line = NULL;
	size_t cap = 0;
	unsigned int n = 0, bad = 0;
	struct vec v;

	s3d_log_level = -1;
	while (getline(&line, &cap, stdin) > 0) {
		n++;
		if (parse_line(line, &v)) {
			fprintf(stderr, "sigv4-check: line %u: malformed\n", n);
			bad++;
		} else if (check_one(&v)) {
			fprintf(stderr, "sigv4-check: request %s: cannot build or sign\n", v.id);
			bad++;
		}
		vec_free(&v);
	}
	free(line);
	if (fflush(stdout))
		return 1;
	return bad ? 1 : 0;
}
