/* SPDX-License-Identifier: GPL-2.0 */
/*
 * client.c: synchronous S3 calls (LIST, HEAD, GET; PUT, DELETE and the
 * multipart upload) for s3cachectl, the daemon's --selftest and the host
 * tests, run to completion on the event loop.
 */
#ifndef S3D_CLIENT_H
#define S3D_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <curl/curl.h>

#include "s3.h"
#include "xml.h"

struct s3d_obj_info {
	long status;
	char etag[S3D_ETAG_MAX + 1];
	int64_t size;		/* Content-Length */
	time_t mtime;
	uint64_t bytes;		/* body bytes received */
};

/* Why a call failed: status 0 and no code for a transport error. */
struct s3d_call_err {
	long status;
	char code[64];
	char message[CURL_ERROR_SIZE + 256];
	char request_id[128];
};

int s3d_call_list(struct s3d_s3 *s3, const char *bucket, const char *prefix,
		  const char *delimiter,
		  int (*page)(void *arg, const struct s3d_list_page *pg),
		  void *arg, struct s3d_call_err *ce);
int s3d_call_head(struct s3d_s3 *s3, const char *bucket, const char *key,
		  struct s3d_obj_info *info, struct s3d_call_err *ce);
int s3d_call_get(struct s3d_s3 *s3, const char *bucket, const char *key,
		 const char *range,
		 size_t (*sink)(void *arg, const char *p, size_t n), void *arg,
		 struct s3d_obj_info *info, struct s3d_call_err *ce);

/**
 * struct s3d_put_opts - what a write says besides its bytes
 * @if_match: If-Match: the base ETag, exactly as the server gave it; NULL:
 *	none. A 412 is then -ESTALE, a 404 -ENOENT.
 * @if_none_match: If-None-Match: * (create only); a 412 is then -EEXIST
 * @content_type: the object's Content-Type, or NULL
 * @meta: the object's metadata, names without "x-amz-meta-"
 * @nmeta: their number
 */
struct s3d_put_opts {
	const char *if_match;
	bool if_none_match;
	const char *content_type;
	const struct s3d_kv *meta;
	size_t nmeta;
};

int s3d_call_put(struct s3d_s3 *s3, const char *bucket, const char *key,
		 int fd, uint64_t off, uint64_t len,
		 const struct s3d_put_opts *o, char etag[S3D_ETAG_MAX + 1],
		 struct s3d_call_err *ce);
int s3d_call_delete(struct s3d_s3 *s3, const char *bucket, const char *key,
		    struct s3d_call_err *ce);
int s3d_call_mpu_create(struct s3d_s3 *s3, const char *bucket,
			const char *key, const struct s3d_put_opts *o,
			char *upload_id, size_t idlen, struct s3d_call_err *ce);
int s3d_call_mpu_part(struct s3d_s3 *s3, const char *bucket, const char *key,
		      const char *upload_id, unsigned int part, int fd,
		      uint64_t off, uint64_t len, char etag[S3D_ETAG_MAX + 1],
		      struct s3d_call_err *ce);
int s3d_call_mpu_complete(struct s3d_s3 *s3, const char *bucket,
			  const char *key, const char *upload_id,
			  const struct s3d_part *parts, size_t n,
			  const struct s3d_put_opts *o,
			  char etag[S3D_ETAG_MAX + 1], struct s3d_call_err *ce);
int s3d_call_mpu_abort(struct s3d_s3 *s3, const char *bucket, const char *key,
		       const char *upload_id, struct s3d_call_err *ce);

#endif /* S3D_CLIENT_H */
