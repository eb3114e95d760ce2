// SPDX-License-Identifier: GPL-2.0
/*
 * s3cachefs: POSIX attributes in S3 (mount option posix_meta).
 *
 * S3 keeps no mode, owner or mtime of its own. s3fs-fuse stores them as
 * x-amz-meta-mode, -uid, -gid and -mtime, and so do we: every upload and
 * directory marker carries them (upload.c, dirops.c), and on a posix_meta
 * mount they are what a file shows. A listing carries no user metadata,
 * so the daemon records what a LOOKUP's HEAD found on the lower file
 * (S3CFS_XATTR_POSIX) and a file without that record is looked up before
 * it is used (namei.c). chmod, chown and utimes of a file S3 has become a
 * SETMETA (a copy of the object onto itself with the new headers); of a
 * LOCAL file they go with its next upload. Objects without the headers
 * keep the mount's uid=, gid= and file_mode=; directories show dir_mode=
 * unless made here (a listing carries no marker's headers).
 */
#include "s3cachefs.h"
#include <linux/slab.h>
#include <linux/xattr.h>

/* Decode an S3CFS_XATTR_POSIX value (layout: uapi/s3cachefs.h). */
static int s3cfs_posix_decode(const u8 *v, size_t n, struct s3cfs_posix *p)
{
	if (n != S3CFS_POSIX_XATTR_LEN || v[0] != S3CFS_POSIX_VERSION ||
	    (v[1] & ~S3CFS_POSIX_ALL))
		return -EINVAL;
	memset(p, 0, sizeof(*p));
	p->flags = v[1];
	p->mode = get_unaligned_le32(v + 4);
	p->uid = get_unaligned_le32(v + 8);
	p->gid = get_unaligned_le32(v + 12);
	p->mtime = (s64)get_unaligned_le64(v + 16);
	return 0;
}

/**
 * s3cfs_posix_get() - the POSIX attributes recorded on a lower file
 * @lower: a positive lower dentry
 * @p: filled in
 *
 * Return: 0, -ENODATA (not recorded: the object was not HEADed), or
 * another negative errno (logged).
 */
int s3cfs_posix_get(struct dentry *lower, struct s3cfs_posix *p)
{
	u8 v[S3CFS_POSIX_XATTR_LEN + 1];
	ssize_t n;
	int err;

	n = __vfs_getxattr(lower, d_inode(lower), S3CFS_XATTR_POSIX, v,
			   sizeof(v));
	err = n < 0 ? (int)n : s3cfs_posix_decode(v, n, p);
	if (err && err != -ENODATA)
		s3cfs_pr_d(pr_warn_ratelimited, lower, "%*pE: bad %s (%d)\n",
			   S3CFS_XATTR_POSIX, err);
	return err;
}

/**
 * s3cfs_posix_set() - record POSIX attributes on a lower file
 * @lower: a positive lower dentry (LOCAL, or the kernel's after a commit)
 * @p: what to record
 *
 * Call with the mounter's credentials (trusted.* needs CAP_SYS_ADMIN).
 *
 * Return: 0 or a negative errno.
 */
int s3cfs_posix_set(struct dentry *lower, const struct s3cfs_posix *p)
{
	u8 v[S3CFS_POSIX_XATTR_LEN] = { S3CFS_POSIX_VERSION };

	v[1] = p->flags & S3CFS_POSIX_ALL;
	put_unaligned_le32(p->mode, v + 4);
	put_unaligned_le32(p->uid, v + 8);
	put_unaligned_le32(p->gid, v + 12);
	put_unaligned_le64((u64)p->mtime, v + 16);
	return vfs_setxattr(S3CFS_IDMAP_NOP, lower, S3CFS_XATTR_POSIX, v,
			    sizeof(v), 0);
}

/**
 * s3cfs_posix_of() - the POSIX attributes of an inode, to store in S3
 * @inode: upper inode
 * @p: filled in, every field set
 */
void s3cfs_posix_of(struct inode *inode, struct s3cfs_posix *p)
{
	struct timespec64 mt = s3cfs_inode_get_mtime(inode);

	memset(p, 0, sizeof(*p));
	p->flags = S3CFS_POSIX_ALL;
	p->mode = inode->i_mode;
	p->uid = from_kuid_munged(i_user_ns(inode), inode->i_uid);
	p->gid = from_kgid_munged(i_user_ns(inode), inode->i_gid);
	p->mtime = mt.tv_sec;
	p->mtime_nsec = mt.tv_nsec;
}

/*
 * Show what @p has on @inode: permission bits (never the type: a mode
 * that says device, FIFO or socket shows as the file it is; never
 * setuid/setgid, S3CFS_PERM_MASK: whoever can put objects in the bucket
 * must not plant setuid programs), owner, mtime. Owners that do not map
 * into the mount's namespace are left.
 */
static void s3cfs_posix_apply(struct inode *inode, const struct s3cfs_posix *p)
{
	kuid_t uid = make_kuid(i_user_ns(inode), p->uid);
	kgid_t gid = make_kgid(i_user_ns(inode), p->gid);

	spin_lock(&inode->i_lock);
	if (p->flags & S3CFS_POSIX_MODE)
		inode->i_mode = (inode->i_mode & S_IFMT) | (p->mode & S3CFS_PERM_MASK);
	if ((p->flags & S3CFS_POSIX_UID) && uid_valid(uid))
		inode->i_uid = uid;
	if ((p->flags & S3CFS_POSIX_GID) && gid_valid(gid))
		inode->i_gid = gid;
	spin_unlock(&inode->i_lock);
	if (p->flags & S3CFS_POSIX_MTIME) {
		struct timespec64 ts = { .tv_sec = p->mtime };

		s3cfs_inode_set_times(inode, ts);
	}
}

/**
 * s3cfs_posix_load() - the POSIX attributes of a new inode (s3cfs_iget)
 * @inode: upper inode being set up (I_NEW): its type, size and times set
 * @lower: its lower dentry
 *
 * A regular file's record is what its object's headers said; a
 * directory's is what mkdir here was asked for (s3cfs_mkdir()).
 *
 * Return: the type the inode stands for: S_IFLNK for an s3fs-style
 * symlink (mode S_IFLNK, a body shorter than PATH_MAX), else its own.
 */
umode_t s3cfs_posix_load(struct inode *inode, struct dentry *lower)
{
	umode_t type = inode->i_mode & S_IFMT;
	struct s3cfs_posix p;

	if (!S3CFS_SB(inode->i_sb)->opts.posix_meta ||
	    s3cfs_posix_get(lower, &p))
		return type;
	s3cfs_posix_apply(inode, &p);
	if (type == S_IFREG && (p.flags & S3CFS_POSIX_MODE) &&
	    S_ISLNK(p.mode) && i_size_read(inode) < PATH_MAX)
		return S_IFLNK;
	return type;
}

/**
 * s3cfs_posix_refresh() - show what the daemon last found in S3
 * @inode: upper inode whose lower file a lookup just confirmed
 *
 * A chmod elsewhere changes an object's headers, not its ETag (and so not
 * its lower file): the daemon rewrites the record in place, and the inode
 * shows it from the next lookup on. Not for LOCAL files: theirs is ours.
 */
void s3cfs_posix_refresh(struct inode *inode)
{
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	struct s3cfs_posix p;

	if (!S3CFS_SB(inode->i_sb)->opts.posix_meta || S_ISDIR(inode->i_mode) ||
	    s3cfs_inode_local(inode))
		return;
	if (!s3cfs_posix_get(si->lower.dentry, &p))
		s3cfs_posix_apply(inode, &p);
}

/**
 * s3cfs_posix_unknown() - must this lower file be HEADed before use?
 * @sbi: the mount
 * @lower: a lower dentry (may be negative)
 *
 * Return: true on a posix_meta mount for a regular file the daemon made
 * from a listing (no S3CFS_XATTR_POSIX) that is not LOCAL.
 */
bool s3cfs_posix_unknown(struct s3cfs_sb_info *sbi, struct dentry *lower)
{
	struct s3cfs_posix p;

	if (!sbi->opts.posix_meta || !d_is_reg(lower))
		return false;
	return s3cfs_posix_get(lower, &p) == -ENODATA &&
	       !s3cfs_lower_local(lower);
}

/* Does @attr change what S3 keeps of @inode (mode, owner, mtime)? */
static bool s3cfs_posix_changes(struct inode *inode, const struct iattr *attr)
{
	return s3cfs_attr_changes_ids(inode, attr) ||
	       (attr->ia_valid & ATTR_MTIME);
}

/* What @inode's attributes will be after @attr, as S3 will keep them. */
static void s3cfs_posix_after(struct inode *inode, const struct iattr *attr,
			      struct s3cfs_posix *p)
{
	s3cfs_posix_of(inode, p);
	if (attr->ia_valid & ATTR_MODE)
		p->mode = (inode->i_mode & S_IFMT) | (attr->ia_mode & S_IALLUGO);
	if (attr->ia_valid & ATTR_UID)
		p->uid = from_kuid_munged(i_user_ns(inode),
					  vfsuid_into_kuid(attr->ia_vfsuid));
	if (attr->ia_valid & ATTR_GID)
		p->gid = from_kgid_munged(i_user_ns(inode),
					  vfsgid_into_kgid(attr->ia_vfsgid));
	if (attr->ia_valid & ATTR_MTIME) {
		p->mtime = attr->ia_mtime.tv_sec;
		p->mtime_nsec = attr->ia_mtime.tv_nsec;
	}
}

/*
 * SETMETA: give the object @inode stands for the attributes @p; on
 * success the lower file is retagged with the object's new ETag and
 * records @p. -ESTALE: S3 has another version (the inode goes stale).
 */
static int s3cfs_posix_setmeta(struct dentry *dentry, const struct s3cfs_posix *p)
{
	struct inode *inode = d_inode(dentry);
	struct s3cfs_sb_info *sbi = S3CFS_SB(inode->i_sb);
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	const struct cred *old_cred;
	struct s3cfs_req *req;
	int err;

	if (s3cfs_daemon_version() < 5)
		return s3cfs_daemon_present() ? -EPROTO : -EIO;
	req = s3cfs_req_alloc(sbi, S3CFS_CMD_SETMETA);
	if (!req)
		return -ENOMEM;
	req->path = s3cfs_path_dup(dentry);
	req->etag = s3cfs_inode_etag(inode);
	err = -ENOMEM;
	if (!req->path || !req->etag)
		goto out;
	req->size = i_size_read(inode);
	req->posix = *p;
	err = s3cfs_upcall_req(req);
	if (!err && !req->reply_etag)
		err = -EIO;
	if (err == -ESTALE) {
		s3cfs_inode_set_stale(inode);
		s3cfs_name_refresh(sbi, req->path);
		goto out;
	}
	if (err)
		goto out;
	/*
	 * Same bytes, a new version: the lower file stands for it now. The
	 * tag changes under the pin, tag first, as s3cfs_local_retag()
	 * does: the daemon's writers check the tag under their lock.
	 */
	err = s3cfs_open_lower(inode);
	if (err)
		goto tagged;
	old_cred = override_creds(sbi->creds);
	err = s3cfs_lower_pin(si->lower_file);
	if (!err) {
		err = s3cfs_meta_tag(inode, 0, i_size_read(inode),
				     req->reply_etag);
		if (!err)
			s3cfs_inode_set_etag(inode, req->reply_etag);
		if (!err)
			err = s3cfs_posix_set(si->lower.dentry, p);
		s3cfs_lower_unpin(si->lower_file);
	}
	revert_creds(old_cred);
tagged:
	if (err)
		pr_err("s3://%*pE/%*pE%*pE has new attributes as %*pE, but its cache file could not be tagged (%d)\n",
		       s3cfs_esclen(sbi->bucket), sbi->bucket,
		       s3cfs_esclen(sbi->prefix), sbi->prefix,
		       s3cfs_esclen(req->path), req->path,
		       s3cfs_esclen(req->reply_etag), req->reply_etag, err);
out:
	s3cfs_req_put(req);
	return err;
}

/**
 * s3cfs_posix_dir_setattr() - chmod, chown of a directory on a
 *	posix_meta mount
 * @dentry: a directory
 * @attr: what to change (setattr_prepare() passed): a mode or owner
 *	other than the directory's
 *
 * Modes and owners go on the directory's marker object in S3 first, as
 * s3fs keeps them (SETMETA with S3CFS_SETMETA_DIR: the marker is made if
 * there is none), then on the lower directory, where s3cfs_posix_load()
 * finds them; times are this node's (S3 keeps no directory times). The
 * mount's root has no marker: its attributes are the mount options'.
 * Called with i_rwsem held.
 *
 * Return: 0 or a negative errno (EPERM: the root, set-ID bits, or a
 * daemon older than protocol 11).
 */
int s3cfs_posix_dir_setattr(struct dentry *dentry, struct iattr *attr)
{
	struct inode *inode = d_inode(dentry);
	struct s3cfs_sb_info *sbi = S3CFS_SB(inode->i_sb);
	const struct cred *old_cred;
	struct s3cfs_req *req;
	struct s3cfs_posix p;
	int err;

	/* Never shown (S3CFS_PERM_MASK): not kept either. */
	if ((attr->ia_valid & ATTR_MODE) && (attr->ia_mode & (S_ISUID | S_ISGID)))
		return -EPERM;
	if (IS_ROOT(dentry) || s3cfs_daemon_version() < 11)
		return -EPERM;
	if (s3cfs_inode_stale(inode) || !inode->i_nlink)
		return -ESTALE;
	s3cfs_posix_after(inode, attr, &p);
	req = s3cfs_req_alloc(sbi, S3CFS_CMD_SETMETA);
	if (!req)
		return -ENOMEM;
	req->path = s3cfs_path_dup(dentry);
	req->up_flags = S3CFS_SETMETA_DIR;
	req->posix = p;
	err = req->path ? s3cfs_upcall_req(req) : -ENOMEM;
	s3cfs_req_put(req);
	if (err)
		return err;
	setattr_copy(S3CFS_IDMAP_NOP, inode, attr);
	old_cred = override_creds(sbi->creds);
	err = s3cfs_posix_set(S3CFS_I(inode)->lower.dentry, &p);
	revert_creds(old_cred);
	return err;
}

/**
 * s3cfs_posix_setattr() - chmod, chown, utimes on a posix_meta mount
 * @dentry: a regular file or a symlink
 * @attr: what to change (setattr_prepare() passed); no size change
 *
 * A LOCAL file takes them at once, records them on its lower file and
 * sends them with its next upload (it is marked changed). A file S3 has
 * gets them in S3 first (SETMETA), then here. An atime alone is this
 * node's only. Called with i_rwsem held.
 *
 * Return: 0 or a negative errno.
 */
int s3cfs_posix_setattr(struct dentry *dentry, struct iattr *attr)
{
	struct inode *inode = d_inode(dentry);
	struct s3cfs_posix p;
	int err;

	if (s3cfs_inode_stale(inode))
		return -ESTALE;
	/* Never shown (S3CFS_PERM_MASK): not kept either. */
	if ((attr->ia_valid & ATTR_MODE) && (attr->ia_mode & (S_ISUID | S_ISGID)))
		return -EPERM;
	if (!s3cfs_posix_changes(inode, attr)) {
		setattr_copy(S3CFS_IDMAP_NOP, inode, attr);
		return 0;
	}
	if (s3cfs_inode_local(inode)) {
		struct s3cfs_sb_info *sbi = S3CFS_SB(inode->i_sb);
		const struct cred *old_cred;

		/* Recorded, so that an inode read back shows it too. */
		setattr_copy(S3CFS_IDMAP_NOP, inode, attr);
		s3cfs_posix_of(inode, &p);
		old_cred = override_creds(sbi->creds);
		err = s3cfs_posix_set(S3CFS_I(inode)->lower.dentry, &p);
		revert_creds(old_cred);
		set_bit(S3CFS_I_DIRTY, &S3CFS_I(inode)->flags);
		return err;
	}
	/* Unlinked or replaced: its name's object is another file's now. */
	if (!inode->i_nlink)
		return -ESTALE;
	s3cfs_posix_after(inode, attr, &p);
	err = s3cfs_posix_setmeta(dentry, &p);
	if (err)
		return err;
	setattr_copy(S3CFS_IDMAP_NOP, inode, attr);
	return 0;
}
