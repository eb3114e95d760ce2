/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mount.c: the mounts the kernel told us of, shared by reference with the
 * operations running on them.
 */
#ifndef S3D_MOUNT_H
#define S3D_MOUNT_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/base.h"
#include "lib/util.h"
#include "req.h"

struct s3d_cache;

/* A directory waiting to be listed ahead of a walk (op_list.c). */
struct s3d_ahead_dir {
	struct s3d_list node;
	char *path;
	unsigned int levels;	/* of its subdirectories, to list ahead too */
};

struct s3d_mount {
	struct s3d_list node;	/* on mounts */
	uint32_t id;
	int refs;		/* the table's, plus one per operation */
	char *bucket;
	char *prefix;
	char *cache_dir;
	uint32_t chunk;
	bool posix;		/* S3CFS_MOUNT_POSIX: LOOKUP records the
				 * x-amz-meta-* POSIX attributes */
	bool index;		/* S3CFS_MOUNT_INDEX: listings leave an index
				 * (listlog.c) instead of a file per object */
	int rootfd;		/* O_PATH */
	struct s3d_cache *cache;	/* usage and eviction (NULL: untracked) */
	struct s3d_strset whole;	/* paths whose GET got the whole object */
	struct s3d_list ahead;		/* struct s3d_ahead_dir, oldest first */
	unsigned int ahead_queued;
	unsigned int ahead_running;	/* listings ahead in progress */
	struct s3d_strset lookup_dirs;	/* directories with names new to the
					 * cache looked up (op_list.c) */
};

/*
 * The configuration's defaults for a writable mount of @bucket (main.c
 * sets it; NULL: none), answered to the kernel with the MOUNT.
 */
extern void (*s3d_mount_defaults_hook)(const char *bucket, int *writeback,
				       int *upload_delay);

void s3d_mount_start(struct s3d_req *r);
void s3d_mount_stop(struct s3d_req *r);
struct s3d_mount *s3d_mount_get(uint32_t id);
int s3d_mount_refused(uint32_t id, uint64_t req_id);
void s3d_mount_put(struct s3d_mount *m);
void s3d_mounts_fini(void);

#endif /* S3D_MOUNT_H */
