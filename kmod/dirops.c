// SPDX-License-Identifier: GPL-2.0
/*
 * s3cachefs: namespace changes on writable mounts (mkdir, rmdir, unlink,
 * rename), and an fsync of a directory.
 *
 * S3 first, then the lower directory: the daemon makes the change in the
 * bucket (MKDIR puts the "dir/" marker, DELETE deletes a key, RENAME
 * copies and deletes), and only when it succeeded does the kernel change
 * the lower entries, under the VFS's locks of the upper parents. A failure
 * therefore changes nothing here; a change made in S3 whose local half
 * failed is what the next listing shows. What deletes an object that is in
 * S3 needs the allow_delete mount option; a file written here and never
 * uploaded is only local and can always be removed or renamed.
 *
 * rename is of regular files only (a directory is EXDEV: mv copies it), and
 * atomic on this node: the lower file moves under its name with
 * vfs_rename(), so a reader here sees the old name or the new one, never
 * neither. S3 has no rename: CopyObject then DeleteObject, so another node
 * may briefly see both keys. The copy is conditional on the source's ETag
 * (x-amz-copy-source-if-match); the destination is overwritten as it is.
 *
 * An fsync of a directory makes its entries durable, as on ext4: every
 * change above is in S3 when its call returns, and a file created here is
 * in S3 from its first upload, so that fsync uploads the directory's files
 * created here that S3 has not had yet, those the caller owns (in
 * write-back mode: records them on the cache device, and commits the lower
 * directory, whose renames and unlinks the records follow).
 *
 * Lock order: upper parents' i_rwsem (the VFS's) -> lower parents'
 * i_rwsem (lock_rename(), I_MUTEX_PARENT), as overlayfs.
 */
#include "s3cachefs.h"
#include <linux/namei.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>

/* A name in @dir the daemon would never give: a cache-internal one. */
static int s3cfs_name_check(struct dentry *dentry)
{
	return s3cfs_name_hidden(IS_ROOT(dentry->d_parent),
				 dentry->d_name.name,
				 dentry->d_name.len) ? -EPERM : 0;
}

/* The namespace commands need a daemon of protocol 4. */
static int s3cfs_ns_ready(struct s3cfs_sb_info *sbi)
{
	if (!sbi->opts.writable)
		return -EROFS;
	if (s3cfs_daemon_version() < 4) {
		pr_info_ratelimited("s3cachefsd is too old to change names (protocol %u, needs 4)\n",
				    s3cfs_daemon_version());
		return -EPERM;
	}
	return 0;
}

/* MKDIR (with the marker's @posix) or DELETE of @dentry's name. */
static int s3cfs_ns_upcall(struct s3cfs_sb_info *sbi, u8 cmd,
			   struct dentry *dentry, u32 flags,
			   const struct s3cfs_posix *posix)
{
	struct s3cfs_req *req;
	int err = -ENOMEM;

	req = s3cfs_req_alloc(sbi, cmd);
	if (!req)
		return -ENOMEM;
	req->path = s3cfs_path_dup(dentry->d_parent);
	req->name = kstrndup(dentry->d_name.name, dentry->d_name.len,
			     GFP_KERNEL);
	req->up_flags = flags;
	if (posix)
		req->posix = *posix;
	if (req->path && req->name)
		err = s3cfs_upcall_req(req);
	s3cfs_req_put(req);
	return err;
}

/*
 * Remove @name from the lower directory @ldir if it is still @want (or,
 * with @want NULL, whatever regular file or directory it is). @dir: rmdir.
 */
static int s3cfs_lower_remove(struct dentry *ldir, const struct qstr *name,
			      struct dentry *want, bool dir)
{
	struct inode *ldi = d_inode(ldir);
	struct dentry *d;
	int err;

	inode_lock_nested(ldi, I_MUTEX_PARENT);
	d = lookup_one_len(name->name, ldir, name->len);
	err = PTR_ERR_OR_ZERO(d);
	if (err)
		goto out;
	if (d_is_negative(d) || (want && d != want))
		err = 0;	/* gone already, or another file now */
	else if (dir)
		err = vfs_rmdir(S3CFS_IDMAP_NOP, ldi, d);
	else
		err = vfs_unlink(S3CFS_IDMAP_NOP, ldi, d, NULL);
	dput(d);
out:
	inode_unlock(ldi);
	return err;
}

/*
 * s3cfs_mkdir() - ->mkdir: a directory, with its marker object in S3
 * @dir: the upper parent
 * @dentry: the negative dentry
 * @mode: with posix_meta, stored on the marker and recorded on the lower
 *	directory, so this cache shows it (S3 lists no marker's headers:
 *	directories made elsewhere show the mount's dir_mode=)
 *
 * Return: 0 or a negative errno (-EEXIST: the marker exists in S3;
 * -ENAMETOOLONG: the marker's key would exceed S3's 1024 bytes).
 */
int s3cfs_mkdir(S3CFS_IDMAP_ARG, struct inode *dir, struct dentry *dentry,
		umode_t mode)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(dir->i_sb);
	struct dentry *ldir = S3CFS_I(dir)->lower.dentry, *lower, *alias;
	struct s3cfs_posix posix = { .flags = S3CFS_POSIX_ALL };
	const struct cred *old_cred;
	struct inode *inode;
	int err;

	err = s3cfs_ns_ready(sbi) ?: s3cfs_name_check(dentry) ?:
	      s3cfs_key_check(dentry->d_parent, &dentry->d_name, true);
	if (err)
		return err;
	/* The marker's headers, for s3fs: what a directory here shows. */
	posix.mode = S_IFDIR | (sbi->opts.dir_mode & S3CFS_PERM_MASK);
	posix.uid = from_kuid_munged(i_user_ns(dir), sbi->opts.uid);
	posix.gid = from_kgid_munged(i_user_ns(dir), sbi->opts.gid);
	if (sbi->opts.posix_meta) {
		posix.mode = S_IFDIR | (mode & S3CFS_PERM_MASK);
		posix.uid = from_kuid_munged(i_user_ns(dir), current_fsuid());
		posix.gid = from_kgid_munged(i_user_ns(dir), current_fsgid());
	}
	posix.mtime = ktime_get_real_seconds();
	err = s3cfs_ns_upcall(sbi, S3CFS_CMD_MKDIR, dentry, 0, &posix);
	if (err)
		return err;
	/* The daemon made the lower directory, empty and listed. */
	old_cred = override_creds(sbi->creds);
	lower = lookup_one_len_unlocked(dentry->d_name.name, ldir,
					dentry->d_name.len);
	revert_creds(old_cred);
	if (IS_ERR(lower))
		return PTR_ERR(lower);
	err = -EIO;
	if (!d_is_dir(lower))
		goto out;
	if (sbi->opts.posix_meta) {
		old_cred = override_creds(sbi->creds);
		err = s3cfs_posix_set(lower, &posix);
		revert_creds(old_cred);
		if (err)
			s3cfs_pr_d(pr_warn_ratelimited, lower,
				   "%*pE: recording the mode of a new directory: %d\n",
				   err);
	}
	inode = s3cfs_iget(dir->i_sb, lower);
	err = PTR_ERR_OR_ZERO(inode);
	if (err)
		goto out;
	/* A directory has one dentry: one there already is the name's. */
	alias = d_find_any_alias(inode);
	if (alias) {
		dput(alias);
		iput(inode);
		err = -ESTALE;	/* the VFS looks the name up again */
		goto out;
	}
	/* Nothing in it: no LIST is needed for meta_ttl. */
	WRITE_ONCE(S3CFS_I(inode)->listed_at, jiffies ? : 1);
	dentry->d_time = jiffies;
	d_instantiate(dentry, inode);
	s3cfs_inode_touch(dir);
out:
	dput(lower);
	return err;
}

/**
 * s3cfs_rmdir() - ->rmdir: an empty directory and its marker object
 * @dir: the upper parent
 * @dentry: the directory
 *
 * Empty as S3 lists it (the daemon checks), and holding no file written
 * here. Deletes the marker object: needs allow_delete.
 *
 * Return: 0 or a negative errno (-ENOTEMPTY, -EPERM).
 */
int s3cfs_rmdir(struct inode *dir, struct dentry *dentry)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(dir->i_sb);
	struct inode *inode = d_inode(dentry);
	const struct cred *old_cred;
	int err;

	err = s3cfs_ns_ready(sbi);
	if (err)
		return err;
	if (!sbi->opts.allow_delete)
		return -EPERM;
	err = s3cfs_ns_upcall(sbi, S3CFS_CMD_DELETE, dentry, S3CFS_DEL_DIR,
			      NULL);
	if (err)
		return err;
	old_cred = override_creds(sbi->creds);
	err = s3cfs_lower_remove(S3CFS_I(dir)->lower.dentry, &dentry->d_name,
				 S3CFS_I(inode)->lower.dentry, true);
	revert_creds(old_cred);
	if (err)
		return err;
	clear_nlink(inode);
	s3cfs_inode_touch(dir);
	return 0;
}

/**
 * s3cfs_unlink() - ->unlink: a file, and its object
 * @dir: the upper parent
 * @dentry: the file
 *
 * A file written here and never uploaded is only removed here; otherwise
 * the object is deleted first (allow_delete). Opens of the file go on
 * reading and writing it; nothing is uploaded at their close.
 *
 * Return: 0 or a negative errno.
 */
int s3cfs_unlink(struct inode *dir, struct dentry *dentry)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(dir->i_sb);
	struct inode *inode = d_inode(dentry);
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	const struct cred *old_cred;
	bool in_s3;
	int err;

	if (!sbi->opts.writable)
		return -EROFS;
	/* A queued upload's PUT is answered before the DELETE goes. */
	s3cfs_upq_settle(inode);
	in_s3 = !s3cfs_inode_local(inode) || si->etag[0];
	if (in_s3) {
		err = s3cfs_ns_ready(sbi);
		if (err)
			return err;
		if (!sbi->opts.allow_delete)
			return -EPERM;
		err = s3cfs_ns_upcall(sbi, S3CFS_CMD_DELETE, dentry, 0, NULL);
		if (err)
			return err;
	}
	old_cred = override_creds(sbi->creds);
	err = s3cfs_lower_remove(S3CFS_I(dir)->lower.dentry, &dentry->d_name,
				 NULL, false);
	revert_creds(old_cred);
	if (err)
		return err;
	clear_nlink(inode);
	s3cfs_upq_unlinked(inode);
	s3cfs_inode_touch(dir);
	return 0;
}

/* An acknowledged file's upload record names its new path too. */
static int s3cfs_rename_record(struct inode *inode, struct dentry *old,
			       struct dentry *new)
{
	char *from = s3cfs_path_dup(old), *to = s3cfs_path_dup(new);
	int err = -ENOMEM;

	if (from && to)
		err = s3cfs_upq_renaming(inode, from, to);
	kfree(from);
	kfree(to);
	return err;
}

/*
 * The regular file now at @name in @ldir, opened and pinned (flock
 * LOCK_SH, local.c): the daemon does not replace it while we rename over
 * it. Return: the file (s3cfs_lower_unpin() and fput() it), NULL if no
 * regular file is there, or an ERR_PTR.
 */
static struct file *s3cfs_pin_victim(struct s3cfs_sb_info *sbi,
				     struct dentry *ldir, const struct qstr *name)
{
	struct path path = { .mnt = sbi->lower_root.mnt };
	struct file *f;
	int err;

	path.dentry = lookup_one_len_unlocked(name->name, ldir, name->len);
	if (IS_ERR(path.dentry))
		return ERR_CAST(path.dentry);
	f = NULL;
	if (d_is_reg(path.dentry))
		f = dentry_open(&path, O_RDONLY | O_LARGEFILE | O_NOATIME,
				sbi->creds);
	dput(path.dentry);
	if (IS_ERR_OR_NULL(f))
		return f;
	err = s3cfs_lower_pin(f);
	if (err) {
		fput(f);
		return ERR_PTR(err);
	}
	return f;
}

/*
 * Move the lower file of @old_dentry to @new_dentry's name, replacing what
 * is there (unless @flags says RENAME_NOREPLACE), if it is still at its
 * name. What it replaces is pinned first, and must still be at the name
 * under the parents' locks (else the daemon renewed it: again). Called
 * with the mounter's credentials.
 */
static int s3cfs_lower_rename(struct s3cfs_sb_info *sbi,
			      struct dentry *old_dentry,
			      struct dentry *new_dentry, unsigned int flags)
{
	struct dentry *lsrc = S3CFS_I(d_inode(old_dentry))->lower.dentry;
	struct dentry *lold_dir = S3CFS_I(d_inode(old_dentry->d_parent))->lower.dentry;
	struct dentry *lnew_dir = S3CFS_I(d_inode(new_dentry->d_parent))->lower.dentry;
	struct dentry *old, *new, *trap;
	struct file *victim;
	int err, tries = 0;

again:
	victim = s3cfs_pin_victim(sbi, lnew_dir, &new_dentry->d_name);
	if (IS_ERR(victim))
		return PTR_ERR(victim);
	trap = lock_rename(lnew_dir, lold_dir);
	err = PTR_ERR_OR_ZERO(trap);
	if (err)
		goto out_victim;
	old = lookup_one_len(old_dentry->d_name.name, lold_dir,
			     old_dentry->d_name.len);
	err = PTR_ERR_OR_ZERO(old);
	if (err)
		goto out_unlock;
	new = lookup_one_len(new_dentry->d_name.name, lnew_dir,
			     new_dentry->d_name.len);
	err = PTR_ERR_OR_ZERO(new);
	if (err)
		goto out_old;
	err = -ESTALE;
	if (old != lsrc || old == trap || new == trap ||
	    (d_is_positive(new) && !d_is_reg(new)))
		goto out_new;
	err = -EAGAIN;
	if (victim ? d_inode(new) != file_inode(victim) : d_is_positive(new))
		goto out_new;
	err = s3cfs_vfs_rename_flags(d_inode(lold_dir), old, d_inode(lnew_dir),
				     new, flags & RENAME_NOREPLACE);
out_new:
	dput(new);
out_old:
	dput(old);
out_unlock:
	unlock_rename(lnew_dir, lold_dir);
out_victim:
	if (victim) {
		s3cfs_lower_unpin(victim);
		fput(victim);
	}
	if (err == -EAGAIN && ++tries < 4)
		goto again;
	return err == -EAGAIN ? -EBUSY : err;
}

/*
 * RENAME in S3 of @old_dentry (a copy of its inode's version) to
 * @new_dentry. Return: 0 and the destination's ETag in *@etag (kmalloc'ed),
 * or a negative errno.
 */
static int s3cfs_rename_upcall(struct s3cfs_sb_info *sbi,
			       struct dentry *old_dentry,
			       struct dentry *new_dentry, char **etag)
{
	struct inode *inode = d_inode(old_dentry);
	struct s3cfs_req *req;
	int err = -ENOMEM;

	req = s3cfs_req_alloc(sbi, S3CFS_CMD_RENAME);
	if (!req)
		return -ENOMEM;
	req->path = s3cfs_path_dup(old_dentry);
	req->path2 = s3cfs_path_dup(new_dentry);
	req->etag = s3cfs_inode_etag(inode);
	req->size = i_size_read(inode);
	if (req->path && req->path2 && req->etag)
		err = s3cfs_upcall_req(req);
	if (!err) {
		*etag = req->reply_etag;
		req->reply_etag = NULL;
	}
	s3cfs_req_put(req);
	return err;
}

/*
 * The source of a rename is another version in S3 than here (or gone):
 * the inode goes stale and the name shows S3's object from now on.
 */
static void s3cfs_rename_stale(struct s3cfs_sb_info *sbi,
			       struct dentry *old_dentry)
{
	char *path = s3cfs_path_dup(old_dentry);

	s3cfs_inode_set_stale(d_inode(old_dentry));
	if (path)
		s3cfs_name_refresh(sbi, path);
	kfree(path);
}

/*
 * s3cfs_rename() - ->rename of a regular file
 * @old_dir: the source's parent
 * @old_dentry: the source
 * @new_dir: the destination's parent
 * @new_dentry: the destination (positive: replaced)
 * @flags: 0 or RENAME_NOREPLACE (the VFS checked it)
 *
 * Return: 0, -EXDEV for a directory or an object above 5 GiB (mv copies),
 * -EINVAL for RENAME_EXCHANGE and RENAME_WHITEOUT, -ENAMETOOLONG for a
 * destination whose key exceeds S3's 1024 bytes, -EPERM without
 * allow_delete for an object in S3, -EBUSY for a file being written that
 * was uploaded before (close it first), -ESTALE if the source changed in
 * S3, or another negative errno.
 */
int s3cfs_rename(S3CFS_IDMAP_ARG, struct inode *old_dir,
		 struct dentry *old_dentry, struct inode *new_dir,
		 struct dentry *new_dentry, unsigned int flags)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(old_dir->i_sb);
	struct inode *inode = d_inode(old_dentry);
	struct inode *target = d_inode(new_dentry);
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	const struct cred *old_cred;
	char *etag = NULL;
	bool local;
	int err;

	if (flags & ~RENAME_NOREPLACE)
		return -EINVAL;
	if (d_is_dir(old_dentry))
		return -EXDEV;
	err = s3cfs_ns_ready(sbi) ?: s3cfs_name_check(new_dentry) ?:
	      s3cfs_key_check(new_dentry->d_parent, &new_dentry->d_name,
			      false);
	if (err)
		return err;
	/* Queued uploads of either, answered before the names change. */
	s3cfs_upq_settle(inode);
	if (target)
		s3cfs_upq_settle(target);
	local = s3cfs_inode_local(inode);
	if (local && si->etag[0]) {
		s3cfs_pr_d(pr_info_ratelimited, old_dentry,
			   "%*pE: changed here and not uploaded as it is: close or fsync it before renaming it\n");
		return -EBUSY;
	}
	if (!local) {
		if (!sbi->opts.allow_delete)
			return -EPERM;
		err = s3cfs_rename_upcall(sbi, old_dentry, new_dentry, &etag);
		if (err == -ESTALE)
			s3cfs_rename_stale(sbi, old_dentry);
		if (err)
			return err;
	}
	if (local && test_bit(S3CFS_I_QUEUED, &si->flags)) {
		err = s3cfs_rename_record(inode, old_dentry, new_dentry);
		if (err)
			return err;
	}
	old_cred = override_creds(sbi->creds);
	err = s3cfs_lower_rename(sbi, old_dentry, new_dentry, flags);
	revert_creds(old_cred);
	if (err) {
		if (!local)
			s3cfs_pr_d(pr_warn_ratelimited, new_dentry,
				   "%*pE: renamed to it in S3, not in the cache (%d); the next listing shows it\n",
				   err);
		kfree(etag);
		return err;
	}
	/*
	 * The file stands for the destination object now, whose ETag is new
	 * if the source was a multipart object. Not retagged, its chunks
	 * would be fetched If-Match the old one and refused: renewed, not
	 * wrong.
	 */
	if (etag && strcmp(etag, si->etag))
		s3cfs_local_retag(inode, etag);
	kfree(etag);
	/* A file never uploaded now goes to the key it replaced, if any. */
	if (local && target)
		s3cfs_local_rebase(inode, target);
	if (target) {
		clear_nlink(target);
		s3cfs_upq_unlinked(target);
	}
	s3cfs_inode_touch(old_dir);
	if (new_dir != old_dir)
		s3cfs_inode_touch(new_dir);
	return 0;
}

/* A file created here that S3 has had no version of, nor a record. */
static bool s3cfs_created_here(struct inode *inode)
{
	struct s3cfs_inode_info *si = S3CFS_I(inode);

	return S_ISREG(inode->i_mode) && s3cfs_inode_local(inode) &&
	       inode->i_nlink && !READ_ONCE(si->etag[0]) &&
	       !s3cfs_inode_stale(inode) &&
	       !test_bit(S3CFS_I_QUEUED, &si->flags);
}

/*
 * The names in @dir of files created here, referenced, at most @max;
 * their number in *@n.
 */
static void s3cfs_created_children(struct dentry *dir, struct dentry **v,
				   unsigned int max, unsigned int *n)
{
	struct dentry *child;

	*n = 0;
	spin_lock(&dir->d_lock);
	s3cfs_for_each_child(child, dir) {
		if (*n == max)
			break;
		spin_lock_nested(&child->d_lock, DENTRY_D_LOCK_NESTED);
		if (child->d_inode && !d_unhashed(child) &&
		    s3cfs_created_here(child->d_inode)) {
			if (v)
				v[*n] = dget_dlock(child);
			(*n)++;
		}
		spin_unlock(&child->d_lock);
	}
	spin_unlock(&dir->d_lock);
}

/**
 * s3cfs_sync_created() - the files created here in a directory that S3
 *	has not had made to exist there (write-back: recorded), for an fsync
 *	of the directory
 * @dir: the upper directory
 *
 * Return: 0, or the first error of an upload (the others are tried).
 */
int s3cfs_sync_created(struct dentry *dir)
{
	struct dentry **v;
	unsigned int i, n, max;
	int err = 0, e;

	s3cfs_created_children(dir, NULL, UINT_MAX, &max);
	if (!max)
		return 0;
	v = kvmalloc_array(max, sizeof(*v), GFP_KERNEL);
	if (!v)
		return -ENOMEM;
	/* Those created after the count are after this fsync began. */
	s3cfs_created_children(dir, v, max, &n);
	for (i = 0; i < n; i++) {
		/*
		 * Only its owner's (or CAP_FOWNER's): another user who can
		 * read the directory must not send a file half written.
		 */
		e = inode_owner_or_capable(S3CFS_IDMAP_NOP, d_inode(v[i])) ?
		    s3cfs_upload_created(d_inode(v[i]), v[i]) : 0;
		if (!err)
			err = e;
		dput(v[i]);
	}
	kvfree(v);
	return err;
}
