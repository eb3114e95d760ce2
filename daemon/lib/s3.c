// SPDX-License-Identifier: GPL-2.0
/*
 * S3 requests: endpoint and addressing style, URI encoding, and AWS
 * Signature Version 4 (OpenSSL HMAC/SHA-256).
 *
 * S3's flavour of SigV4: the canonical URI is the path as sent, encoded
 * once and never normalized (so "a//b" and "./" stay as they are), and the
 * payload is not hashed ("UNSIGNED-PAYLOAD": an upload is streamed from a
 * file, and hashing it first would read it twice; TLS protects the body,
 * and AWS refuses unsigned payloads over plain http, so writes to AWS need
 * https). Subresources without a value ("?uploads") are signed, and sent,
 * as "uploads=", which S3 takes the same.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "base.h"
#include "creds.h"
#include "log.h"
#include "s3.h"
#include "util.h"

#define SIGV4_ALGO		"AWS4-HMAC-SHA256"
#define UNSIGNED_PAYLOAD	"UNSIGNED-PAYLOAD"

void s3d_sha256_hex(const void *data, size_t n, char out[65])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;

	if (!EVP_Digest(data, n, md, &mdlen, EVP_sha256(), NULL) ||
	    mdlen != 32) {
		/* Cannot happen with a working libcrypto; never sign garbage. */
		memset(md, 0, sizeof(md));
		mdlen = 32;
	}
	s3d_hex(md, mdlen, out);
}

static int hmac256(const void *key, size_t keylen, const char *msg,
		   unsigned char out[32])
{
	unsigned int len = 0;

	if (!HMAC(EVP_sha256(), key, (int)keylen, (const unsigned char *)msg,
		  strlen(msg), out, &len) || len != 32)
		return -EIO;
	return 0;
}

/* amz_date: "YYYYMMDDTHHMMSSZ" */
void s3d_amz_date(time_t t, char out[17])
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, 17, "%Y%m%dT%H%M%SZ", &tm);
}

/**
 * s3d_signing_key() - derive the SigV4 signing key
 * @secret: secret access key
 * @date: YYYYMMDD
 * @region: e.g. "us-east-1"
 * @service: "s3"
 * @key: 32 bytes out
 *
 * Return: 0, or -EIO if libcrypto failed.
 */
int s3d_signing_key(const char *secret, const char *date, const char *region,
		    const char *service, unsigned char key[32])
{
	unsigned char k[32];
	struct s3d_buf kse;
	int err;

	s3d_buf_init(&kse, 0);
	s3d_buf_addf(&kse, "AWS4%s", secret);
	if (kse.err) {
		s3d_buf_free(&kse);
		return kse.err;
	}
	err = hmac256(kse.p, kse.len, date, k);
	explicit_bzero(kse.p, kse.len);
	s3d_buf_free(&kse);
	err = err ?: hmac256(k, 32, region, k);
	err = err ?: hmac256(k, 32, service, k);
	err = err ?: hmac256(k, 32, "aws4_request", key);
	explicit_bzero(k, sizeof(k));
	return err;
}

struct canon_kv {
	char *name;
	char *value;
	size_t order;
};

static int kv_cmp(const void *a, const void *b)
{
	const struct canon_kv *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	/* Query: by value too. Headers: keep the order they were given in. */
	if (x->value && y->value && x->order == (size_t)-1) {
		c = strcmp(x->value, y->value);
		if (c)
			return c;
	}
	return x->order < y->order ? -1 : x->order > y->order;
}

static void kv_free(struct canon_kv *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].value);
	}
	free(v);
}

static char *encode_dup(const char *s, bool encode_slash)
{
	struct s3d_buf b;

	s3d_buf_init(&b, 0);
	s3d_uri_encode(&b, s, strlen(s), encode_slash);
	return s3d_buf_steal(&b);
}

/* CanonicalQueryString: encoded name=value pairs sorted by name, then value. */
static int canon_query(const struct s3d_sigv4_in *in, struct s3d_buf *out)
{
	struct canon_kv *v;
	size_t i;

	if (!in->nquery)
		return 0;
	v = calloc(in->nquery, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < in->nquery; i++) {
		v[i].name = encode_dup(in->query[i].name, true);
		v[i].value = encode_dup(in->query[i].value ?: "", true);
		v[i].order = (size_t)-1;
		if (!v[i].name || !v[i].value) {
			kv_free(v, in->nquery);
			return -ENOMEM;
		}
	}
	qsort(v, in->nquery, sizeof(*v), kv_cmp);
	for (i = 0; i < in->nquery; i++)
		s3d_buf_addf(out, "%s%s=%s", i ? "&" : "", v[i].name,
			     v[i].value);
	kv_free(v, in->nquery);
	return out->err;
}

/* Header value: trimmed, runs of spaces collapsed to one (quotes or not). */
static char *canon_value(const char *s)
{
	struct s3d_buf b;
	bool space = false;

	s3d_buf_init(&b, 0);
	while (*s == ' ' || *s == '\t')
		s++;
	for (; *s; s++) {
		if (*s == ' ' || *s == '\t') {
			space = true;
			continue;
		}
		if (space)
			s3d_buf_addc(&b, ' ');
		space = false;
		s3d_buf_addc(&b, *s);
	}
	return s3d_buf_steal(&b);
}

static char *lower_dup(const char *s)
{
	char *d = strdup(s), *p;

	for (p = d; p && *p; p++)
		*p = tolower((unsigned char)*p);
	return d;
}

/*
 * CanonicalHeaders and SignedHeaders: lower-case names, sorted; values of
 * repeated names joined with ',' in the order given.
 */
static int canon_headers(const struct s3d_sigv4_in *in, struct s3d_buf *ch,
			 struct s3d_buf *sh)
{
	struct canon_kv *v;
	size_t i;

	v = calloc(in->nheaders ?: 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < in->nheaders; i++) {
		v[i].name = lower_dup(in->headers[i].name);
		v[i].value = canon_value(in->headers[i].value);
		v[i].order = i;
		if (!v[i].name || !v[i].value) {
			kv_free(v, in->nheaders);
			return -ENOMEM;
		}
	}
	qsort(v, in->nheaders, sizeof(*v), kv_cmp);
	for (i = 0; i < in->nheaders; i++) {
		if (i && !strcmp(v[i].name, v[i - 1].name)) {
			s3d_buf_addf(ch, ",%s", v[i].value);
			continue;
		}
		if (i) {
			s3d_buf_addc(ch, '\n');
			s3d_buf_addc(sh, ';');
		}
		s3d_buf_addf(ch, "%s:%s", v[i].name, v[i].value);
		s3d_buf_adds(sh, v[i].name);
	}
	if (in->nheaders)
		s3d_buf_addc(ch, '\n');
	kv_free(v, in->nheaders);
	return ch->err ?: sh->err;
}

void s3d_sigv4_out_free(struct s3d_sigv4_out *out)
{
	s3d_buf_free(&out->creq);
	s3d_buf_free(&out->sts);
	s3d_buf_free(&out->auth);
	s3d_buf_free(&out->query);
}

/**
 * s3d_sigv4() - sign a request with AWS Signature Version 4
 * @in: the request
 * @out: canonical request, string to sign, signature, Authorization value
 *	and the canonical query string (which is also what goes on the URL);
 *	free with s3d_sigv4_out_free() whatever the result
 *
 * Return: 0, -ENOMEM, or -EIO if libcrypto failed.
 */
int s3d_sigv4(const struct s3d_sigv4_in *in, struct s3d_sigv4_out *out)
{
	struct s3d_buf ch, sh, scope;
	unsigned char key[32], sig[32];
	char date[9], hash[65];
	int err;

	memset(out, 0, sizeof(*out));
	s3d_buf_init(&ch, 0);
	s3d_buf_init(&sh, 0);
	s3d_buf_init(&scope, 0);
	snprintf(date, sizeof(date), "%.8s", in->amz_date);

	err = canon_query(in, &out->query);
	err = err ?: canon_headers(in, &ch, &sh);
	if (err)
		goto out;
	s3d_buf_addf(&out->creq, "%s\n%s\n%s\n%s\n%s\n%s", in->method, in->uri,
		     s3d_buf_str(&out->query), s3d_buf_str(&ch),
		     s3d_buf_str(&sh), in->payload_hash);
	s3d_buf_addf(&scope, "%s/%s/%s/aws4_request", date, in->region,
		     in->service);
	err = out->creq.err ?: scope.err;
	if (err)
		goto out;
	s3d_sha256_hex(out->creq.p, out->creq.len, hash);
	s3d_buf_addf(&out->sts, SIGV4_ALGO "\n%s\n%s\n%s", in->amz_date,
		     scope.p, hash);
	err = out->sts.err;
	err = err ?: s3d_signing_key(in->secret_key, date, in->region,
				     in->service, key);
	err = err ?: hmac256(key, 32, out->sts.p, sig);
	explicit_bzero(key, sizeof(key));
	if (err)
		goto out;
	s3d_hex(sig, 32, out->signature);
	s3d_buf_addf(&out->auth,
		     SIGV4_ALGO " Credential=%s/%s, SignedHeaders=%s, Signature=%s",
		     in->access_key, scope.p, s3d_buf_str(&sh), out->signature);
	err = out->auth.err;
out:
	s3d_buf_free(&ch);
	s3d_buf_free(&sh);
	s3d_buf_free(&scope);
	return err;
}

/* ---- endpoint and request building ---- */

static bool host_is_aws(const char *authority)
{
	static const char *const suffixes[] = {
		".amazonaws.com", ".amazonaws.com.cn",
	};
	size_t hl = strcspn(authority, ":"), i;

	for (i = 0; i < S3D_ARRAY_SIZE(suffixes); i++) {
		size_t sl = strlen(suffixes[i]);

		if (hl > sl && !strncmp(authority + hl - sl, suffixes[i], sl))
			return true;
	}
	return false;
}

/**
 * s3d_endpoint_check() - is @endpoint one s3d_s3_init() takes?
 * @endpoint: "http[s]://host[:port][/]"
 * @why: set to the reason when it is not
 *
 * Return: 0 or -EINVAL.
 */
int s3d_endpoint_check(const char *endpoint, const char **why)
{
	const char *p = strstr(endpoint, "://"), *auth;
	size_t alen;

	if (!p || (strncmp(endpoint, "http://", 7) &&
		   strncmp(endpoint, "https://", 8))) {
		*why = "want http://host[:port] or https://host[:port]";
		return -EINVAL;
	}
	auth = p + 3;
	alen = strcspn(auth, "/?#");
	if (!alen || strchr(auth, '@') || (auth[alen] && strcmp(auth + alen, "/"))) {
		*why = "only scheme://host[:port] is supported (no path, query or user info)";
		return -EINVAL;
	}
	return 0;
}

/**
 * s3d_s3_init() - set up addressing for an endpoint
 * @s3: zeroed; filled (free with s3d_s3_fini())
 * @endpoint: "http[s]://host[:port][/]" or NULL for AWS in @region
 * @region: signing region; NULL for $AWS_REGION, $AWS_DEFAULT_REGION, us-east-1
 * @path_style: 1 or 0 to force; -1: virtual host for AWS, path style else
 * @anonymous: do not sign
 *
 * Return: 0, -EINVAL (unusable endpoint, logged), -ENOMEM.
 */
int s3d_s3_init(struct s3d_s3 *s3, const char *endpoint, const char *region,
		int path_style, bool anonymous)
{
	struct s3d_buf def;
	const char *p, *auth, *why;
	size_t alen;

	if (!region)
		region = getenv("AWS_REGION");
	if (!region || !*region)
		region = getenv("AWS_DEFAULT_REGION");
	if (!region || !*region)
		region = "us-east-1";

	s3d_buf_init(&def, 0);
	if (!endpoint) {
		s3d_buf_addf(&def, "https://s3.%s.amazonaws.com", region);
		if (def.err)
			return -ENOMEM;
		endpoint = def.p;
	}

	if (s3d_endpoint_check(endpoint, &why)) {
		s3d_err("endpoint %s: %s", endpoint, why);
		s3d_buf_free(&def);
		return -EINVAL;
	}
	p = strstr(endpoint, "://");
	auth = p + 3;
	alen = strcspn(auth, "/?#");

	s3->scheme = strndup(endpoint, p - endpoint);
	s3->authority = strndup(auth, alen);
	s3->region = strdup(region);
	s3d_buf_free(&def);
	if (!s3->scheme || !s3->authority || !s3->region) {
		s3d_s3_fini(s3);
		return -ENOMEM;
	}
	for (char *c = s3->authority; *c; c++)
		*c = tolower((unsigned char)*c);
	s3->aws = host_is_aws(s3->authority);
	s3->path_style = path_style >= 0 ? path_style : !s3->aws;
	s3->anonymous = anonymous;
	return 0;
}

void s3d_s3_fini(struct s3d_s3 *s3)
{
	free(s3->scheme);
	free(s3->authority);
	free(s3->region);
	free(s3->ca_bundle);
	s3d_creds_clear(&s3->creds);
	memset(s3, 0, sizeof(*s3));
}

void s3d_http_req_free(struct s3d_http_req *r)
{
	size_t i;

	free(r->url);
	for (i = 0; i < r->nheaders; i++)
		free(r->headers[i]);
	memset(r, 0, sizeof(*r));
}

static int add_header(struct s3d_http_req *r, const char *name,
		      const char *value)
{
	struct s3d_buf b;

	if (r->nheaders >= S3D_HDR_MAX)
		return -E2BIG;
	s3d_buf_init(&b, 0);
	/*
	 * libcurl drops a "Name:" line with nothing after the colon (its
	 * way of removing a header); "Name;" sends the header empty, as it
	 * was signed.
	 */
	if (*value)
		s3d_buf_addf(&b, "%s: %s", name, value);
	else
		s3d_buf_addf(&b, "%s;", name);
	r->headers[r->nheaders] = s3d_buf_steal(&b);
	if (!r->headers[r->nheaders])
		return -ENOMEM;
	r->nheaders++;
	return 0;
}

/*
 * Virtual-host addressing puts the bucket in the host name; a bucket with
 * dots would not match the endpoint's wildcard certificate over TLS, so
 * such buckets always go path style.
 */
static bool use_path_style(const struct s3d_s3 *s3, const char *bucket)
{
	if (s3->path_style)
		return true;
	return strchr(bucket, '.') && !strcmp(s3->scheme, "https");
}

/* What the transfer engine knows how to send (xfer.c easy_setup()). */
static bool method_ok(const char *method)
{
	static const char *const methods[] = {
		"GET", "HEAD", "PUT", "POST", "DELETE",
	};
	size_t i;

	for (i = 0; i < S3D_ARRAY_SIZE(methods); i++)
		if (!strcmp(method, methods[i]))
			return true;
	return false;
}

/**
 * s3d_s3_build() - build (and unless anonymous, sign) one S3 request
 * @s3: endpoint and credentials
 * @method: "GET", "HEAD", "PUT", "POST" or "DELETE"
 * @bucket: the bucket
 * @key: object key ("" for bucket-level requests such as ListObjectsV2)
 * @query: raw query parameters (a NULL value: a subresource, "uploads")
 * @nquery: their number
 * @hdrs: extra headers to send and sign (Range, If-Match, If-None-Match,
 *	Content-Length and Content-Type of a body, x-amz-meta-*,
 *	x-amz-copy-source...); all of them are signed
 * @nhdrs: their number, at most S3D_HDR_MAX - 5 (Host, x-amz-date,
 *	x-amz-content-sha256, x-amz-security-token and Authorization)
 * @now: signing time
 * @out: URL and complete header list; free with s3d_http_req_free()
 *
 * Return: 0, -EINVAL (another method), -ENOMEM, -E2BIG (too many
 * headers), -EIO (libcrypto).
 */
int s3d_s3_build(const struct s3d_s3 *s3, const char *method,
		 const char *bucket, const char *key,
		 const struct s3d_kv *query, size_t nquery,
		 const struct s3d_kv *hdrs, size_t nhdrs, time_t now,
		 struct s3d_http_req *out)
{
	struct s3d_kv sh[S3D_HDR_MAX];
	struct s3d_sigv4_out sig = { 0 };
	struct s3d_sigv4_in in = { 0 };
	struct s3d_buf host, path, url;
	char amz_date[17];
	size_t nsh = 0, i;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (!method_ok(method))
		return -EINVAL;
	out->method = method;
	out->ca_bundle = s3->ca_bundle;
	s3d_buf_init(&host, 0);
	s3d_buf_init(&path, 0);
	s3d_buf_init(&url, 0);

	if (use_path_style(s3, bucket)) {
		s3d_buf_adds(&host, s3->authority);
		s3d_buf_addf(&path, "/%s", bucket);
		if (*key)
			s3d_buf_addc(&path, '/');
	} else {
		s3d_buf_addf(&host, "%s.%s", bucket, s3->authority);
		s3d_buf_addc(&path, '/');
	}
	s3d_uri_encode(&path, key, strlen(key), false);
	if (host.err || path.err) {
		err = -ENOMEM;
		goto out;
	}

	if (nhdrs + 5 > S3D_HDR_MAX) {
		err = -E2BIG;
		goto out;
	}
	s3d_amz_date(now, amz_date);
	sh[nsh++] = (struct s3d_kv){ "Host", host.p };
	if (!s3->anonymous) {
		sh[nsh++] = (struct s3d_kv){ "x-amz-date", amz_date };
		sh[nsh++] = (struct s3d_kv){ "x-amz-content-sha256",
					     UNSIGNED_PAYLOAD };
		if (s3->creds.token)
			sh[nsh++] = (struct s3d_kv){ "x-amz-security-token",
						     s3->creds.token };
	}
	for (i = 0; i < nhdrs; i++)
		sh[nsh++] = hdrs[i];

	in = (struct s3d_sigv4_in){
		.method = method, .uri = path.p,
		.query = query, .nquery = nquery,
		.headers = sh, .nheaders = nsh,
		.payload_hash = UNSIGNED_PAYLOAD, .amz_date = amz_date,
		.region = s3->region, .service = "s3",
		.access_key = s3->creds.access_key ?: "",
		.secret_key = s3->creds.secret_key ?: "",
	};
	/* Anonymous requests need the query string only, not the signature. */
	if (s3->anonymous)
		err = canon_query(&in, &sig.query);
	else
		err = s3d_sigv4(&in, &sig);
	if (err)
		goto out;

	s3d_buf_addf(&url, "%s://%s%s", s3->scheme, host.p, path.p);
	if (sig.query.len)
		s3d_buf_addf(&url, "?%s", sig.query.p);
	if (url.err) {
		err = -ENOMEM;
		goto out;
	}
	out->url = s3d_buf_steal(&url);
	for (i = 0; i < nsh && !err; i++)
		err = add_header(out, sh[i].name, sh[i].value);
	if (!err && !s3->anonymous)
		err = add_header(out, "Authorization", sig.auth.p);
out:
	if (err)
		s3d_http_req_free(out);
	s3d_sigv4_out_free(&sig);
	s3d_buf_free(&host);
	s3d_buf_free(&path);
	s3d_buf_free(&url);
	return err;
}

/**
 * s3d_s3_errno() - the errno the kernel gets for a failed S3 request
 * @status: HTTP status (0: no response)
 * @code: S3 error code from the XML body, or NULL/""
 *
 * Context-free: a 412 is -ESTALE (an If-Match that no longer holds); the
 * caller of a create (If-None-Match: *) makes it -EEXIST. A 409
 * ConditionalRequestConflict is retried by the engine (retry.c) and only
 * comes here when the retries are spent: -EIO like any other.
 *
 * Return: a negative errno.
 */
int s3d_s3_errno(long status, const char *code)
{
	static const struct {
		const char *code;
		int err;
	} codes[] = {
		{ "NoSuchKey", -ENOENT },
		{ "NoSuchBucket", -ENOENT },
		{ "AccessDenied", -EACCES },
		{ "InvalidAccessKeyId", -EACCES },
		{ "SignatureDoesNotMatch", -EACCES },
		{ "ExpiredToken", -EACCES },
		{ "InvalidToken", -EACCES },
		{ "PreconditionFailed", -ESTALE },
		{ "NoSuchUpload", -ENOENT },
		{ "EntityTooSmall", -EINVAL },
		{ "InvalidPart", -EINVAL },
		{ "InvalidPartOrder", -EINVAL },
		{ "EntityTooLarge", -EFBIG },
		{ "NotImplemented", -EOPNOTSUPP },
	};
	size_t i;

	for (i = 0; code && i < S3D_ARRAY_SIZE(codes); i++)
		if (!strcmp(code, codes[i].code))
			return codes[i].err;
	switch (status) {
	case 404:
		return -ENOENT;
	case 401:
	case 403:
		return -EACCES;
	case 412:
		return -ESTALE;
	case 413:
		return -EFBIG;
	case 501:
		return -EOPNOTSUPP;
	default:
		return -EIO;
	}
}
