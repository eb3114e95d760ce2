// SPDX-License-Identifier: GPL-2.0
/*
 * s3cachefs: symlinks (posix_meta mounts), as s3fs-fuse stores them: an
 * object whose body is the target and whose x-amz-meta-mode is S_IFLNK.
 *
 * Its lower file is a regular file like any object's, so the target is
 * fetched and cached as bytes and read through our page cache. symlink(2)
 * makes a LOCAL file holding the target and uploads it at once, so the
 * link exists in S3 when the call returns.
 */
#include "s3cachefs.h"
#include <linux/namei.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>

static const char *s3cfs_get_link(struct dentry *dentry, struct inode *inode,
				  struct delayed_call *done)
{
	int err;

	/* Under RCU only a cached target is served (page_get_link). */
	if (!dentry)
		return page_get_link(dentry, inode, done);
	if (s3cfs_inode_stale(inode))
		return ERR_PTR(-ESTALE);
	err = s3cfs_open_lower(inode);
	if (!err)
		err = s3cfs_chunks_load(inode);
	if (err)
		return ERR_PTR(err);
	return page_get_link(dentry, inode, done);
}

static int s3cfs_symlink_getattr(S3CFS_IDMAP_ARG, const struct path *path,
				 struct kstat *stat, u32 request_mask,
				 unsigned int flags)
{
	s3cfs_fillattr(d_inode(path->dentry), request_mask, stat);
	return 0;
}

const struct inode_operations s3cfs_symlink_iops = {
	.get_link	= s3cfs_get_link,
	.getattr	= s3cfs_symlink_getattr,
	.setattr	= s3cfs_setattr,
};

/* A LOCAL lower file named @name holding @target, tagged as a symlink. */
static struct dentry *s3cfs_symlink_lower(struct inode *dir,
					  const struct qstr *name,
					  const char *target)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(dir->i_sb);
	size_t len = strlen(target);
	struct s3cfs_posix p = {
		.flags = S3CFS_POSIX_ALL,
		.mode = S_IFLNK | 0777,
		.uid = from_kuid_munged(i_user_ns(dir), current_fsuid()),
		.gid = from_kgid_munged(i_user_ns(dir), current_fsgid()),
		.mtime = ktime_get_real_seconds(),
	};
	const struct cred *old_cred;
	struct dentry *lower;
	struct s3cfs_meta *m;
	struct file *tmp;
	loff_t pos = 0;
	ssize_t n;
	int err;

	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (!m)
		return ERR_PTR(-ENOMEM);
	m->flags = S3CFS_META_LOCAL;
	m->mtime = p.mtime;
	m->size = len;
	old_cred = override_creds(sbi->creds);
	tmp = s3cfs_tmpfile_open(&S3CFS_I(dir)->lower, S_IFREG | 0600,
				 O_RDWR | O_LARGEFILE, sbi->creds);
	if (IS_ERR(tmp)) {
		lower = ERR_CAST(tmp);
		goto out;
	}
	n = kernel_write(tmp, target, len, &pos);
	err = n < 0 ? (int)n : n != len ? -EIO : 0;
	if (!err)
		err = s3cfs_meta_set(tmp->f_path.dentry, m);
	if (!err)
		err = s3cfs_posix_set(tmp->f_path.dentry, &p);
	lower = err ? ERR_PTR(err) :
		s3cfs_link_lower(S3CFS_I(dir)->lower.dentry, tmp, name);
	fput(tmp);
out:
	revert_creds(old_cred);
	kfree(m);
	return lower;
}

/* Take back a link that never reached S3: remove its lower file. */
static void s3cfs_symlink_undo(struct inode *dir, struct dentry *lower)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(dir->i_sb);
	struct dentry *ldir = S3CFS_I(dir)->lower.dentry;
	const struct cred *old_cred;
	int err = -ENOENT;

	old_cred = override_creds(sbi->creds);
	inode_lock_nested(d_inode(ldir), I_MUTEX_PARENT);
	if (lower->d_parent == ldir && d_is_positive(lower))
		err = vfs_unlink(S3CFS_IDMAP_NOP, d_inode(ldir), lower, NULL);
	inode_unlock(d_inode(ldir));
	revert_creds(old_cred);
	if (err)
		s3cfs_pr_d(pr_warn, lower,
			   "%*pE: removing a symlink S3 did not take: %d\n", err);
}

/*
 * s3cfs_symlink() - ->symlink: an s3fs-style symlink object
 * @dir: the upper parent
 * @dentry: the negative upper dentry
 * @target: what the link points to
 *
 * Only on writable posix_meta mounts (elsewhere a symlink would read back
 * as a file: EPERM). The object is put at once, If-None-Match: *.
 *
 * Return: 0, -EEXIST (the key exists in S3), or another negative errno.
 */
int s3cfs_symlink(S3CFS_IDMAP_ARG, struct inode *dir, struct dentry *dentry,
		  const char *target)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(dir->i_sb);
	struct dentry *lower;
	struct inode *inode;
	int err;

	if (!sbi->opts.writable)
		return -EROFS;
	if (!sbi->opts.posix_meta)
		return -EPERM;
	if (s3cfs_name_hidden(IS_ROOT(dentry->d_parent), dentry->d_name.name,
			      dentry->d_name.len))
		return -EPERM;
	if (strlen(target) >= PATH_MAX)
		return -ENAMETOOLONG;
	err = s3cfs_key_check(dentry->d_parent, &dentry->d_name, false);
	if (err)
		return err;
	lower = s3cfs_symlink_lower(dir, &dentry->d_name, target);
	if (IS_ERR(lower))
		return PTR_ERR(lower);
	inode = s3cfs_iget(dir->i_sb, lower);
	if (IS_ERR(inode)) {
		err = PTR_ERR(inode);
		goto undo;
	}
	err = -EIO;
	if (WARN_ON_ONCE(!S_ISLNK(inode->i_mode) || !s3cfs_inode_local(inode)))
		goto put;
	/* The commit after the upload reads which chunks the file has. */
	err = s3cfs_open_lower(inode);
	if (err)
		goto put;
	set_bit(S3CFS_I_DIRTY, &S3CFS_I(inode)->flags);
	err = s3cfs_upload_inode(inode, dentry, NULL, true);
	/* A conflict moved the file aside: someone else has the key. */
	if (err == -ESTALE)
		err = -EEXIST;
	if (err)
		goto put;
	dput(lower);
	dentry->d_time = jiffies;
	d_instantiate(dentry, inode);
	s3cfs_inode_touch(dir);
	return 0;
put:
	/* No name will reach it: let it go at once, lower file and all. */
	s3cfs_inode_set_stale(inode);
	iput(inode);
undo:
	if (err != -EEXIST)
		s3cfs_symlink_undo(dir, lower);
	dput(lower);
	return err;
}
