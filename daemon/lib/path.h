/* SPDX-License-Identifier: GPL-2.0 */
/*
 * path.c: the mapping between the filesystem's names and S3 keys, and the
 * checks of names, paths, prefixes and bucket names (limits: the uapi's).
 */
#ifndef S3D_PATH_H
#define S3D_PATH_H

#include <stdbool.h>
#include <stddef.h>

/* S3 keys are at most 1024 bytes. */
#define S3D_KEY_MAX		1024

bool s3d_name_valid(const char *name, size_t len, bool at_root);
bool s3d_path_valid(const char *path);
char *s3d_key_of(const char *prefix, const char *path, const char *name);
char *s3d_list_prefix(const char *prefix, const char *path);
const char *s3d_list_name(const char *lp, const char *key, bool common,
			  size_t *len);
bool s3d_prefix_valid(const char *prefix);
bool s3d_bucket_valid(const char *bucket);

#endif /* S3D_PATH_H */
