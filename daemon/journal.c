// SPDX-License-Identifier: GPL-2.0
/*
 * The journal of multipart uploads in progress: a file per upload, named
 * by a hash of its UploadId, holding "<UploadId>\0<key>\0". Written and
 * fsync'd once the upload exists (before its first part), removed once it
 * is completed or aborted. A record left by a daemon that died is aborted
 * by the next one at MOUNT (mpu.c); a torn record (a crash while it was
 * written) names nothing and is removed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "journal.h"
#include "lib/log.h"
#include "lib/s3.h"
#include "lib/xml.h"
#include "store.h"

#define RECORD_MAX	(S3D_UPLOAD_ID_MAX + 1024 + 2)

/* "u" and 40 hex digits of the SHA-256 of @upload_id. */
static void record_name(const char *upload_id, char name[42])
{
	char hex[65];

	s3d_sha256_hex(upload_id, strlen(upload_id), hex);
	name[0] = 'u';
	memcpy(name + 1, hex, 40);
	name[41] = '\0';
}

static int journal_dir(int rootfd, bool create, int *dirfd)
{
	return s3d_store_open_dir(rootfd, S3D_JOURNAL_DIR, create, dirfd);
}

/**
 * s3d_journal_add() - record an upload that now exists in S3
 * @rootfd: the cache root
 * @key: its key
 * @upload_id: its UploadId
 *
 * Return: 0, or -errno (logged by the caller): the upload goes on
 * without a record (a crash would leave its parts behind).
 */
int s3d_journal_add(int rootfd, const char *key, const char *upload_id)
{
	char name[42], tmp[48];
	size_t lk = strlen(key) + 1, li = strlen(upload_id) + 1;
	int dirfd, fd, err;

	if (lk + li > RECORD_MAX)
		return -ENAMETOOLONG;
	err = journal_dir(rootfd, true, &dirfd);
	if (err)
		return err;
	record_name(upload_id, name);
	snprintf(tmp, sizeof(tmp), ".%s.tmp", name);
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
		    O_CLOEXEC, 0600);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	errno = 0;
	if (write(fd, upload_id, li) != (ssize_t)li ||
	    write(fd, key, lk) != (ssize_t)lk)
		err = errno ? -errno : -EIO;
	else if (fsync(fd))
		err = -errno;
	close(fd);
	if (!err && renameat(dirfd, tmp, dirfd, name))
		err = -errno;
	if (err)
		unlinkat(dirfd, tmp, 0);
	else if (fsync(dirfd))
		/* The record is there: it is removed when the upload ends. */
		s3d_warn("upload journal: fsync of %s: %s", S3D_JOURNAL_DIR,
			 strerror(errno));
out:
	close(dirfd);
	return err;
}

/**
 * s3d_journal_del() - forget an upload that S3 no longer has
 * @rootfd: the cache root
 * @upload_id: its UploadId
 */
void s3d_journal_del(int rootfd, const char *upload_id)
{
	char name[42];
	int dirfd;

	if (journal_dir(rootfd, false, &dirfd))
		return;
	record_name(upload_id, name);
	if (unlinkat(dirfd, name, 0) && errno != ENOENT)
		s3d_warn("upload journal: cannot remove the record of upload %s: %s",
			 upload_id, strerror(errno));
	close(dirfd);
}

/* One record: 0 with @id and @key set, or -EINVAL (torn or foreign). */
static int record_read(int dirfd, const char *name, char *buf, size_t len,
		       const char **id, const char **key)
{
	char want[42];
	ssize_t n;
	size_t li;
	int fd;

	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno == ELOOP ? -EINVAL : -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return -EINVAL;
	buf[n] = '\0';
	li = strnlen(buf, (size_t)n);
	if (!li || li + 1 >= (size_t)n || buf[n - 1] != '\0' ||
	    strlen(buf + li + 1) + li + 2 != (size_t)n)
		return -EINVAL;
	record_name(buf, want);
	if (strcmp(want, name))
		return -EINVAL;
	*id = buf;
	*key = buf + li + 1;
	return 0;
}

/**
 * s3d_journal_scan() - each recorded upload of a cache root
 * @rootfd: the cache root
 * @fn: called with each record's key and UploadId, valid during the call
 *	(it may remove the record)
 * @arg: for @fn
 *
 * Torn records and leftover temporaries are removed.
 *
 * Return: the number of records, or -errno.
 */
int s3d_journal_scan(int rootfd,
		     void (*fn)(void *arg, const char *key, const char *upload_id),
		     void *arg)
{
	static char buf[RECORD_MAX + 1];
	struct dirent *de;
	int dirfd, n = 0, err;
	DIR *d;

	err = journal_dir(rootfd, false, &dirfd);
	if (err)
		return err == -ENOENT ? 0 : err;
	d = fdopendir(dirfd);
	if (!d) {
		err = -errno;
		close(dirfd);
		return err;
	}
	while ((de = readdir(d))) {
		const char *id = NULL, *key = NULL;

		if (de->d_name[0] == '.' &&
		    (!de->d_name[1] || !strcmp(de->d_name, "..")))
			continue;
		err = record_read(dirfd, de->d_name, buf, sizeof(buf), &id,
				  &key);
		if (err == -EINVAL) {
			s3d_warn("upload journal: %s/%s is no record (torn by a crash?): removed",
				 S3D_JOURNAL_DIR, de->d_name);
			unlinkat(dirfd, de->d_name, 0);
			continue;
		}
		if (err) {
			/* Kept: it may name an upload S3 still has. */
			s3d_warn("upload journal: %s/%s: %s (kept for the next mount)",
				 S3D_JOURNAL_DIR, de->d_name, strerror(-err));
			continue;
		}
		n++;
		fn(arg, key, id);
	}
	closedir(d);
	return n;
}
