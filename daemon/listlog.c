// SPDX-License-Identifier: GPL-2.0
/*
 * The log of a listing in progress: the names a LIST has applied to the
 * lower directory, in order, in a file the kernel reads while later pages
 * are on their way (uapi/s3cachefs.h, S3CFS_LISTING_DIR). Records are
 * gathered in memory and written a slice at a time; the caller reports
 * s3d_listlog_flush()'s count to the kernel (DONE) only once written, so
 * the kernel never reads a record that is not whole. The log is made
 * afresh for each listing (a new inode, renamed into place: a reader of
 * the last one keeps its own) and unlinked at its end. It is not fsync'd:
 * a crash loses nothing a listing cannot make again.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "lib/log.h"
#include "listlog.h"
#include "store.h"
#include "uapi/s3cachefs.h"

void s3d_listlog_init(struct s3d_listlog *l)
{
	memset(l, 0, sizeof(*l));
	l->dirfd = -1;
	l->fd = -1;
	s3d_buf_init(&l->pending, 0);
}

/**
 * s3d_listlog_open() - start the log of a listing of @lower_dirfd
 * @l: from s3d_listlog_init()
 * @rootfd: the cache root
 * @lower_dirfd: the lower directory being listed
 *
 * Return: 0, or -errno: the listing goes on without a log (the kernel
 * then waits for its end, as with a daemon before protocol 6).
 */
int s3d_listlog_open(struct s3d_listlog *l, int rootfd, int lower_dirfd)
{
	char tmp[32];
	struct stat st;
	int err;

	if (fstat(lower_dirfd, &st))
		return -errno;
	snprintf(l->name, sizeof(l->name), "%" PRIu64, (uint64_t)st.st_ino);
	snprintf(tmp, sizeof(tmp), ".%s.new", l->name);
	err = s3d_store_open_dir(rootfd, S3CFS_LISTING_DIR, true, &l->dirfd);
	if (err)
		return err;
	l->fd = openat(l->dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC |
		       O_NOFOLLOW | O_CLOEXEC, 0600);
	if (l->fd < 0 || fstat(l->fd, &st) ||
	    renameat(l->dirfd, tmp, l->dirfd, l->name)) {
		err = -errno;
		/* Not renamed: the name is not ours to unlink. */
		unlinkat(l->dirfd, tmp, 0);
		if (l->fd >= 0)
			close(l->fd);
		l->fd = -1;
		s3d_listlog_close(l);
		return err;
	}
	l->ino = (uint64_t)st.st_ino;
	return 0;
}

/**
 * s3d_listlog_add() - append a name to the log (in memory until flushed)
 * @l: the log; a closed one takes nothing
 * @name: a valid single name
 * @type: DT_REG or DT_DIR
 * @ino: the lower entry's inode number
 *
 * Return: 0 or -ENOMEM.
 */
int s3d_listlog_add(struct s3d_listlog *l, const char *name, unsigned int type,
		    uint64_t ino)
{
	static const char zeros[S3CFS_LIST_REC_ALIGN];
	struct s3cfs_list_rec rec = { .ino = ino, .type = (uint8_t)type };
	size_t len = strlen(name), total;

	if (l->fd < 0 || l->failed)
		return 0;
	rec.namelen = (uint16_t)len;
	total = sizeof(rec) + len;
	s3d_buf_add(&l->pending, &rec, sizeof(rec));
	s3d_buf_add(&l->pending, name, len);
	s3d_buf_add(&l->pending, zeros,
		    -total & (S3CFS_LIST_REC_ALIGN - 1));
	return l->pending.err;
}

/**
 * s3d_listlog_flush() - write the records gathered so far
 * @l: the log
 *
 * A failed write stops the log where its last whole write ended; the
 * listing goes on (readers past that point wait for its end).
 *
 * Return: bytes of whole records written: what may be reported as DONE.
 */
uint64_t s3d_listlog_flush(struct s3d_listlog *l)
{
	size_t off = 0;
	ssize_t n;

	if (l->fd < 0 || l->failed || !l->pending.len)
		goto out;
	if (l->pending.err) {
		s3d_warn("listing log %s: %s", l->name, strerror(-l->pending.err));
		l->failed = true;
		goto out;
	}
	while (off < l->pending.len) {
		n = pwrite(l->fd, l->pending.p + off, l->pending.len - off,
			   (off_t)(l->written + off));
		if (n <= 0) {
			s3d_warn("listing log %s: %s", l->name,
				 n < 0 ? strerror(errno) : "short write");
			l->failed = true;
			goto out;
		}
		off += (size_t)n;
	}
	l->written += off;
out:
	s3d_buf_reset(&l->pending);
	return l->written;
}

/* End the log: unlinked (a reader that has it open reads on). */
void s3d_listlog_close(struct s3d_listlog *l)
{
	if (l->fd >= 0) {
		close(l->fd);
		if (unlinkat(l->dirfd, l->name, 0) && errno != ENOENT)
			s3d_warn("listing log %s: %s", l->name, strerror(errno));
	}
	if (l->dirfd >= 0)
		close(l->dirfd);
	s3d_buf_free(&l->pending);
	s3d_listlog_init(l);
}

/* Remove the logs a daemon that died left under @rootfd. */
void s3d_listlog_clear(int rootfd)
{
	struct dirent *de;
	int dirfd;
	DIR *d;

	if (s3d_store_open_dir(rootfd, S3CFS_LISTING_DIR, false, &dirfd))
		return;
	d = fdopendir(dirfd);
	if (!d) {
		close(dirfd);
		return;
	}
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			unlinkat(dirfd, de->d_name, 0);
	closedir(d);
}
