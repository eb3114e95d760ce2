/* SPDX-License-Identifier: GPL-2.0 */
/*
 * writer.c: the token an upload leaves on its object, naming the cache
 * file and the version it was based on, so that an upload can tell an
 * earlier upload of the same file (one that took effect unknown to the
 * kernel) from another writer's.
 */
#ifndef S3D_WRITER_H
#define S3D_WRITER_H

#include <stdbool.h>

#include "lib/base.h"

#define S3D_WRITER_HDR		"x-amz-meta-s3cfs-writer"
#define S3D_WRITER_TOKEN_LEN	32	/* hex digits */

int s3d_writer_token(int fd, const char *bucket, const char *key,
		     const char *base, char out[S3D_WRITER_TOKEN_LEN + 1]);
bool s3d_writer_is(const struct s3d_buf *hdrs, const char *token);

#endif /* S3D_WRITER_H */
