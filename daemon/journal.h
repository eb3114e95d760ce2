/* SPDX-License-Identifier: GPL-2.0 */
/*
 * journal.c: the multipart uploads a mount has begun and not yet completed
 * or aborted, one small file each under <cache>/.s3cachefs/uploads/, so
 * that the next daemon aborts those a crash left behind (their parts cost
 * storage until aborted).
 */
#ifndef S3D_JOURNAL_H
#define S3D_JOURNAL_H

/* Below the cache root, beside the format file. */
#define S3D_JOURNAL_DIR	".s3cachefs/uploads"

int s3d_journal_add(int rootfd, const char *key, const char *upload_id);
void s3d_journal_del(int rootfd, const char *upload_id);
int s3d_journal_scan(int rootfd,
		     void (*fn)(void *arg, const char *key, const char *upload_id),
		     void *arg);

#endif /* S3D_JOURNAL_H */
