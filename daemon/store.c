// SPDX-License-Identifier: GPL-2.0
/*
 * All I/O on the cache directory (the lower filesystem).
 *
 * Every path that comes from the kernel is resolved with openat2() beneath
 * the mount's cache root, refusing symlinks and magic links, so neither a
 * crafted key nor a planted symlink can make us touch anything outside it.
 * Single names inside an already opened directory are validated by the
 * caller (path.c) and used with the *at() calls and O_NOFOLLOW.
 *
 * A lower file's data always belongs to the ETag stored on it. A changed
 * object therefore gets a new file: O_TMPFILE in the directory, sized,
 * tagged, linked under a hidden temporary name and renamed over the old
 * one, so the kernel sees either the old file or the new, never a mix.
 * The object's size is one of the tags: the file's i_size is longer after
 * a crash between writing the last piece, rounded up to the block size,
 * and truncating it back (op_fetch.c fetch_write()).
 *
 * The tags are one compact binary xattr, S3CFS_XATTR_META (layout in the
 * uapi header), small enough for the inode itself on ext4 with 256-byte
 * inodes: the three text xattrs of older caches spilled into a 4 KiB block
 * per file, which counted against the cache limit and which eviction never
 * freed. Files in the older form are still read, and rewritten in the
 * compact form (migrate()) when a LOOKUP or LIST finds them current.
 *
 * On a posix_meta mount a LOOKUP also records the object's x-amz-meta-*
 * (S3CFS_XATTR_POSIX): on a new file before its link, and on a file it
 * keeps in place, under the same lock as a replacement (a chmod in S3
 * keeps the ETag, so the attributes can change under a current file).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/openat2.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>

#include "lib/base.h"
#include "lib/log.h"
#include "lib/path.h"
#include "lib/posix.h"
#include "lib/util.h"
#include "store.h"
#include "uapi/s3cachefs.h"

#define FORMAT_MAX	(S3CFS_BUCKET_MAX + S3CFS_PREFIX_MAX + 64)
#define META_NAME	"format"
/*
 * The cache directory is private (its root is the kernel's to make 0700,
 * owned by root): what we make in it is root's alone too, so that a
 * subtree moved or copied out keeps the object bytes to itself.
 */
#define FILE_MODE	0600
#define DIR_MODE	0700

static int openat2_beneath(int dirfd, const char *path, int flags, mode_t mode)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC),
		.mode = (flags & (O_CREAT | __O_TMPFILE)) ? mode : 0,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
			   RESOLVE_NO_MAGICLINKS,
	};
	long fd;

	fd = syscall(SYS_openat2, dirfd, *path ? path : ".", &how, sizeof(how));
	return fd < 0 ? -errno : (int)fd;
}

/**
 * s3d_store_open_root() - open a cache root, the one the kernel mounted
 * @dir: absolute path, as the kernel sent it
 * @token: S3CFS_TOKEN_LEN bytes the root must carry in S3CFS_XATTR_TOKEN,
 *	or NULL (a module before protocol 10 sends none)
 * @rootfd: a descriptor of it (O_RDONLY | O_DIRECTORY)
 *
 * No symlink is followed on the way: the kernel sends the path it
 * resolved, so a symlink in it is one swapped in since, by whoever owns a
 * directory above the cache. Nor is a directory used that lacks the
 * mount's token (one renamed into the cache's place). Either would have
 * us prune and fill a directory of their choosing.
 *
 * Return: 0, -ELOOP (a symlink on the way), -ESTALE (not the directory the
 * kernel mounted), or another -errno.
 */
int s3d_store_open_root(const char *dir, const uint8_t *token, int *rootfd)
{
	struct open_how how = {
		.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	uint8_t have[S3CFS_TOKEN_LEN];
	ssize_t n;
	int fd;

	if (dir[0] != '/')
		return -EINVAL;
	fd = (int)syscall(SYS_openat2, AT_FDCWD, dir, &how, sizeof(how));
	if (fd < 0)
		return -errno;
	if (token) {
		n = fgetxattr(fd, S3CFS_XATTR_TOKEN, have, sizeof(have));
		if (n != (ssize_t)sizeof(have) || memcmp(have, token, sizeof(have))) {
			close(fd);
			return -ESTALE;
		}
	}
	*rootfd = fd;
	return 0;
}

/*
 * Give an O_TMPFILE file the name @name in @dirfd. AT_EMPTY_PATH needs
 * CAP_DAC_READ_SEARCH; without it, go through /proc/self/fd.
 */
static int link_tmpfile(int fd, int dirfd, const char *name)
{
	char proc[64];

	if (!linkat(fd, "", dirfd, name, AT_EMPTY_PATH))
		return 0;
	if (errno != ENOENT && errno != EPERM)
		return -errno;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (!linkat(AT_FDCWD, proc, dirfd, name, AT_SYMLINK_FOLLOW))
		return 0;
	return -errno;
}

static int read_small(int fd, char *buf, size_t len)
{
	size_t got = 0;
	ssize_t n;

	while (got < len - 1) {
		n = read(fd, buf + got, len - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		got += n;
	}
	buf[got] = '\0';
	return (int)got;
}

static int write_all(int fd, const char *buf, size_t len)
{
	ssize_t n;

	while (len) {
		n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		buf += n;
		len -= n;
	}
	return 0;
}

/* One line for the log: newlines become spaces, the last one goes. */
static void flatten(char *s)
{
	size_t n = strlen(s);

	if (n && s[n - 1] == '\n')
		s[n - 1] = '\0';
	for (; *s; s++)
		if (*s == '\n' || (unsigned char)*s < ' ')
			*s = ' ';
}

static int format_write(int metafd, const char *want)
{
	int fd, err;

	fd = openat(metafd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, FILE_MODE);
	if (fd < 0)
		return -errno;
	err = write_all(fd, want, strlen(want));
	/* Written once per cache: make it durable before it has a name. */
	if (!err && fsync(fd))
		err = -errno;
	if (!err)
		err = link_tmpfile(fd, metafd, META_NAME);
	close(fd);
	return err;
}

/*
 * Does the root hold nothing but the lower filesystem's lost+found and a
 * .s3cachefs without its marker (a first mount that stopped short)? Names
 * of our temporaries count too: whoever made them was not us, as this is
 * not a cache yet. Sets @other to the first name found (for the log).
 */
static int root_claimable(int rootfd, char *other, size_t len)
{
	struct dirent *de;
	int fd, err = 0;
	DIR *d;

	fd = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -ENOMEM;
	}
	while (!err && (errno = 0, de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    ((de->d_type == DT_DIR || de->d_type == DT_UNKNOWN) &&
		     (!strcmp(de->d_name, S3CFS_LOST_FOUND) ||
		      !strcmp(de->d_name, S3CFS_META_DIR))))
			continue;
		snprintf(other, len, "%s", de->d_name);
		err = -ENOTEMPTY;
	}
	if (!err && errno)
		err = -errno;
	closedir(d);
	return err;
}

/**
 * s3d_store_check_format() - claim a cache root for a bucket and prefix
 * @rootfd: the root
 * @bucket: the bucket
 * @prefix: the prefix
 *
 * Creates <root>/.s3cachefs/format if absent, in a root that holds nothing
 * else (a listing removes what S3 does not list: a directory holding
 * anything else was given as a cache by mistake); if present, it must
 * name the same bucket and prefix.
 *
 * Return: 0, -EXDEV (another bucket/prefix or format version, logged),
 * -ENOTEMPTY (neither empty nor a cache, logged) or another -errno.
 */
int s3d_store_check_format(int rootfd, const char *bucket, const char *prefix)
{
	char want[FORMAT_MAX], have[FORMAT_MAX];
	int metafd, fd, err, n;
	struct stat st;

	snprintf(want, sizeof(want), "version=%d\nbucket=%s\nprefix=%s\n",
		 S3CFS_FORMAT_VERSION, bucket, prefix);
	/* Not a cache yet: claimed only if empty, before anything is made. */
	fd = openat2_beneath(rootfd, S3CFS_FORMAT_FILE, O_RDONLY | O_NONBLOCK, 0);
	if (fd >= 0)
		close(fd);
	err = fd == -ENOENT ? root_claimable(rootfd, have, sizeof(have)) : 0;
	if (err == -ENOTEMPTY)
		s3d_err("cache directory is not empty (it holds \"%s\") and is not an s3cachefs cache (no %s): refused, a listing would delete what the bucket does not list",
			have, S3CFS_FORMAT_FILE);
	if (err)
		return err;
	if (mkdirat(rootfd, S3CFS_META_DIR, DIR_MODE) && errno != EEXIST)
		return -errno;
	metafd = openat2_beneath(rootfd, S3CFS_META_DIR, O_RDONLY | O_DIRECTORY, 0);
	if (metafd < 0)
		return metafd;
	for (;;) {
		fd = openat2_beneath(metafd, META_NAME,
				     O_RDONLY | O_NONBLOCK, 0);
		if (fd != -ENOENT)
			break;
		err = format_write(metafd, want);
		if (err != -EEXIST) {
			close(metafd);
			return err;
		}
		/* Lost a race with another writer: read theirs. */
	}
	close(metafd);
	if (fd < 0)
		return fd;
	n = -EINVAL;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode))
		n = read_small(fd, have, sizeof(have));
	close(fd);
	if (n < 0)
		return n;
	if (strcmp(have, want)) {
		flatten(have);
		flatten(want);
		s3d_err("cache directory belongs to another bucket or prefix: %s has \"%s\", this mount wants \"%s\"",
			S3CFS_FORMAT_FILE, have, want);
		return -EXDEV;
	}
	return 0;
}

/**
 * s3d_store_open_dir() - open a directory below the root
 * @rootfd: the root
 * @path: valid relative path ("" for the root itself)
 * @create: create missing directories along the way
 * @dirfd: set to an O_RDONLY|O_DIRECTORY descriptor
 *
 * Return: 0 or -errno (-ENOTDIR: a non-directory is in the way).
 */
int s3d_store_open_dir(int rootfd, const char *path, bool create, int *dirfd)
{
	char comp[256];
	const char *p = path;
	int fd, cur;

	fd = openat2_beneath(rootfd, path, O_RDONLY | O_DIRECTORY, 0);
	if (fd >= 0 || fd != -ENOENT || !create) {
		if (fd >= 0)
			*dirfd = fd;
		return fd < 0 ? fd : 0;
	}
	cur = openat2_beneath(rootfd, "", O_RDONLY | O_DIRECTORY, 0);
	while (cur >= 0 && *p) {
		size_t n = strcspn(p, "/");

		if (n >= sizeof(comp)) {
			close(cur);
			return -ENAMETOOLONG;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		p += n + (p[n] == '/');
		if (mkdirat(cur, comp, DIR_MODE) && errno != EEXIST) {
			fd = -errno;
			close(cur);
			return fd;
		}
		fd = openat2_beneath(cur, comp, O_RDONLY | O_DIRECTORY, 0);
		close(cur);
		cur = fd;
	}
	if (cur < 0)
		return cur == -ELOOP ? -ENOTDIR : cur;
	*dirfd = cur;
	return 0;
}

/**
 * s3d_store_open_file() - open a file below the root
 * @rootfd: the root
 * @path: valid, non-empty relative path
 * @flags: open flags (O_RDWR | O_DIRECT for fills)
 * @fd: set on success
 *
 * Return: 0 or -errno.
 */
int s3d_store_open_file(int rootfd, const char *path, int flags, int *fd)
{
	struct stat st;
	int f;

	f = openat2_beneath(rootfd, path, flags | O_NONBLOCK, 0);
	if (f < 0)
		return f;
	if (fstat(f, &st) || !S_ISREG(st.st_mode)) {
		close(f);
		return -EISDIR;
	}
	*fd = f;
	return 0;
}

static void put_le64(uint8_t *p, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++, v >>= 8)
		p[i] = (uint8_t)v;
}

static uint64_t get_le64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* A lowercase hex digit's value, or -1 (the compact form is lowercase). */
static int lower_hexval(char c)
{
	return c >= 'A' && c <= 'F' ? -1 : s3d_hexval(c);
}

/* Is @etag '"' + 32 lowercase hex digits + a short tail + '"'? */
static bool etag_md5_form(const char *etag, size_t len)
{
	size_t i;

	if (len < 34 || len - 34 > S3CFS_META_TAIL_MAX || etag[0] != '"' ||
	    etag[len - 1] != '"')
		return false;
	for (i = 1; i <= 32; i++)
		if (lower_hexval(etag[i]) < 0)
			return false;
	return true;
}

/**
 * s3d_meta_encode() - the S3CFS_XATTR_META value for @m
 * @m: the object's ETag (not empty), size and mtime
 * @raw: store the ETag as text even where it has the compact form
 * @buf: S3CFS_META_MAX bytes
 *
 * Return: the value's length, or -EINVAL (no ETag, too long or too big).
 */
int s3d_meta_encode(const struct s3d_meta *m, bool raw, uint8_t *buf)
{
	size_t len = m->etag ? strlen(m->etag) : 0, i;

	if (!len || len > S3CFS_ETAG_MAX || m->size > INT64_MAX)
		return -EINVAL;
	buf[0] = S3CFS_META_VERSION;
	buf[1] = 0;
	put_le64(buf + S3CFS_META_OFF_SIZE, m->size);
	put_le64(buf + S3CFS_META_OFF_MTIME, (uint64_t)(int64_t)m->mtime);
	buf += S3CFS_META_OFF_ETAG;
	if (raw || !etag_md5_form(m->etag, len)) {
		memcpy(buf, m->etag, len);
		return (int)(S3CFS_META_OFF_ETAG + len);
	}
	buf[-S3CFS_META_OFF_ETAG + 1] = S3CFS_META_MD5;
	for (i = 0; i < 16; i++)
		buf[i] = (uint8_t)(lower_hexval(m->etag[1 + 2 * i]) << 4 |
				   lower_hexval(m->etag[2 + 2 * i]));
	memcpy(buf + 16, m->etag + 33, len - 34);
	return (int)(S3CFS_META_OFF_ETAG + 16 + len - 34);
}

/**
 * s3d_meta_decode() - read an S3CFS_XATTR_META value
 * @v: the value
 * @n: its length
 * @etag: S3CFS_ETAG_MAX + 1 bytes for the ETag (NUL terminated)
 * @size: the object's size
 * @mtime: its mtime
 *
 * Return: 0 or -EINVAL (another version, truncated, or malformed).
 */
int s3d_meta_decode(const uint8_t *v, size_t n, char *etag, uint64_t *size,
		    int64_t *mtime)
{
	static const char hex[] = "0123456789abcdef";
	const uint8_t *e = v + S3CFS_META_OFF_ETAG;
	size_t elen, len, i;

	if (n < S3CFS_META_OFF_ETAG || v[0] != S3CFS_META_VERSION)
		return -EINVAL;
	elen = n - S3CFS_META_OFF_ETAG;
	*size = get_le64(v + S3CFS_META_OFF_SIZE);
	*mtime = (int64_t)get_le64(v + S3CFS_META_OFF_MTIME);
	if (*size > INT64_MAX)
		return -EINVAL;
	if (v[1] & S3CFS_META_MD5) {
		if (elen < 16 || elen - 16 > S3CFS_META_TAIL_MAX)
			return -EINVAL;
		len = elen - 16 + 34;
		etag[0] = '"';
		for (i = 0; i < 16; i++) {
			etag[1 + 2 * i] = hex[e[i] >> 4];
			etag[2 + 2 * i] = hex[e[i] & 15];
		}
		memcpy(etag + 33, e + 16, elen - 16);
		etag[len - 1] = '"';
	} else {
		if (elen > S3CFS_ETAG_MAX)
			return -EINVAL;
		len = elen;
		memcpy(etag, e, elen);
	}
	etag[len] = '\0';
	return len && strlen(etag) == len ? 0 : -EINVAL;
}

/* Is the tag @v (@n bytes) the kernel's, of a LOCAL file? */
static bool meta_is_local(const uint8_t *v, ssize_t n)
{
	return n >= S3CFS_META_OFF_ETAG && v[0] == S3CFS_META_VERSION_LOCAL &&
	       (v[1] & S3CFS_META_LOCAL);
}

/*
 * The compact tags of @fd: 0, -ENODATA (none: an older cache), -EBUSY (a
 * LOCAL file: s3d_store_is_local()), -EINVAL.
 */
static int get_meta(int fd, char *etag, uint64_t *size, int64_t *mtime)
{
	uint8_t v[S3CFS_META_MAX];
	ssize_t n;

	n = fgetxattr(fd, S3CFS_XATTR_META, v, sizeof(v));
	if (n < 0)
		return errno == ERANGE ? -EINVAL : -errno;
	if (meta_is_local(v, n))
		return -EBUSY;
	return s3d_meta_decode(v, (size_t)n, etag, size, mtime);
}

static int set_meta(int fd, const struct s3d_meta *m, bool raw)
{
	uint8_t v[S3CFS_META_MAX];
	int n = s3d_meta_encode(m, raw, v);

	if (n < 0)
		return n;
	return fsetxattr(fd, S3CFS_XATTR_META, v, (size_t)n, 0) ? -errno : 0;
}

/* S3CFS_XATTR_POSIX of @fd: @p; nothing written if it has that already. */
static int set_posix(int fd, const struct s3cfs_posix *p)
{
	uint8_t v[S3CFS_POSIX_XATTR_LEN], have[S3CFS_POSIX_XATTR_LEN + 1];
	ssize_t n;

	s3d_posix_encode(p, v);
	n = fgetxattr(fd, S3CFS_XATTR_POSIX, have, sizeof(have));
	if (n == (ssize_t)sizeof(v) && !memcmp(have, v, sizeof(v)))
		return 0;
	return fsetxattr(fd, S3CFS_XATTR_POSIX, v, sizeof(v), 0) ? -errno : 0;
}

/**
 * s3d_store_is_local() - is the open lower file @fd one the kernel wrote?
 * @fd: an open regular file
 *
 * Such a file (S3CFS_META_VERSION_LOCAL with S3CFS_META_LOCAL) holds bytes
 * S3 may not have: it is never replaced, removed, pruned or evicted.
 *
 * Return: true if it is.
 */
bool s3d_store_is_local(int fd)
{
	uint8_t v[S3CFS_META_MAX];
	ssize_t n;

	n = fgetxattr(fd, S3CFS_XATTR_META, v, sizeof(v));
	return meta_is_local(v, n);
}

/**
 * s3d_store_local_base() - the version a LOCAL file's upload must replace
 * @fd: an open regular file
 * @etag: S3CFS_ETAG_MAX + 1 bytes: the ETag the kernel stored with the
 *	file's LOCAL tag, as its text; "" when the key must not exist
 *
 * Return: 0, or -EINVAL if the file is not LOCAL (or its tag is unusable).
 */
int s3d_store_local_base(int fd, char *etag)
{
	uint8_t v[S3CFS_META_MAX];
	ssize_t n;
	size_t len;

	n = fgetxattr(fd, S3CFS_XATTR_META, v, sizeof(v));
	/* The kernel stores the text as it is (never the compact MD5). */
	if (!meta_is_local(v, n) || (v[1] & S3CFS_META_MD5))
		return -EINVAL;
	len = (size_t)n - S3CFS_META_OFF_ETAG;
	if (len > S3CFS_ETAG_MAX || memchr(v + S3CFS_META_OFF_ETAG, '\0', len))
		return -EINVAL;
	memcpy(etag, v + S3CFS_META_OFF_ETAG, len);
	etag[len] = '\0';
	return 0;
}

/*
 * Take @name in @dirfd before replacing or removing it: open it, hold
 * flock(LOCK_EX | LOCK_NB), read its tag under the lock, and check that
 * the name still leads to it. The kernel holds LOCK_SH while it makes a
 * file LOCAL and while it renames over one (kmod/local.c, dirops.c), so a
 * file found here neither LOCAL nor held stays so, at its name, until the
 * descriptor is closed after the rename or unlink.
 *
 * Return: the descriptor to close afterwards; -ENOENT if nothing is at the
 * name now; -EBUSY if the file is LOCAL, the kernel holds it, or it cannot
 * be checked: keep it.
 */
static int claim(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
			O_CLOEXEC);
	struct stat a, b;
	int err;

	if (fd < 0)
		return errno == ENOENT ? -ENOENT : -EBUSY;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		if (errno == EWOULDBLOCK)
			s3d_dbg("%s: the kernel is making it writable: kept",
				name);
		close(fd);
		return -EBUSY;
	}
	if (s3d_store_is_local(fd) || fstat(fd, &a)) {
		close(fd);
		return -EBUSY;
	}
	if (fstatat(dirfd, name, &b, AT_SYMLINK_NOFOLLOW)) {
		err = errno == ENOENT ? -ENOENT : -EBUSY;
		close(fd);
		return err;
	}
	if (a.st_ino != b.st_ino || a.st_dev != b.st_dev) {
		close(fd);
		return -EBUSY;	/* another file took the name: look later */
	}
	return fd;
}

/* Let go of what claim() returned. */
static void unclaim(int fd)
{
	if (fd >= 0)
		close(fd);
}

/**
 * s3d_store_lock_fill() - hold a cache file while fetched bytes go in
 * @fd: the open cache file
 * @etag: the version the bytes are of
 *
 * Under the same lock as claim(): the kernel does not make the file LOCAL
 * meanwhile, and one it made LOCAL (or committed as another version) is
 * never written.
 *
 * Return: 0 with flock(LOCK_EX) held (drop it with s3d_store_unlock_fill()),
 * -EAGAIN if the kernel holds the file or it is LOCAL, -ESTALE if it is of
 * another version, or -errno.
 */
int s3d_store_lock_fill(int fd, const char *etag)
{
	char have[S3CFS_ETAG_MAX + 2];
	int err;

	if (flock(fd, LOCK_EX | LOCK_NB))
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	err = s3d_store_get_etag(fd, have, sizeof(have));
	if (err == -EBUSY)
		err = -EAGAIN;	/* LOCAL */
	if (!err && !s3d_etag_eq(have, etag))
		err = -ESTALE;
	if (err)
		flock(fd, LOCK_UN);
	return err;
}

/* Drop what s3d_store_lock_fill() took. */
void s3d_store_unlock_fill(int fd)
{
	flock(fd, LOCK_UN);
}

/* The older form's size tag. */
static int get_old_size(int fd, uint64_t *size)
{
	char buf[24], *end;
	unsigned long long v;
	ssize_t n;

	n = fgetxattr(fd, S3CFS_XATTR_SIZE, buf, sizeof(buf) - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	if (n == 0 || buf[0] < '0' || buf[0] > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (errno || *end || v > INT64_MAX)
		return -EINVAL;
	*size = v;
	return 0;
}

/**
 * s3d_store_get_size() - the object size stored on a lower file
 * @fd: the file
 * @size: set on success
 *
 * Return: 0, -ENODATA (a file of an older cache: no size stored; its
 * i_size is the size), -EINVAL (malformed) or another -errno.
 */
int s3d_store_get_size(int fd, uint64_t *size)
{
	char etag[S3CFS_ETAG_MAX + 1];
	int64_t mtime;
	int err;

	err = get_meta(fd, etag, size, &mtime);
	return err == -ENODATA ? get_old_size(fd, size) : err;
}

/* Read the ETag stored on a lower file: 0, -EBUSY (a LOCAL file), -errno. */
int s3d_store_get_etag(int fd, char *buf, size_t len)
{
	char etag[S3CFS_ETAG_MAX + 1];
	uint64_t size;
	int64_t mtime;
	ssize_t n;
	int err;

	err = get_meta(fd, etag, &size, &mtime);
	if (!err) {
		if (strlen(etag) >= len)
			return -ERANGE;
		strcpy(buf, etag);
		return 0;
	}
	if (err != -ENODATA)
		return err;
	n = fgetxattr(fd, S3CFS_XATTR_ETAG, buf, len - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

/*
 * Rewrite the older form of @fd's tags as S3CFS_XATTR_META (@m: the file's
 * own ETag). Every step leaves tags the kernel reads right: the compact
 * value first (the kernel prefers it), then the old ones go. On ext4 the
 * new value landed in the external block while the old ones filled the
 * inode; setting it once more (raw ETag, then compact again: ext4 skips
 * a write of the same bytes) moves it into the inode, which tries the
 * inode first and frees the block.
 */
static int migrate(int fd, const struct s3d_meta *m)
{
	static const char *const old[] = {
		S3CFS_XATTR_ETAG, S3CFS_XATTR_MTIME, S3CFS_XATTR_SIZE,
	};
	size_t i;
	int err;

	err = set_meta(fd, m, true);
	if (err)
		return err;
	for (i = 0; i < S3D_ARRAY_SIZE(old); i++)
		if (fremovexattr(fd, old[i]) && errno != ENODATA)
			return -errno;
	return set_meta(fd, m, false);
}

static int rm_tree(int dirfd, const char *name, int depth);

/* Empty the directory open as @fd, re-reading until nothing is left. */
static int rm_contents(int fd, int depth)
{
	bool removed;
	int err = 0, cfd, e;
	DIR *d;

	fd = dup(fd);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		err = -errno;
		close(fd);
		return err;
	}
	do {
		struct dirent *de;

		removed = false;
		rewinddir(d);
		while (!err && (de = readdir(d))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			cfd = de->d_type != DT_DIR ? claim(dirfd(d), de->d_name) :
			      -EISDIR;
			if (cfd == -EBUSY)
				continue;	/* kept, and so is the directory */
			if (cfd == -ENOENT)
				continue;	/* gone meanwhile */
			e = unlinkat(dirfd(d), de->d_name, 0) ? errno : 0;
			unclaim(cfd);
			if (!e) {
				removed = true;
			} else if (e == EISDIR || e == EPERM) {
				err = rm_tree(dirfd(d), de->d_name, depth + 1);
				removed = removed || !err;
				if (err == -ENOTEMPTY)
					err = 0;	/* kept: it holds a LOCAL file */
			} else if (e != ENOENT) {
				err = -e;
			}
		}
	} while (!err && removed);
	closedir(d);
	return err;
}

static int rm_tree(int dirfd, const char *name, int depth)
{
	int fd, err;

	if (depth > 4096)
		return -ELOOP;
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	err = rm_contents(fd, depth);
	close(fd);
	/* -ENOTEMPTY: it holds files written here (LOCAL), and is kept. */
	if (!err && unlinkat(dirfd, name, AT_REMOVEDIR) && errno != ENOENT)
		err = -errno;
	return err;
}

/* Remove @name: 1 if something was there, 0 if not, or -errno. */
static int remove_entry(int dirfd, const char *name)
{
	struct stat st;
	int fd, err;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT ? 0 : -errno;
	if (S_ISDIR(st.st_mode)) {
		err = rm_tree(dirfd, name, 0);

		/* Kept: files written here are in it. */
		return err == -ENOTEMPTY ? 0 : err ?: 1;
	}
	fd = S_ISREG(st.st_mode) ? claim(dirfd, name) : -EISDIR;
	if (fd == -EBUSY || fd == -ENOENT)
		return 0;	/* written here, or gone: nothing to remove */
	err = unlinkat(dirfd, name, 0) && errno != ENOENT ? -errno : 1;
	unclaim(fd);
	return err;
}

/*
 * Set @dirfd's mtime back to @was's after removals: the mtime says when
 * the directory was last found in S3 (s3d_store_set_checked()), and a name
 * gone from S3 does not say that its directory is still there.
 */
static void keep_mtime(int dirfd, const struct stat *was)
{
	const struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, was->st_mtim };

	if (futimens(dirfd, ts))
		s3d_warn("keeping a cache directory's mtime: %s", strerror(errno));
}

/**
 * s3d_store_remove() - remove an entry, a directory with all it holds
 * @dirfd: the directory holding it
 * @name: a valid single name
 *
 * The directory's mtime is kept (keep_mtime()).
 *
 * Return: 0 (also if it did not exist) or -errno.
 */
int s3d_store_remove(int dirfd, const char *name)
{
	struct stat dst;
	bool have_mtime = !fstat(dirfd, &dst);
	int err = remove_entry(dirfd, name);

	if (have_mtime && err)
		keep_mtime(dirfd, &dst);
	return err < 0 ? err : 0;
}

/**
 * s3d_store_ensure_dir() - make @name in @dirfd a directory
 * @dirfd: the parent
 * @name: a valid single name
 * @replace: remove a non-directory in the way (else -ENOTDIR)
 *
 * Return: 0 if it was already a directory or was created, 1 if something
 * else had to be removed first, -EEXIST if a file written here (LOCAL) is
 * in the way (kept), or -errno.
 */
int s3d_store_ensure_dir(int dirfd, const char *name, bool replace)
{
	struct stat st;
	int fd, err;

	if (!mkdirat(dirfd, name, DIR_MODE))
		return 0;
	if (errno != EEXIST)
		return -errno;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return -errno;
	if (S_ISDIR(st.st_mode))
		return 0;
	if (!replace)
		return -ENOTDIR;
	fd = S_ISREG(st.st_mode) ? claim(dirfd, name) : -EISDIR;
	if (fd == -EBUSY)
		return -EEXIST;	/* written here: kept */
	err = fd != -ENOENT && unlinkat(dirfd, name, 0) && errno != ENOENT ?
	      -errno : 0;
	unclaim(fd);
	if (err)
		return err;
	if (mkdirat(dirfd, name, DIR_MODE))
		return -errno;
	return 1;
}

/* Alignment of direct I/O buffers, offsets and lengths (as op_fetch.c). */
#define DIO_ALIGN	4096U

/*
 * The object's @m->size bytes at @data into the new file @fd before it has
 * a name, as a FETCH writes them: direct I/O, so that what the kernel's
 * extent scan finds as data is on the device, rounded up to the block and
 * truncated back. A filesystem without direct I/O, or a failed write,
 * leaves the file sparse (the chunks are fetched when read).
 *
 * Return: true if the file holds the data.
 */
static bool put_data(int fd, const struct s3d_meta *m, const void *data)
{
	size_t len = (size_t)m->size, alen, put = 0;
	bool ok = false;
	char *buf = NULL;
	int fl;
	ssize_t n;

	alen = (len + DIO_ALIGN - 1) / DIO_ALIGN * DIO_ALIGN;
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_DIRECT))
		return false;
	if (posix_memalign((void **)&buf, DIO_ALIGN, alen))
		goto out;
	memcpy(buf, data, len);
	memset(buf + len, 0, alen - len);
	while (put < alen) {
		n = pwrite(fd, buf + put, alen - put, (off_t)put);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		put += n;
	}
	ok = put == alen && !ftruncate(fd, (off_t)len);
	if (!ok) {
		s3d_warn("writing a new cache file's %zu bytes: %s; left sparse",
			 len, put < alen ? strerror(errno) : "short write");
		/* No partial data: every chunk is missing, none half there. */
		if (ftruncate(fd, 0) || ftruncate(fd, (off_t)len))
			s3d_warn("truncating a new cache file: %s", strerror(errno));
	}
out:
	free(buf);
	if (fcntl(fd, F_SETFL, fl))
		s3d_warn("clearing O_DIRECT: %s", strerror(errno));
	return ok;
}

/*
 * Test only (off unless the environment names it): S3D_TEST_CREATE_AT_LINK
 * =NAME creates, once, a LOCAL file NAME (tagged first, as the kernel's
 * create does) just before a new file is linked there: the kernel creating
 * a file while a listing adds the same name.
 */
static void test_create_at_link(int dirfd, const char *name)
{
	static const char body[] = "written here\n";
	static const char *want;
	static bool done, looked;
	uint8_t v[S3CFS_META_OFF_ETAG] = { S3CFS_META_VERSION_LOCAL,
					   S3CFS_META_LOCAL };
	int fd;

	if (!looked) {
		want = getenv("S3D_TEST_CREATE_AT_LINK");
		looked = true;
	}
	if (done || !want || strcmp(want, name))
		return;
	done = true;
	fd = openat(dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, FILE_MODE);
	if (fd < 0)
		return;
	v[S3CFS_META_OFF_SIZE] = sizeof(body) - 1;
	if (write(fd, body, sizeof(body) - 1) == sizeof(body) - 1 &&
	    !fsetxattr(fd, S3CFS_XATTR_META, v, sizeof(v), 0) &&
	    !link_tmpfile(fd, dirfd, name))
		s3d_warn("test: created LOCAL %s just before the listing links it",
			 name);
	close(fd);
}

/*
 * A new lower file for @m, made whole before it gets a name (the kernel
 * never sees it without its size and ETag): sparse, or holding the whole
 * object if @data is not NULL. When @name was found @absent it is linked
 * there directly, and -EAGAIN says something took the name meanwhile (the
 * kernel's create of a file written here: never renamed over); otherwise
 * it goes under a temporary name renamed over @name.
 *
 * Return: 1 if sparse, 2 if holding @data, -EAGAIN, or -errno.
 */
static int new_file(int dirfd, const char *name, const struct s3d_meta *m,
		    const void *data, bool absent)
{
	static unsigned int seq;
	static pid_t pid;
	bool full = false;
	char tmp[64];
	int fd, err = 0, tries;

	fd = openat(dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, FILE_MODE);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)m->size)) {
		err = -errno;
		goto out;
	}
	err = set_meta(fd, m, false);
	if (!err && m->posix)
		err = set_posix(fd, m->posix);
	if (err)
		goto out;
	if (data && m->size)
		full = put_data(fd, m, data);
	if (absent) {
		test_create_at_link(dirfd, name);
		err = link_tmpfile(fd, dirfd, name);
		/* Taken meanwhile (the kernel's create): the caller looks again. */
		if (err == -EEXIST)
			err = -EAGAIN;
		goto out;
	}
	if (!pid)
		pid = getpid();
	for (tries = 0; tries < 16; tries++) {
		snprintf(tmp, sizeof(tmp), S3CFS_HIDDEN_PREFIX ".%d.%u",
			 (int)pid, ++seq);
		err = link_tmpfile(fd, dirfd, tmp);
		if (err != -EEXIST)
			break;
	}
	if (err)
		goto out;
	if (renameat(dirfd, tmp, dirfd, name)) {
		err = -errno;
		unlinkat(dirfd, tmp, 0);
	}
out:
	close(fd);
	return err ? err : full ? 2 : 1;
}

/*
 * Is the regular file @name in @dirfd the lower file of @m already? It is
 * if it carries @m's ETag and size. A file of an older cache (one xattr
 * per tag) is one if its ETag matches and its size tag, or without one its
 * i_size, is @m's size: its tags are then rewritten in the compact form
 * (the same values the kernel took from them, its own ETag text included,
 * so nothing the kernel knows changes); with another i_size (left rounded
 * up by a crash) it is not, and is renewed.
 */
static bool file_is(int dirfd, const char *name, const struct s3d_meta *m)
{
	char etag[S3CFS_ETAG_MAX + 2], v[24], *end;
	struct s3d_meta have;
	struct stat st;
	uint64_t size;
	int64_t mtime;
	bool is = false;
	ssize_t n;
	int fd, err;

	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return false;
	err = get_meta(fd, etag, &size, &mtime);
	if (err != -ENODATA) {
		is = !err && s3d_etag_eq(etag, m->etag) && size == m->size;
		goto out;
	}
	n = fgetxattr(fd, S3CFS_XATTR_ETAG, etag, sizeof(etag) - 1);
	if (n <= 0)
		goto out;
	etag[n] = '\0';
	if (!s3d_etag_eq(etag, m->etag))
		goto out;
	err = get_old_size(fd, &size);
	if (err == -ENODATA && !fstat(fd, &st) && S_ISREG(st.st_mode)) {
		size = (uint64_t)st.st_size;
		err = 0;
	}
	if (err || size != m->size)
		goto out;
	have = *m;
	have.etag = etag;
	n = fgetxattr(fd, S3CFS_XATTR_MTIME, v, sizeof(v) - 1);
	if (n > 0) {
		v[n] = '\0';
		errno = 0;
		have.mtime = strtoll(v, &end, 10);
		if (errno || *end)
			have.mtime = m->mtime;
	}
	/* Needs no write access: xattrs are the inode's, not data. */
	err = migrate(fd, &have);
	is = !err;
	if (err)
		s3d_warn("%s: rewriting its tags: %s", name, strerror(-err));
out:
	close(fd);
	return is;
}

/*
 * The file @name of @m kept: give it @m->posix in place, under claim()'s
 * lock and having checked under it that it is still @m's (never a LOCAL
 * file: the kernel's own attributes are on it).
 *
 * Return: 0 (set, or a LOCAL or held file left alone), -EAGAIN (another
 * file is at the name now: look again), or -errno.
 */
static int posix_in_place(int dirfd, const char *name,
			  const struct s3d_meta *m)
{
	char etag[S3CFS_ETAG_MAX + 1];
	uint64_t size;
	int64_t mtime;
	int fd, err;

	fd = claim(dirfd, name);
	if (fd == -EBUSY) {
		s3d_dbg("%s: written here or held by the kernel: its attributes are the kernel's",
			name);
		return 0;
	}
	if (fd < 0)
		return -EAGAIN;
	err = get_meta(fd, etag, &size, &mtime);
	if (err || !s3d_etag_eq(etag, m->etag) || size != m->size)
		err = -EAGAIN;
	else
		err = set_posix(fd, m->posix);
	unclaim(fd);
	return err;
}

/**
 * s3d_store_ensure_file() - make @name a lower file for the object @m
 * @dirfd: the directory
 * @name: a valid single name
 * @m: the object's metadata
 * @data: NULL, or the whole object (@m->size bytes) for a new file
 * @replace_dir: a directory in the way is removed (else -EISDIR)
 *
 * A regular file that already carries @m->etag (compared by s3d_etag_eq():
 * quotes and W/ aside) and @m->size is left untouched, ETag included (it
 * may hold cached chunks); anything else is replaced by a new file, which
 * holds @data where given (else it is sparse: every chunk missing). With
 * @m->posix, a new file and a kept one (unless LOCAL) get it as
 * S3CFS_XATTR_POSIX.
 *
 * Return: 0 if kept, 1 if (re)created sparse, 2 if created with @data in
 * it, -EEXIST if a directory holding files written here (LOCAL) is in the
 * way (kept), -EBUSY if the name kept appearing and vanishing while we
 * looked (left alone), or -errno.
 */
int s3d_store_ensure_file(int dirfd, const char *name,
			  const struct s3d_meta *m, const void *data,
			  bool replace_dir)
{
	struct stat st;
	int fd, err, tries = 0;

again:
	if (!fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW)) {
		if (S_ISREG(st.st_mode)) {
			if (file_is(dirfd, name, m)) {
				err = m->posix ?
				      posix_in_place(dirfd, name, m) : 0;
				if (err == -EAGAIN && ++tries < 4)
					goto again;
				return err == -EAGAIN ? -EBUSY : err;
			}
			fd = claim(dirfd, name);
			/* Written here: kept, whatever S3 has. */
			if (fd == -EBUSY) {
				s3d_dbg("%s: kept: written here, or being made writable",
					name);
				return 0;
			}
			if (fd == -ENOENT && ++tries < 4)
				goto again;	/* gone meanwhile: look again */
			if (fd == -ENOENT)
				return -EBUSY;
			err = new_file(dirfd, name, m, data, false);
			unclaim(fd);
			return err;
		} else if (S_ISDIR(st.st_mode)) {
			if (!replace_dir)
				return -EISDIR;
			err = rm_tree(dirfd, name, 0);
			/* Files written here are in it: it stays a directory. */
			if (err == -ENOTEMPTY)
				return -EEXIST;
			if (err)
				return err;
		}
	} else if (errno == ENOENT) {
		/* A listing of a new directory: most names are new. */
		err = new_file(dirfd, name, m, data, true);
		if (err == -EAGAIN && ++tries < 4)
			goto again;
		return err == -EAGAIN ? -EBUSY : err;
	} else {
		return -errno;
	}
	return new_file(dirfd, name, m, data, false);
}

/**
 * s3d_store_add_file() - s3d_store_ensure_file() for a name that is most
 *	likely new (a listing of a directory that held nothing): linked
 *	without a look first, one system call less per listed name
 * @dirfd: the directory
 * @name: a valid single name
 * @m: the object's metadata
 *
 * A name taken after all (the kernel's create, a directory) gets
 * s3d_store_ensure_file()'s treatment.
 *
 * Return: as s3d_store_ensure_file().
 */
int s3d_store_add_file(int dirfd, const char *name, const struct s3d_meta *m)
{
	int err = new_file(dirfd, name, m, NULL, true);

	return err == -EAGAIN ? s3d_store_ensure_file(dirfd, name, m, NULL,
						       false) : err;
}

/**
 * s3d_store_add_new() - make a file for an object, only if the name is free
 * @dirfd: its directory
 * @name: a valid single name
 * @m: the object's metadata
 *
 * Return: 0, -EEXIST (the name is taken: nothing changed), or -errno.
 */
int s3d_store_add_new(int dirfd, const char *name, const struct s3d_meta *m)
{
	int err = new_file(dirfd, name, m, NULL, true);

	/* new_file() says 1 for a sparse file made: that is success here. */
	if (err == -EAGAIN)
		return -EEXIST;
	return err < 0 ? err : 0;
}

/**
 * s3d_store_empty_dir() - empty a directory of cached files
 * @dirfd: its parent
 * @name: a valid single name
 *
 * What the kernel wrote and has not uploaded (LOCAL) stays, and so does the
 * directory then.
 *
 * Return: 0 if it is empty now or gone, -ENOTEMPTY if it holds a LOCAL
 * file, or -errno.
 */
int s3d_store_empty_dir(int dirfd, const char *name)
{
	int fd, err;

	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	err = rm_contents(fd, 0);
	if (!err && !s3d_store_dir_empty(fd, false))
		err = -ENOTEMPTY;
	close(fd);
	return err;
}

/**
 * s3d_store_dir_empty() - does @dirfd hold no name a listing could give?
 * @dirfd: the directory
 * @at_root: it is the cache root
 *
 * Names no key maps to (s3d_name_valid(): daemon temporaries, and at the
 * root .s3cachefs and lost+found) do not count.
 *
 * Return: true if empty; false if not, or on any error.
 */
bool s3d_store_dir_empty(int dirfd, bool at_root)
{
	struct dirent *de;
	bool empty = true;
	int fd;
	DIR *d;

	fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return false;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return false;
	}
	while (empty && (de = readdir(d)))
		empty = !s3d_name_valid(de->d_name, strlen(de->d_name), at_root);
	closedir(d);
	return empty;
}

/**
 * s3d_store_prune() - remove what a listing did not mention
 * @dirfd: the directory
 * @at_root: it is the cache root (keep .s3cachefs and lost+found)
 * @keep: says whether a name was in the listing
 * @arg: its argument
 *
 * Stale daemon temporaries (.s3cfs*) go too: they only exist between a
 * link and a rename inside one call, and the daemon is single threaded.
 * The directory's mtime is kept (keep_mtime()).
 *
 * Return: 0 or the first -errno (the rest is still attempted).
 */
int s3d_store_prune(int dirfd, bool at_root,
		    bool (*keep)(const char *name, void *arg), void *arg)
{
	size_t hl = strlen(S3CFS_HIDDEN_PREFIX), n = 0, cap = 0, i;
	char **doomed = NULL;
	struct dirent *de;
	struct stat dst;
	int fd, err = 0, e;
	bool have_mtime;
	DIR *d;

	fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		err = -errno;
		close(fd);
		return err;
	}
	/* Collect first: removing while reading may skip entries. */
	while ((de = readdir(d))) {
		const char *nm = de->d_name;

		if (!strcmp(nm, ".") || !strcmp(nm, ".."))
			continue;
		if (at_root && (!strcmp(nm, S3CFS_META_DIR) ||
				!strcmp(nm, S3CFS_LOST_FOUND)))
			continue;
		if (strncmp(nm, S3CFS_HIDDEN_PREFIX, hl) && keep(nm, arg))
			continue;
		if (n == cap) {
			char **nd = realloc(doomed, (cap = cap ? cap * 2 : 16) *
					    sizeof(*nd));

			if (!nd) {
				err = -ENOMEM;
				break;
			}
			doomed = nd;
		}
		doomed[n] = strdup(nm);
		if (!doomed[n]) {
			err = -ENOMEM;
			break;
		}
		n++;
	}
	have_mtime = n && !fstat(dirfd, &dst);
	for (i = 0; i < n; i++) {
		s3d_dbg("removing %s (not in the listing)", doomed[i]);
		e = remove_entry(dirfd, doomed[i]);
		if (e < 0 && !err)
			err = e;
		free(doomed[i]);
	}
	if (have_mtime)
		keep_mtime(dirfd, &dst);
	free(doomed);
	closedir(d);
	return err;
}

/* Record that @dirfd now holds a complete listing, taken at @when. */
/*
 * When the directory @path was last listed (its S3CFS_XATTR_LISTED), 0 if
 * never.
 */
time_t s3d_store_get_listed(int rootfd, const char *path)
{
	long long v = 0, w = 0;
	char buf[80];
	int fd;
	ssize_t n;

	if (s3d_store_open_dir(rootfd, path, false, &fd))
		return 0;
	n = fgetxattr(fd, S3CFS_XATTR_LISTED, buf, sizeof(buf) - 1);
	if (n > 0) {
		uint64_t u;

		buf[n] = '\0';
		if (!s3d_parse_u64(buf, &u) && u <= INT64_MAX)
			v = (long long)u;
	}
	/* An index mount's listing: "<seconds> <inode> <bytes>". */
	n = fgetxattr(fd, S3CFS_XATTR_INDEX, buf, sizeof(buf) - 1);
	close(fd);
	if (n > 0) {
		buf[n] = '\0';
		if (sscanf(buf, "%lld", &w) == 1 && w > v)
			v = w;
	}
	return (time_t)v;
}

/**
 * s3d_store_unlist() - a listing of @dirfd begins: forget the last one's
 * @dirfd: the directory
 * @listed: also S3CFS_XATTR_LISTED (an index mount: the lower directory
 *	will not hold every object)
 *
 * Return: 0 or -errno.
 */
int s3d_store_unlist(int dirfd, bool listed)
{
	if (fremovexattr(dirfd, S3CFS_XATTR_INDEX) && errno != ENODATA)
		return -errno;
	if (listed && fremovexattr(dirfd, S3CFS_XATTR_LISTED) &&
	    errno != ENODATA)
		return -errno;
	return 0;
}

int s3d_store_set_listed(int dirfd, time_t when)
{
	char v[32];

	snprintf(v, sizeof(v), "%lld", (long long)when);
	if (fsetxattr(dirfd, S3CFS_XATTR_LISTED, v, strlen(v), 0))
		return -errno;
	return 0;
}

/**
 * s3d_store_set_checked() - record that @name was just found as in S3
 * @dirfd: its directory
 * @name: a file or directory kept as it was (a LOOKUP's check)
 *
 * Sets its mtime to now: the kernel trusts a lower entry for meta_ttl
 * from its mtime (a new entry, or fetched data written in, set it too).
 *
 * Return: 0 or -errno.
 */
int s3d_store_set_checked(int dirfd, const char *name)
{
	const struct timespec ts[2] = {
		{ .tv_nsec = UTIME_OMIT },	/* atime: the LRU clock */
		{ .tv_nsec = UTIME_NOW },
	};

	return utimensat(dirfd, name, ts, AT_SYMLINK_NOFOLLOW) ? -errno : 0;
}
