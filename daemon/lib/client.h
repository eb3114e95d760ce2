/* SPDX-License-Identifier: GPL-2.0 */
/*
 * client.c: synchronous S3 calls (LIST, HEAD, GET) for s3cachectl and the
 * daemon's --selftest, run to completion on the event loop.
 */
#ifndef S3D_CLIENT_H
#define S3D_CLIENT_H

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

#endif /* S3D_CLIENT_H */
