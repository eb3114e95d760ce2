/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bucket.c: a new mount's bucket exists and lets us list it, checked once
 * at its MOUNT.
 */
#ifndef S3D_BUCKET_H
#define S3D_BUCKET_H

#include "ctx.h"

int s3d_bucket_check(struct s3d_ctx *ctx, const char *bucket,
		     const char *prefix, void (*done)(void *arg, int err),
		     void *arg);

#endif /* S3D_BUCKET_H */
