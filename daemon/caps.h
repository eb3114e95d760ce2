/* SPDX-License-Identifier: GPL-2.0 */
/*
 * caps.c: whether a bucket's server honours conditional writes (the
 * If-None-Match / If-Match that keep an upload from overwriting another
 * writer's object), probed once per bucket at its first writable MOUNT.
 */
#ifndef S3D_CAPS_H
#define S3D_CAPS_H

#include <stdbool.h>

#include "ctx.h"

void s3d_caps_set_require(bool require);
int s3d_caps_check(struct s3d_ctx *ctx, const char *bucket,
		   const char *prefix,
		   void (*done)(void *arg, int err), void *arg);
void s3d_caps_fini(void);

#endif /* S3D_CAPS_H */
