/* SPDX-License-Identifier: GPL-2.0 */
/*
 * listlog.c: the log of a listing in progress, which a readdir reads while
 * later pages are on their way (uapi/s3cachefs.h, S3CFS_LISTING_DIR).
 */
#ifndef S3D_LISTLOG_H
#define S3D_LISTLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "lib/util.h"

struct s3d_listlog {
	int dirfd;		/* S3CFS_LISTING_DIR; -1: no log */
	int fd;
	char name[24];		/* the lower directory's inode number */
	uint64_t ino;		/* the log's */
	uint64_t written;	/* bytes of whole records in the file (once
				 * published, of the index's table too) */
	struct s3d_buf pending;	/* records not written yet */
	bool failed;		/* a write failed: the log stops growing */
	bool index;		/* to be kept at the end as the directory's index */
	bool keep;		/* ... and it is: not unlinked when closed */
	uint32_t *pairs;	/* ... (name hash, record offset) per record */
	size_t npairs, cappairs;
};

void s3d_listlog_init(struct s3d_listlog *l);
int s3d_listlog_open(struct s3d_listlog *l, int rootfd, int lower_dirfd);
int s3d_listlog_add(struct s3d_listlog *l, const char *name, unsigned int type,
		    uint64_t ino, const uint8_t *meta, size_t metalen);
uint64_t s3d_listlog_flush(struct s3d_listlog *l);
int s3d_listlog_publish(struct s3d_listlog *l, int lower_dirfd, time_t when);
void s3d_listlog_close(struct s3d_listlog *l);
int s3d_index_find(int rootfd, int lower_dirfd, const char *name,
		   time_t *when, uint8_t *meta, size_t *metalen);
void s3d_listlog_clear(int rootfd);

#endif /* S3D_LISTLOG_H */
