/* SPDX-License-Identifier: GPL-2.0 */
/*
 * store.c: all I/O in the cache directory: the root and its format marker,
 * directories and files made safely (openat2, no symlinks followed), the
 * metadata xattr of each file.
 */
#ifndef S3D_STORE_H
#define S3D_STORE_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

struct s3cfs_posix;

/*
 * @posix: NULL, or (a LOOKUP on a posix_meta mount) what the object's
 *	HEAD said, stored as S3CFS_XATTR_POSIX
 */
struct s3d_meta {
	const char *etag;
	uint64_t size;
	time_t mtime;
	const struct s3cfs_posix *posix;
};

int s3d_store_open_root(const char *dir, const uint8_t *token, int *rootfd);
int s3d_store_check_format(int rootfd, const char *bucket, const char *prefix);
int s3d_store_open_dir(int rootfd, const char *path, bool create, int *dirfd);
int s3d_store_open_file(int rootfd, const char *path, int flags, int *fd);
int s3d_store_ensure_dir(int dirfd, const char *name, bool replace);
bool s3d_store_is_local(int fd);
int s3d_store_local_base(int fd, char *etag);
int s3d_store_empty_dir(int dirfd, const char *name);
int s3d_store_lock_fill(int fd, const char *etag);
void s3d_store_unlock_fill(int fd);
int s3d_store_add_file(int dirfd, const char *name, const struct s3d_meta *m);
int s3d_store_add_new(int dirfd, const char *name, const struct s3d_meta *m);
bool s3d_store_dir_empty(int dirfd, bool at_root);
int s3d_store_ensure_file(int dirfd, const char *name,
			  const struct s3d_meta *m, const void *data,
			  bool replace_dir);
int s3d_store_remove(int dirfd, const char *name);
int s3d_store_prune(int dirfd, bool at_root,
		    bool (*keep)(const char *name, void *arg), void *arg);
int s3d_store_set_listed(int dirfd, time_t when);
int s3d_store_unlist(int dirfd, bool listed);
int s3d_store_set_checked(int dirfd, const char *name);
time_t s3d_store_get_listed(int rootfd, const char *path);
int s3d_store_get_etag(int fd, char *buf, size_t len);
int s3d_store_get_size(int fd, uint64_t *size);
int s3d_meta_encode(const struct s3d_meta *m, bool raw, uint8_t *buf);
int s3d_meta_decode(const uint8_t *v, size_t n, char *etag, uint64_t *size,
		    int64_t *mtime);

#endif /* S3D_STORE_H */
