// SPDX-License-Identifier: GPL-2.0
/*
 * The listing log (daemon/listlog.c): made afresh per listing under
 * .s3cachefs/lists, named by the lower directory's inode; records as the
 * uapi header says, aligned, written only on flush (so what is reported
 * is whole); a second listing's log is a new inode (a reader of the first
 * keeps its own); unlinked at the end; the ones a dead daemon left are
 * cleared. An index mount's log, published, stays as the directory's
 * index: records with their metadata, a table its lookups find names by,
 * named in the directory's xattr.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "lib/log.h"
#include "listlog.h"
#include "store.h"
#include "uapi/s3cachefs.h"
#include "tap.h"

static char root[] = "/tmp/s3d-test-listlog-XXXXXX";

/* Read the records of @fd's first @len bytes into "name/type/ino;" text. */
static const char *records(int fd, size_t len)
{
	static char out[4096];
	char buf[4096];
	size_t off = 0, n = 0;

	out[0] = '\0';
	if (len > sizeof(buf) || pread(fd, buf, len, 0) != (ssize_t)len)
		return "(short read)";
	while (off + sizeof(struct s3cfs_list_rec) <= len) {
		struct s3cfs_list_rec rec;
		size_t total;

		memcpy(&rec, buf + off, sizeof(rec));
		total = (sizeof(rec) + rec.namelen + rec.metalen +
			 S3CFS_LIST_REC_ALIGN - 1) &
			~(size_t)(S3CFS_LIST_REC_ALIGN - 1);
		if (off + total > len)
			return "(record past the end)";
		n += snprintf(out + n, sizeof(out) - n, "%.*s/%u/%llu;",
			      rec.namelen, buf + off + sizeof(rec), rec.type,
			      (unsigned long long)rec.ino);
		off += total;
	}
	return off == len ? out : "(trailing bytes)";
}

static int entries(const char *dir)
{
	struct dirent *de;
	int n = 0;
	DIR *d = opendir(dir);

	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	return n;
}

int main(void)
{
	struct s3d_listlog l, l2;
	char lists[128], path[192];
	struct stat dst, st;
	int rootfd, dirfd, fd, old;

	s3d_log_level = -1;
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	rootfd = open(root, O_RDONLY | O_DIRECTORY);
	mkdirat(rootfd, "d", 0755);
	dirfd = openat(rootfd, "d", O_RDONLY | O_DIRECTORY);
	fstat(dirfd, &dst);
	snprintf(lists, sizeof(lists), "%s/%s", root, S3CFS_LISTING_DIR);
	snprintf(path, sizeof(path), "%s/%llu", lists,
		 (unsigned long long)dst.st_ino);

	s3d_listlog_init(&l);
	is_int(s3d_listlog_open(&l, rootfd, dirfd), 0, "a log opens (its directory made)");
	ok(!stat(path, &st) && st.st_ino == l.ino,
	   "it is named by the lower directory's inode, and its inode is reported");
	is_int(s3d_listlog_add(&l, "a", DT_REG, 11, NULL, 0), 0, "a name is added");
	s3d_listlog_add(&l, "dir.x", DT_DIR, 12, NULL, 0);
	ok(!stat(path, &st) && st.st_size == 0, "... and not written before a flush");
	is_int((long long)s3d_listlog_flush(&l), 16 + 8 + 16 + 8,
	       "a flush writes whole records, each 8-byte aligned");
	s3d_listlog_add(&l, "0123456789abcdef", DT_REG, 13, NULL, 0);
	is_int((long long)s3d_listlog_flush(&l), 48 + 32, "a second flush appends");
	is_int((long long)s3d_listlog_flush(&l), 80, "nothing added: nothing written");
	fd = open(path, O_RDONLY);
	is_str(records(fd, 80), "a/8/11;dir.x/4/12;0123456789abcdef/8/13;",
	       "the records read back as the uapi header says");

	/* A second listing of the same directory: a new inode. */
	s3d_listlog_close(&l);
	ok(stat(path, &st) && errno == ENOENT, "closing unlinks the log");
	is_str(records(fd, 80), "a/8/11;dir.x/4/12;0123456789abcdef/8/13;",
	       "... a reader that has it open still reads it");
	s3d_listlog_init(&l2);
	s3d_listlog_open(&l2, rootfd, dirfd);
	s3d_listlog_add(&l2, "new", DT_REG, 21, NULL, 0);
	s3d_listlog_flush(&l2);
	ok(!stat(path, &st) && st.st_ino == l2.ino && st.st_size == 24,
	   "the next listing's log takes the name");
	is_str(records(fd, 80), "a/8/11;dir.x/4/12;0123456789abcdef/8/13;",
	       "... and the first one's reader reads on, unchanged");
	close(fd);

	/* A daemon that died left a log: the next MOUNT clears it. */
	old = l2.fd;
	l2.fd = -1;		/* as if the daemon died: nothing unlinked */
	close(old);
	s3d_listlog_close(&l2);
	is_int(entries(lists), 1, "a dead daemon's log stays behind");
	s3d_listlog_clear(rootfd);
	is_int(entries(lists), 0, "... and the next mount clears it");

	/* An index mount's listing: records with metadata, kept as the index. */
	{
		static const char *names[] = { "b", "a", "zz", "m-1", "m-2" };
		struct s3d_meta meta = { "\"0123456789abcdef0123456789abcdef\"",
					 4096, 1700000000, NULL };
		uint8_t v[S3CFS_META_MAX], got[S3CFS_META_MAX];
		char etag[S3CFS_ETAG_MAX + 1], xv[80];
		int64_t mtime;
		uint64_t size;
		size_t vn, gn;
		time_t when;
		int i, n;

		vn = (size_t)s3d_meta_encode(&meta, false, v);
		s3d_listlog_init(&l);
		s3d_listlog_open(&l, rootfd, dirfd);
		l.index = true;
		is_int(s3d_index_find(rootfd, dirfd, "a", &when, got, &gn),
		       -ENODATA, "no index before one is published");
		for (i = 0; i < 5; i++) {
			meta.size = 100 + i;
			vn = (size_t)s3d_meta_encode(&meta, false, v);
			s3d_listlog_add(&l, names[i], DT_REG, 0, v, vn);
		}
		s3d_listlog_add(&l, "sub", DT_DIR, 31, NULL, 0);
		s3d_listlog_add(&l, "kept", DT_REG, 32, NULL, 0);
		s3d_listlog_flush(&l);
		fd = open(path, O_RDONLY);
		/* 16 + name + 34 (an MD5 ETag's compact form), to 8: 56 each. */
		is_int((long long)l.written, 5 * 56 + 24 + 24,
		       "records carry their metadata, aligned");
		is_int(s3d_listlog_publish(&l, dirfd, 1700000123), 0, "the log is published");
		n = (int)fgetxattr(dirfd, S3CFS_XATTR_INDEX, xv, sizeof(xv) - 1);
		xv[n > 0 ? n : 0] = '\0';
		{
			char want[80];

			snprintf(want, sizeof(want), "1700000123 %llu %d",
				 (unsigned long long)l.ino, 5 * 56 + 24 + 24);
			is_str(xv, want, "the directory's xattr names it: time, inode, bytes of records");
		}
		s3d_listlog_close(&l);
		ok(!stat(path, &st) && st.st_size == 5 * 56 + 48 + 7 * 8 + 24,
		   "closing keeps it, with its table and tail");
		is_int(s3d_index_find(rootfd, dirfd, "m-2", &when, got, &gn), 0,
		       "a lookup finds an object in it");
		ok(s3d_meta_decode(got, gn, etag, &size, &mtime) == 0 && size == 104 &&
		   mtime == 1700000000 && when == 1700000123 &&
		   !strcmp(etag, meta.etag), "... with its metadata and the listing's time");
		is_int(s3d_index_find(rootfd, dirfd, "a", &when, got, &gn), 0, "... every one of them");
		ok(s3d_meta_decode(got, gn, etag, &size, &mtime) == 0 && size == 101,
		   "... each with its own");
		is_int(s3d_index_find(rootfd, dirfd, "m", &when, got, &gn), -ENOENT,
		       "a name it does not hold is not there");
		is_int(s3d_index_find(rootfd, dirfd, "sub", &when, got, &gn), -EEXIST,
		       "a directory is there, with nothing to make");
		is_int(s3d_index_find(rootfd, dirfd, "kept", &when, got, &gn), -EEXIST,
		       "... so is a file that has its lower file");
		s3d_listlog_clear(rootfd);
		is_int(s3d_index_find(rootfd, dirfd, "a", &when, got, &gn), -ESTALE,
		       "an index a MOUNT cleared is no index (its xattr stays): no name is said missing");
		is_int(s3d_store_unlist(dirfd, true), 0, "a new listing forgets it");
		is_int(s3d_index_find(rootfd, dirfd, "a", &when, got, &gn), -ENODATA,
		       "... and lookups no longer use it");
		close(fd);

		/* A log cut short is never published. */
		s3d_listlog_init(&l);
		s3d_listlog_open(&l, rootfd, dirfd);
		l.index = true;
		s3d_listlog_add(&l, "a", DT_REG, 0, v, vn);
		l.failed = true;
		ok(s3d_listlog_publish(&l, dirfd, 1) < 0 &&
		   fgetxattr(dirfd, S3CFS_XATTR_INDEX, xv, sizeof(xv)) < 0,
		   "a log whose write failed is not published");
		s3d_listlog_close(&l);
		ok(stat(path, &st) && errno == ENOENT, "... and goes at its end");
	}

	/* No log: adding and flushing do nothing. */
	s3d_listlog_init(&l);
	is_int(s3d_listlog_add(&l, "x", DT_REG, 1, NULL, 0), 0, "a log that never opened takes names");
	is_int((long long)s3d_listlog_flush(&l), 0, "... and reports nothing");
	s3d_listlog_close(&l);

	close(dirfd);
	close(rootfd);
	{
		char cmd[256];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
		if (system(cmd))
			diag("cleanup failed");
	}
	return tap_done();
}
