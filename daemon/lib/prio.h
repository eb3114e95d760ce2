/* SPDX-License-Identifier: GPL-2.0 */
/*
 * prio.c: the order waiting transfers start in: a FIFO per priority class,
 * the most urgent class first, none passed over for ever.
 */
#ifndef S3D_PRIO_H
#define S3D_PRIO_H

#include <stdbool.h>

#include "base.h"

/**
 * enum s3d_prio - priority classes of S3 transfers, most urgent first
 * @S3D_PRIO_META: LOOKUP, LIST, the HEAD of a stale FETCH: an `ls` or a
 *	`stat` waits for it
 * @S3D_PRIO_SYNC: a FETCH a reader is blocked on (S3CFS_PRIO_SYNC, or a
 *	kernel that does not say)
 * @S3D_PRIO_ASYNC: readahead and prefetch (S3CFS_PRIO_ASYNC)
 * @S3D_PRIO_NR: number of classes
 */
enum s3d_prio {
	S3D_PRIO_META,
	S3D_PRIO_SYNC,
	S3D_PRIO_ASYNC,
	S3D_PRIO_NR,
};

/* A class passed over this many times in a row while it waits goes next. */
#define S3D_PRIO_PASS	8

/* A queue per class, FIFO within each (see prio.c). */
struct s3d_pq {
	struct s3d_list q[S3D_PRIO_NR];
	unsigned int n[S3D_PRIO_NR];
	unsigned int passed[S3D_PRIO_NR];	/* starts it was passed over */
};

const char *s3d_prio_name(int prio);
void s3d_pq_init(struct s3d_pq *pq);
void s3d_pq_add(struct s3d_pq *pq, struct s3d_list *node, int prio,
		bool front);
void s3d_pq_del(struct s3d_pq *pq, struct s3d_list *node, int prio);
struct s3d_list *s3d_pq_pop(struct s3d_pq *pq, int *prio);
bool s3d_pq_empty(const struct s3d_pq *pq);
unsigned int s3d_pq_count(const struct s3d_pq *pq, int prio);

#endif /* S3D_PRIO_H */
