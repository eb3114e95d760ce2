/* SPDX-License-Identifier: GPL-2.0 */
/*
 * walk.c: a walk of every regular file under a cache root, done from the
 * event loop a slice at a time.
 */
#ifndef S3D_WALK_H
#define S3D_WALK_H

#include <stdbool.h>
#include <sys/stat.h>

struct s3d_walk;

/*
 * Test only (off: 0): sleep this long per entry, so that a test can see
 * the loop serve other work while a walk is still going on.
 */
extern unsigned int s3d_walk_delay_us;

struct s3d_walk *s3d_walk_start(int rootfd,
				int (*file)(void *arg, const char *path,
					    const struct stat *st),
				void (*done)(void *arg, int err), void *arg);
void s3d_walk_cancel(struct s3d_walk *w);

#endif
