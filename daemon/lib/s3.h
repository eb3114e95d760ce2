/* SPDX-License-Identifier: GPL-2.0 */
/*
 * s3.c: SigV4 signing, endpoints and addressing, and the building of a
 * signed S3 request (method, URL, headers) for the transfer engine.
 */
#ifndef S3D_S3_H
#define S3D_S3_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "creds.h"
#include "util.h"

/* Longest ETag we keep, quotes included (as the kernel's S3CFS_ETAG_MAX). */
#define S3D_ETAG_MAX	255

struct s3d_kv {
	const char *name;
	const char *value;
};

/* Input to SigV4 (tests drive it directly with the AWS test-suite vectors). */
struct s3d_sigv4_in {
	const char *method;
	const char *uri;		/* canonical URI: already encoded */
	const struct s3d_kv *query;	/* raw (not encoded) names/values */
	size_t nquery;
	const struct s3d_kv *headers;	/* as sent, host and x-amz-date included */
	size_t nheaders;
	const char *payload_hash;	/* hex SHA-256 or "UNSIGNED-PAYLOAD" */
	const char *amz_date;		/* YYYYMMDD'T'HHMMSS'Z' */
	const char *region;
	const char *service;
	const char *access_key;
	const char *secret_key;
};

struct s3d_sigv4_out {
	struct s3d_buf creq;		/* canonical request */
	struct s3d_buf sts;		/* string to sign */
	char signature[65];
	struct s3d_buf auth;		/* Authorization header value */
	struct s3d_buf query;		/* canonical query string */
};

int s3d_sigv4(const struct s3d_sigv4_in *in, struct s3d_sigv4_out *out);
void s3d_sigv4_out_free(struct s3d_sigv4_out *out);
void s3d_sha256_hex(const void *data, size_t n, char out[65]);
void s3d_amz_date(time_t t, char out[17]);
int s3d_signing_key(const char *secret, const char *date, const char *region,
		    const char *service, unsigned char key[32]);

/* Where and how to reach S3. */
struct s3d_s3 {
	char *scheme;		/* "http" or "https" */
	char *authority;	/* host[:port], lower case */
	char *region;
	int path_style;		/* 1 path style, 0 virtual host */
	bool aws;		/* endpoint is an AWS one */
	bool anonymous;		/* send unsigned requests */
	char *ca_bundle;	/* CA file for TLS; NULL: the loop's */
	struct s3d_creds creds;
};

/*
 * Headers of one request: ours (Host, x-amz-date, x-amz-content-sha256,
 * x-amz-security-token, Authorization) and the caller's (a write's
 * conditions, Content-Length and -Type, x-amz-meta-* and copy source).
 * Room for a SETMETA's copy, which sends again what an object has.
 */
#define S3D_HDR_MAX	40
struct s3d_http_req {
	const char *method;
	char *url;
	const char *ca_bundle;		/* the s3d_s3's, or NULL */
	char *headers[S3D_HDR_MAX];	/* "Name: value", or "Name;" if empty */
	size_t nheaders;
};

int s3d_s3_init(struct s3d_s3 *s3, const char *endpoint, const char *region,
		int path_style, bool anonymous);
void s3d_s3_fini(struct s3d_s3 *s3);
int s3d_endpoint_check(const char *endpoint, const char **why);
int s3d_s3_build(const struct s3d_s3 *s3, const char *method,
		 const char *bucket, const char *key,
		 const struct s3d_kv *query, size_t nquery,
		 const struct s3d_kv *hdrs, size_t nhdrs, time_t now,
		 struct s3d_http_req *out);
void s3d_http_req_free(struct s3d_http_req *r);
int s3d_s3_errno(long status, const char *code);

#endif /* S3D_S3_H */
