/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stream.c: streamed uploads (protocol 8). A file written from its start,
 * in order, has its finished parts put into a multipart upload while the
 * writer goes on; the close or fsync's UPLOAD sends only the rest.
 */
#ifndef S3D_STREAM_H
#define S3D_STREAM_H

#include <stdbool.h>
#include <stdint.h>

#include "ctx.h"
#include "mount.h"
#include "mpu.h"
#include "req.h"

/* Streams open at once, all mounts together. */
#define S3D_STREAMS_MAX		256

void s3d_stream_part(struct s3d_req *r, struct s3d_mount *m,
		     struct s3d_ctx *ctx, unsigned int parallel);
struct s3d_mpu *s3d_stream_finish(struct s3d_mount *m, struct s3d_req *r,
				  const char *key,
				  const struct s3d_mpu_params *p, bool usable);
void s3d_stream_drop_mount(uint32_t mount_id);

#endif /* S3D_STREAM_H */
