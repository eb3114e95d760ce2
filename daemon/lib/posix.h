/* SPDX-License-Identifier: GPL-2.0 */
/*
 * posix.c: POSIX attributes of an object in the s3fs-fuse convention
 * (x-amz-meta-mode, -uid, -gid, -mtime): the request headers from a
 * struct s3cfs_posix, the struct from a response's headers, and the
 * S3CFS_XATTR_POSIX value of a cache file.
 */
#ifndef S3D_POSIX_H
#define S3D_POSIX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "s3.h"
#include "uapi/s3cachefs.h"

/* The headers, in the order of the S3CFS_POSIX_* flag bits. */
enum s3d_posix_field {
	S3D_POSIX_MODE,
	S3D_POSIX_UID,
	S3D_POSIX_GID,
	S3D_POSIX_MTIME,
	S3D_POSIX_NF,
};

/* Longest value kept ("-9223372036854775808.999999999" fits). */
#define S3D_POSIX_VAL_MAX	32

/*
 * The four values as text: what a response said ("" absent; a value too
 * long to keep is "!", which no parser takes), or what a request says.
 */
struct s3d_posix_hdrs {
	char v[S3D_POSIX_NF][S3D_POSIX_VAL_MAX];
};

extern const char *const s3d_posix_names[S3D_POSIX_NF];

int s3d_posix_field_of(const char *name, size_t len);
bool s3d_posix_valid(const struct s3cfs_posix *p);
size_t s3d_posix_headers(const struct s3cfs_posix *p,
			 struct s3d_posix_hdrs *t, struct s3d_kv *h);
uint32_t s3d_posix_parse(const struct s3d_posix_hdrs *t,
			 struct s3cfs_posix *p);
void s3d_posix_encode(const struct s3cfs_posix *p,
		      uint8_t v[S3CFS_POSIX_XATTR_LEN]);
int s3d_posix_decode(const uint8_t *v, size_t n, struct s3cfs_posix *p);

#endif /* S3D_POSIX_H */
