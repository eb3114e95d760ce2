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
 *
 * On a mount with directory indexes, a listing that completes keeps its
 * log as the directory's index instead (s3d_listlog_publish()): a table
 * of the records sorted by name hash goes after them, for lookups
 * (s3d_index_find()). Every MOUNT clears them, with the logs a dead
 * daemon left: an index never outlives the daemon that wrote it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "lib/base.h"
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
 * @ino: the lower entry's inode number; 0: an object with no lower file
 * @meta: its S3CFS_XATTR_META value, or NULL
 * @metalen: that value's length (at most 255)
 *
 * Return: 0 or -ENOMEM.
 */
int s3d_listlog_add(struct s3d_listlog *l, const char *name, unsigned int type,
		    uint64_t ino, const uint8_t *meta, size_t metalen)
{
	static const char zeros[S3CFS_LIST_REC_ALIGN];
	struct s3cfs_list_rec rec = { .ino = ino, .type = (uint8_t)type };
	size_t len = strlen(name), total;
	uint64_t off = l->written + l->pending.len;

	if (l->fd < 0 || l->failed)
		return 0;
	if (!meta)
		metalen = 0;
	if (l->index) {
		if (l->npairs == l->cappairs) {
			size_t cap = l->cappairs ? 2 * l->cappairs : 1024;
			uint32_t *p = realloc(l->pairs, cap * 2 * sizeof(*p));

			if (!p)
				return -ENOMEM;
			l->pairs = p;
			l->cappairs = cap;
		}
		/* Past 4 GiB of records the table cannot say where: no index. */
		if (off > UINT32_MAX)
			l->index = false;
		l->pairs[2 * l->npairs] = (uint32_t)s3d_hash_str(name);
		l->pairs[2 * l->npairs + 1] = (uint32_t)off;
		l->npairs++;
	}
	rec.namelen = (uint16_t)len;
	rec.metalen = (uint8_t)metalen;
	total = sizeof(rec) + len + metalen;
	s3d_buf_add(&l->pending, &rec, sizeof(rec));
	s3d_buf_add(&l->pending, name, len);
	if (metalen)
		s3d_buf_add(&l->pending, meta, metalen);
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

static int pair_cmp(const void *a, const void *b)
{
	const uint32_t *x = a, *y = b;

	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return x[1] < y[1] ? -1 : x[1] > y[1];
}

/**
 * s3d_listlog_publish() - keep a finished listing's log as the index
 * @l: the log, with every record added (an index log: @l->index)
 * @lower_dirfd: the directory listed
 * @when: when the listing began (CLOCK_REALTIME seconds)
 *
 * Writes the lookup table and tail and names the file in
 * S3CFS_XATTR_INDEX; the log then stays when closed. Not synced: every
 * MOUNT clears the indexes, so none outlives a crash.
 *
 * Return: 0, or -errno: no index (the log goes as usual).
 */
int s3d_listlog_publish(struct s3d_listlog *l, int lower_dirfd, time_t when)
{
	struct s3cfs_index_tail tail;
	uint64_t records;
	char v[80];
	int err = 0;

	records = s3d_listlog_flush(l);
	if (l->fd < 0 || l->failed || !l->index)
		return -EIO;
	qsort(l->pairs, l->npairs, 2 * sizeof(*l->pairs), pair_cmp);
	tail.records = records;
	tail.count = l->npairs;
	tail.magic = S3CFS_INDEX_MAGIC;
	/* After the records, written as they are (a failure stops the log). */
	s3d_buf_add(&l->pending, l->pairs, l->npairs * 2 * sizeof(*l->pairs));
	s3d_buf_add(&l->pending, &tail, sizeof(tail));
	s3d_listlog_flush(l);
	if (l->failed)
		err = -EIO;
	snprintf(v, sizeof(v), "%lld %" PRIu64 " %" PRIu64, (long long)when,
		 l->ino, records);
	if (!err && fsetxattr(lower_dirfd, S3CFS_XATTR_INDEX, v, strlen(v), 0))
		err = -errno;
	if (err) {
		s3d_warn("listing %s: no index: %s", l->name, strerror(-err));
		return err;
	}
	l->keep = true;
	return 0;
}

/* End the log: unlinked (a reader that has it open reads on), or kept. */
void s3d_listlog_close(struct s3d_listlog *l)
{
	if (l->fd >= 0) {
		close(l->fd);
		if (!l->keep && unlinkat(l->dirfd, l->name, 0) && errno != ENOENT)
			s3d_warn("listing log %s: %s", l->name, strerror(errno));
	}
	if (l->dirfd >= 0)
		close(l->dirfd);
	s3d_buf_free(&l->pending);
	free(l->pairs);
	s3d_listlog_init(l);
}

/* The record at @off of index @fd: 1 if it is @name (filled in), 0 if not. */
static int index_rec(int fd, uint64_t off, uint64_t records, const char *name,
		     struct s3cfs_list_rec *rec, uint8_t *meta)
{
	char buf[sizeof(*rec) + 255 + S3CFS_META_MAX];
	size_t len = strlen(name);
	ssize_t n;

	if (off + sizeof(*rec) > records)
		return -EIO;
	n = pread(fd, buf, S3D_MIN(sizeof(buf), records - off), (off_t)off);
	if (n < (ssize_t)sizeof(*rec))
		return -EIO;
	memcpy(rec, buf, sizeof(*rec));
	if (sizeof(*rec) + rec->namelen + rec->metalen > (size_t)n)
		return -EIO;
	if (rec->namelen != len || memcmp(buf + sizeof(*rec), name, len))
		return 0;
	memcpy(meta, buf + sizeof(*rec) + len, rec->metalen);
	return 1;
}

/**
 * s3d_index_find() - look a name up in a directory's index
 * @rootfd: the cache root
 * @lower_dirfd: the directory
 * @name: a single name
 * @when: set to the index's listing time
 * @meta: S3CFS_META_MAX bytes: the object's metadata
 * @metalen: set to its length
 *
 * Return: 0: an object with no lower file (@meta says which version);
 * -EEXIST: a name the index gives as a directory or a lower file; -ENOENT:
 * not in it (only an index that was read says so); another -errno: no
 * usable index.
 */
int s3d_index_find(int rootfd, int lower_dirfd, const char *name,
		   time_t *when, uint8_t *meta, size_t *metalen)
{
	uint64_t ino, records, lo, hi, count;
	struct s3cfs_index_tail tail;
	struct s3cfs_list_rec rec;
	uint32_t h = (uint32_t)s3d_hash_str(name), pair[2];
	struct stat st;
	long long secs;
	char v[80], fname[24];
	int dfd, fd, err;
	ssize_t n;

	n = fgetxattr(lower_dirfd, S3CFS_XATTR_INDEX, v, sizeof(v) - 1);
	if (n <= 0)
		return n < 0 ? -errno : -ENODATA;
	v[n] = '\0';
	if (sscanf(v, "%lld %" SCNu64 " %" SCNu64, &secs, &ino, &records) != 3)
		return -EINVAL;
	if (fstat(lower_dirfd, &st))
		return -errno;
	snprintf(fname, sizeof(fname), "%" PRIu64, (uint64_t)st.st_ino);
	/* Gone (a MOUNT clears the indexes): no index, not "no such name". */
	if (s3d_store_open_dir(rootfd, S3CFS_LISTING_DIR, false, &dfd))
		return -ESTALE;
	fd = openat(dfd, fname, O_RDONLY | O_NOFOLLOW | O_NOATIME | O_CLOEXEC);
	close(dfd);
	if (fd < 0)
		return -ESTALE;
	err = -ESTALE;
	if (fstat(fd, &st) || (uint64_t)st.st_ino != ino ||
	    (uint64_t)st.st_size < sizeof(tail) ||
	    records > (uint64_t)st.st_size - sizeof(tail) ||
	    pread(fd, &tail, sizeof(tail), st.st_size - (off_t)sizeof(tail)) !=
	    (ssize_t)sizeof(tail) || tail.magic != S3CFS_INDEX_MAGIC ||
	    tail.records != records ||
	    tail.count != ((uint64_t)st.st_size - sizeof(tail) - records) / 8 ||
	    ((uint64_t)st.st_size - sizeof(tail) - records) % 8)
		goto out;
	count = tail.count;
	/* The first pair of hash @h. */
	lo = 0;
	hi = count;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		err = -EIO;
		if (pread(fd, pair, sizeof(pair), (off_t)(records + mid * 8)) !=
		    (ssize_t)sizeof(pair))
			goto out;
		if (pair[0] < h)
			lo = mid + 1;
		else
			hi = mid;
	}
	err = -ENOENT;
	for (; lo < count; lo++) {
		int found;

		if (pread(fd, pair, sizeof(pair), (off_t)(records + lo * 8)) !=
		    (ssize_t)sizeof(pair)) {
			err = -EIO;
			break;
		}
		if (pair[0] != h)
			break;
		found = index_rec(fd, pair[1], records, name, &rec, meta);
		if (found < 0) {
			err = found;
			break;
		}
		if (!found)
			continue;
		if (rec.type != DT_REG || rec.ino || !rec.metalen) {
			err = -EEXIST;
			break;
		}
		*metalen = rec.metalen;
		*when = (time_t)secs;
		err = 0;
		break;
	}
out:
	close(fd);
	return err;
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
