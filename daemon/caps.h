/* SPDX-License-Identifier: GPL-2.0 */
/*
 * caps.c: whether a bucket's server honours conditional writes (the
 * If-None-Match / If-Match that keep an upload from overwriting another
 * writer's object), probed once per bucket at its first writable MOUNT;
 * and for the fleet tier's leases, whether If-None-Match: * is honoured.
 */
#ifndef S3D_CAPS_H
#define S3D_CAPS_H

#include <stdbool.h>
#include <stddef.h>

#include "ctx.h"
#include "lib/xfer.h"

/*
 * What a bucket's server does with the conditions an upload sends, where it
 * differs from AWS S3 (each false there).
 */
struct s3d_caps {
	bool bare_if_match;	/* If-Match wants the ETag without quotes */
	bool complete_ignores;	/* CompleteMultipartUpload ignores them */
	bool copy_ignores;	/* CopyObject ignores x-amz-copy-source-if-match */
};

void s3d_caps_set_require(bool require);
const struct s3d_caps *s3d_caps_of(const char *bucket);
const char *s3d_caps_if_match(const char *bucket, const char *etag,
			      char *buf, size_t n);
int s3d_caps_check(struct s3d_ctx *ctx, const char *bucket,
		   const char *prefix,
		   void (*done)(void *arg, int err), void *arg);
int s3d_caps_probe_create(struct s3d_ctx *ctx, const char *bucket,
			  const char *prefix,
			  void (*setup)(struct s3d_xfer *x),
			  void (*verdict)(void *arg, int verdict,
					  const struct s3d_caps *caps,
					  const char *why),
			  void *arg);
void s3d_caps_fini(void);

#endif /* S3D_CAPS_H */
