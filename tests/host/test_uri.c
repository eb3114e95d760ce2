// SPDX-License-Identifier: GPL-2.0
/*
 * URI encoding as S3 wants it, endpoint parsing, and how requests are
 * addressed (path style, virtual host, dotted buckets over TLS).
 */
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "lib/s3.h"
#include "lib/util.h"
#include "tap.h"

/* The input as a test name: control bytes would break the TAP line. */
static const char *printable(const char *s)
{
	static char out[256];
	size_t o = 0;

	for (; *s && o < sizeof(out) - 5; s++) {
		if ((unsigned char)*s < 0x20 || (unsigned char)*s == 0x7f)
			o += snprintf(out + o, 5, "\\x%02x", (unsigned char)*s);
		else
			out[o++] = *s;
	}
	out[o] = '\0';
	return out;
}

static void enc(const char *in, bool encode_slash, const char *want)
{
	struct s3d_buf b;

	s3d_buf_init(&b, 0);
	s3d_uri_encode(&b, in, strlen(in), encode_slash);
	is_str(s3d_buf_str(&b), want, "uri_encode(\"%s\", %s)", printable(in),
	       encode_slash ? "query" : "path");
	s3d_buf_free(&b);
}

static void test_encode(void)
{
	enc("", false, "");
	enc("plain-name_1.2~3", false, "plain-name_1.2~3");
	enc("a b/c~d$", false, "a%20b/c~d%24");
	enc("a/b", true, "a%2Fb");
	enc("a+b=c&d", true, "a%2Bb%3Dc%26d");
	enc("!'()*", false, "%21%27%28%29%2A");
	enc("\xc3\xa9t\xc3\xa9 \xe1\x88\xb4", false, "%C3%A9t%C3%A9%20%E1%88%B4");
	enc("100%", false, "100%25");
	enc("tab\tnl\n", false, "tab%09nl%0A");
	enc("\x7f\xff", false, "%7F%FF");
	/* Dots and slashes pass untouched: S3 does not normalize paths. */
	enc("./../x//y", false, "./../x//y");
}

static void test_endpoint(void)
{
	struct s3d_s3 s3 = { 0 };

	is_int(s3d_s3_init(&s3, "http://127.0.0.1:4568", "us-east-1", -1,
			   false), 0, "endpoint: http with port");
	ok(s3.path_style == 1 && !s3.aws, "endpoint: non-AWS defaults to path style");
	is_str(s3.authority, "127.0.0.1:4568", "endpoint: authority kept with port");
	s3d_s3_fini(&s3);

	is_int(s3d_s3_init(&s3, "https://S3.EU-West-1.AmazonAWS.com/",
			   "eu-west-1", -1, false), 0,
	       "endpoint: AWS, trailing slash, mixed case");
	ok(s3.path_style == 0 && s3.aws, "endpoint: AWS defaults to virtual host");
	is_str(s3.authority, "s3.eu-west-1.amazonaws.com", "endpoint: host lower-cased");
	s3d_s3_fini(&s3);

	is_int(s3d_s3_init(&s3, NULL, "ap-south-1", -1, false), 0,
	       "endpoint: default from region");
	is_str(s3.authority, "s3.ap-south-1.amazonaws.com", "endpoint: default host");
	is_str(s3.scheme, "https", "endpoint: default is https");
	s3d_s3_fini(&s3);

	is_int(s3d_s3_init(&s3, "https://minio.local:9000", NULL, 0, false), 0,
	       "endpoint: forced virtual host");
	ok(s3.path_style == 0, "endpoint: --virtual-host honoured");
	s3d_s3_fini(&s3);

	ok(s3d_s3_init(&s3, "ftp://x", "r", -1, false) == -EINVAL,
	   "endpoint: other schemes refused");
	ok(s3d_s3_init(&s3, "http://host/base/path", "r", -1, false) == -EINVAL,
	   "endpoint: a base path is refused");
	ok(s3d_s3_init(&s3, "http://user:pw@host", "r", -1, false) == -EINVAL,
	   "endpoint: user info refused");
	ok(s3d_s3_init(&s3, "http://", "r", -1, false) == -EINVAL,
	   "endpoint: empty host refused");
}

static const char *host_of(const struct s3d_http_req *r)
{
	size_t i;

	for (i = 0; i < r->nheaders; i++)
		if (!strncmp(r->headers[i], "Host: ", 6))
			return r->headers[i] + 6;
	return NULL;
}

static void test_addressing(void)
{
	struct s3d_s3 s3 = { 0 };
	struct s3d_http_req r;

	s3d_s3_init(&s3, "https://s3.us-west-2.amazonaws.com", "us-west-2", -1,
		    true);
	s3d_s3_build(&s3, "GET", "my-bucket", "a/b c.bin", NULL, 0, NULL, 0,
		     0, &r);
	is_str(r.url, "https://my-bucket.s3.us-west-2.amazonaws.com/a/b%20c.bin",
	       "virtual host: bucket in the host name");
	is_str(host_of(&r), "my-bucket.s3.us-west-2.amazonaws.com",
	       "virtual host: Host header");
	s3d_http_req_free(&r);

	s3d_s3_build(&s3, "GET", "my.dotted.bucket", "k", NULL, 0, NULL, 0, 0,
		     &r);
	is_str(r.url, "https://s3.us-west-2.amazonaws.com/my.dotted.bucket/k",
	       "dotted bucket over https goes path style (certificate)");
	s3d_http_req_free(&r);

	s3d_s3_build(&s3, "GET", "my-bucket", "", NULL, 0, NULL, 0, 0, &r);
	is_str(r.url, "https://my-bucket.s3.us-west-2.amazonaws.com/",
	       "virtual host: bucket-level request path is /");
	s3d_http_req_free(&r);
	s3d_s3_fini(&s3);

	s3d_s3_init(&s3, "http://localhost:9000", "us-east-1", -1, true);
	s3d_s3_build(&s3, "GET", "bkt", "", NULL, 0, NULL, 0, 0, &r);
	is_str(r.url, "http://localhost:9000/bkt",
	       "path style: bucket-level request path is /bucket");
	s3d_http_req_free(&r);
	s3d_s3_build(&s3, "HEAD", "bkt", "dir/../x", NULL, 0, NULL, 0, 0, &r);
	is_str(r.url, "http://localhost:9000/bkt/dir/../x",
	       "path style: key used verbatim (never normalized)");
	s3d_http_req_free(&r);
	s3d_s3_fini(&s3);
}

static void test_errno(void)
{
	is_int(s3d_s3_errno(404, "NoSuchKey"), -ENOENT, "errno: NoSuchKey");
	is_int(s3d_s3_errno(404, ""), -ENOENT, "errno: 404 without a body");
	is_int(s3d_s3_errno(403, "AccessDenied"), -EACCES, "errno: AccessDenied");
	is_int(s3d_s3_errno(403, "SignatureDoesNotMatch"), -EACCES,
	       "errno: SignatureDoesNotMatch");
	is_int(s3d_s3_errno(412, NULL), -ESTALE, "errno: 412");
	is_int(s3d_s3_errno(503, "SlowDown"), -EIO, "errno: 503 SlowDown");
	is_int(s3d_s3_errno(500, "InternalError"), -EIO, "errno: 500");
	is_int(s3d_s3_errno(301, "PermanentRedirect"), -EIO,
	       "errno: wrong region redirect");
	is_int(s3d_s3_errno(0, NULL), -EIO, "errno: no response");
}

int main(void)
{
	s3d_log_level = -1;	/* the refusals above log errors */
	test_encode();
	test_endpoint();
	test_addressing();
	test_errno();
	return tap_done();
}
