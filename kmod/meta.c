// SPDX-License-Identifier: GPL-2.0
/*
 * s3cachefs: what the daemon stores on a lower file.
 *
 * S3CFS_XATTR_META holds the object's size, Last-Modified and ETag in one
 * xattr (layout and history: uapi/s3cachefs.h), set before the file is
 * linked; a cache written before it existed has one xattr each. Decoded
 * here for inode.c (attributes) and namei.c (sizes); encoded for the files
 * the kernel writes (version 2, S3CFS_META_LOCAL) and for their commit
 * after an upload (version 1, the new ETag).
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

/**
 * s3cfs_meta_decode() - decode an S3CFS_XATTR_META value
 * @v: the value (layout: uapi/s3cachefs.h)
 * @n: its length
 * @m: what it says
 *
 * Version 2 is a LOCAL file's: flag S3CFS_META_LOCAL, an ETag that may be
 * empty.
 *
 * Return: 0 or -EINVAL.
 */
int s3cfs_meta_decode(const u8 *v, size_t n, struct s3cfs_meta *m)
{
	const u8 *e = v + S3CFS_META_OFF_ETAG;
	size_t elen, len;

	if (n < S3CFS_META_OFF_ETAG)
		return -EINVAL;
	if (v[0] == S3CFS_META_VERSION_LOCAL) {
		if (!(v[1] & S3CFS_META_LOCAL))
			return -EINVAL;
	} else if (v[0] != S3CFS_META_VERSION) {
		return -EINVAL;
	}
	m->flags = v[1] & S3CFS_META_LOCAL;
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
	if (!len && !m->flags)
		return -EINVAL;
	/* A NUL inside would cut the ETag sent back in FETCH. */
	return strlen(m->etag) == len ? 0 : -EINVAL;
}

/*
 * Encode @m as an S3CFS_XATTR_META value into @v (S3CFS_META_MAX bytes):
 * version 2 with S3CFS_META_LOCAL in @m->flags, else version 1. The ETag
 * is stored as text (the compact MD5 form is the daemon's saving on files
 * it lists by the million). Return: the length, or -EINVAL.
 */
static int s3cfs_meta_encode(const struct s3cfs_meta *m, u8 *v)
{
	size_t len = strlen(m->etag);
	bool local = m->flags & S3CFS_META_LOCAL;

	if (len > S3CFS_ETAG_MAX || (!len && !local) || m->size > MAX_LFS_FILESIZE)
		return -EINVAL;
	v[0] = local ? S3CFS_META_VERSION_LOCAL : S3CFS_META_VERSION;
	v[1] = local ? S3CFS_META_LOCAL : 0;
	put_unaligned_le64(m->size, v + S3CFS_META_OFF_SIZE);
	put_unaligned_le64((u64)m->mtime, v + S3CFS_META_OFF_MTIME);
	memcpy(v + S3CFS_META_OFF_ETAG, m->etag, len);
	return S3CFS_META_OFF_ETAG + len;
}

/**
 * s3cfs_meta_set() - store S3CFS_XATTR_META on a lower file
 * @lower: a positive lower dentry (the kernel's: LOCAL, or being committed)
 * @m: what to store
 *
 * Call with the mounter's credentials (trusted.* needs CAP_SYS_ADMIN).
 *
 * Return: 0 or a negative errno.
 */
int s3cfs_meta_set(struct dentry *lower, const struct s3cfs_meta *m)
{
	u8 *buf;
	int n;

	buf = kmalloc(S3CFS_META_MAX, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	n = s3cfs_meta_encode(m, buf);
	if (n >= 0)
		n = vfs_setxattr(S3CFS_IDMAP_NOP, lower, S3CFS_XATTR_META, buf,
				 n, 0);
	kfree(buf);
	return n;
}

/**
 * s3cfs_meta_tag() - tag @inode's lower file
 * @inode: upper inode of a regular file
 * @flags: 0 (a copy of version @etag) or S3CFS_META_LOCAL (based on it)
 * @size: the size to record
 * @etag: the ETag
 *
 * The mtime recorded is the inode's. Call with the mounter's credentials.
 *
 * Return: 0 or a negative errno.
 */
int s3cfs_meta_tag(struct inode *inode, u8 flags, loff_t size,
		   const char *etag)
{
	struct s3cfs_meta *m = kzalloc(sizeof(*m), GFP_KERNEL);
	int err;

	if (!m)
		return -ENOMEM;
	m->flags = flags;
	m->size = size;
	m->mtime = s3cfs_inode_get_mtime(inode).tv_sec;
	strscpy(m->etag, etag, sizeof(m->etag));
	err = s3cfs_meta_set(S3CFS_I(inode)->lower.dentry, m);
	kfree(m);
	return err;
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
		s3cfs_pr_d(pr_warn_ratelimited, lower, "%*pE: bad %s (%d)\n",
			   S3CFS_XATTR_META, err);
	return err;
}

/**
 * s3cfs_lower_local() - is a lower file LOCAL (written here)?
 * @lower: a positive lower dentry
 *
 * Return: true if its S3CFS_XATTR_META says S3CFS_META_LOCAL.
 */
bool s3cfs_lower_local(struct dentry *lower)
{
	struct s3cfs_meta *m;
	bool local;

	if (!d_is_reg(lower))
		return false;
	m = kmalloc(sizeof(*m), GFP_KERNEL);
	local = m && !s3cfs_meta_get(lower, m) && (m->flags & S3CFS_META_LOCAL);
	kfree(m);
	return local;
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
		s3cfs_pr_d(pr_warn_ratelimited, lower,
			   "%*pE: bad %s (%zd): using the file's size\n",
			   S3CFS_XATTR_SIZE, n);
	return i_size_read(linode);
}
