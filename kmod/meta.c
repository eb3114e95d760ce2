// SPDX-License-Identifier: GPL-2.0
/*
 * s3cachefs: what the daemon stores on a lower file.
 *
 * S3CFS_XATTR_META holds the object's size, Last-Modified and ETag in one
 * xattr (layout and history: uapi/s3cachefs.h), set before the file is
 * linked; a cache written before it existed has one xattr each. Decoded
 * here for inode.c (attributes) and namei.c (sizes).
 */
#include "s3cachefs.h"
#include <linux/slab.h>
#include <linux/xattr.h>
#include <linux/kstrtox.h>

/**
 * s3cfs_get_xattr() - a text xattr of a lower dentry, NUL terminated
 * @lower: the lower dentry
 * @name: the xattr
 * @buf: where to put it
 * @size: size of @buf, the NUL included
 *
 * Return: its length, or a negative errno (-ENODATA: none).
 */
ssize_t s3cfs_get_xattr(struct dentry *lower, const char *name, char *buf,
			size_t size)
{
	ssize_t n = __vfs_getxattr(lower, d_inode(lower), name, buf, size - 1);

	if (n < 0)
		return n;
	buf[n] = '\0';
	return n;
}

/* Decode an S3CFS_XATTR_META value (layout: uapi/s3cachefs.h). */
static int s3cfs_meta_decode(const u8 *v, size_t n, struct s3cfs_meta *m)
{
	const u8 *e = v + S3CFS_META_OFF_ETAG;
	size_t elen, len;

	if (n < S3CFS_META_OFF_ETAG || v[0] != S3CFS_META_VERSION)
		return -EINVAL;
	elen = n - S3CFS_META_OFF_ETAG;
	m->size = get_unaligned_le64(v + S3CFS_META_OFF_SIZE);
	m->mtime = (s64)get_unaligned_le64(v + S3CFS_META_OFF_MTIME);
	if (m->size > MAX_LFS_FILESIZE)
		return -EINVAL;
	if (v[1] & S3CFS_META_MD5) {
		/* '"' + 32 hex digits + tail + '"' */
		if (elen < 16 || elen - 16 > S3CFS_META_TAIL_MAX)
			return -EINVAL;
		len = elen - 16 + 34;
		m->etag[0] = '"';
		bin2hex(m->etag + 1, e, 16);
		memcpy(m->etag + 33, e + 16, elen - 16);
		m->etag[len - 1] = '"';
	} else {
		if (elen > S3CFS_ETAG_MAX)
			return -EINVAL;
		len = elen;
		memcpy(m->etag, e, elen);
	}
	m->etag[len] = '\0';
	/* A NUL inside would cut the ETag sent back in FETCH. */
	return strlen(m->etag) == len ? 0 : -EINVAL;
}

/**
 * s3cfs_meta_get() - the lower file's S3CFS_XATTR_META, decoded
 * @lower: a positive lower dentry
 * @m: filled in
 *
 * Return: 0, -ENODATA (an older cache: see the separate xattrs), or another
 * -errno (logged).
 */
int s3cfs_meta_get(struct dentry *lower, struct s3cfs_meta *m)
{
	u8 *buf;
	ssize_t n;
	int err;

	buf = kmalloc(S3CFS_META_MAX, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	n = __vfs_getxattr(lower, d_inode(lower), S3CFS_XATTR_META, buf,
			   S3CFS_META_MAX);
	err = n < 0 ? (int)n : s3cfs_meta_decode(buf, n, m);
	kfree(buf);
	if (err && err != -ENODATA)
		pr_warn_ratelimited("%pd: bad %s (%d)\n", lower,
				    S3CFS_XATTR_META, err);
	return err;
}

/**
 * s3cfs_lower_size() - the size of the object a lower file caches
 * @lower: a positive lower dentry of a regular file
 *
 * The size in the daemon's S3CFS_XATTR_META (or, in an older cache,
 * S3CFS_XATTR_SIZE), written before the file was linked: the lower i_size
 * can be longer (a crash between writing the last piece, rounded up to
 * 4 KiB, and truncating it back). A file without either (a cache written
 * before they existed) or with an unreadable one is sized by its i_size,
 * as it always was; the daemon rewrites or renews the file when it next
 * meets it.
 *
 * Return: the size in bytes.
 */
loff_t s3cfs_lower_size(struct dentry *lower)
{
	struct inode *linode = d_inode(lower);
	struct s3cfs_meta *m;
	char buf[24];
	ssize_t n;
	s64 size;
	int err;

	m = kmalloc(sizeof(*m), GFP_KERNEL);
	err = m ? s3cfs_meta_get(lower, m) : -ENOMEM;
	size = err ? 0 : m->size;
	kfree(m);
	if (!err)
		return size;
	if (err != -ENODATA)
		return i_size_read(linode);
	n = s3cfs_get_xattr(lower, S3CFS_XATTR_SIZE, buf, sizeof(buf));
	if (n > 0 && !kstrtos64(buf, 10, &size) && size >= 0 &&
	    size <= MAX_LFS_FILESIZE)
		return size;
	if (n != -ENODATA)
		pr_warn_ratelimited("%pd: bad %s (%zd): using the file's size\n",
				    lower, S3CFS_XATTR_SIZE, n);
	return i_size_read(linode);
}
