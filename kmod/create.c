// SPDX-License-Identifier: GPL-2.0
/*
 * s3cachefs: creating files (writable mounts).
 *
 * A new file is a LOCAL lower file from its first moment: an O_TMPFILE in
 * the lower directory, tagged S3CFS_META_LOCAL with no ETag (the key must
 * not exist when it is uploaded), then linked under its name. Nothing
 * else ever sees the name without the tag, so no listing or lookup of the
 * daemon takes it for a copy of an object. Nothing is sent to S3 until
 * the file is closed or synced (upload.c).
 */
#include "s3cachefs.h"
#include <linux/namei.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>

/**
 * s3cfs_link_lower() - link a tagged temporary lower file under its name
 * @ldir: the lower directory
 * @tmp: the O_TMPFILE, tagged
 * @name: the name
 *
 * Return: the new positive lower dentry, or ERR_PTR(-EEXIST) (a listing
 * put an object there) or another error.
 */
struct dentry *s3cfs_link_lower(struct dentry *ldir, struct file *tmp,
				const struct qstr *name)
{
	struct inode *ldi = d_inode(ldir);
	struct dentry *lower;
	int err;

	inode_lock_nested(ldi, I_MUTEX_PARENT);
	lower = lookup_one_len(name->name, ldir, name->len);
	if (IS_ERR(lower))
		goto out;
	/* A listing put an object there since our lookup said "none". */
	err = d_is_positive(lower) ? -EEXIST :
	      vfs_link(tmp->f_path.dentry, S3CFS_IDMAP_NOP, ldi, lower, NULL);
	if (err) {
		dput(lower);
		lower = ERR_PTR(err);
	}
out:
	inode_unlock(ldi);
	return lower;
}

/*
 * s3cfs_create() - ->create: a new, empty LOCAL file
 * @dir: the upper parent
 * @dentry: the negative upper dentry
 * @mode: the mode asked for (only S_IFREG reaches us; the permission
 *	bits are the mount's file_mode, or with posix_meta these)
 * @excl: O_EXCL (the VFS has checked the name is negative)
 *
 * Return: 0 or a negative errno (-ENAMETOOLONG: the key would exceed
 * S3's 1024 bytes).
 */
int s3cfs_create(S3CFS_IDMAP_ARG, struct inode *dir, struct dentry *dentry,
		 umode_t mode, bool excl)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(dir->i_sb);
	struct s3cfs_inode_info *dsi = S3CFS_I(dir);
	const struct cred *old_cred;
	struct s3cfs_posix p = { .flags = S3CFS_POSIX_ALL };
	struct dentry *lower = NULL;
	struct s3cfs_meta *m;
	struct inode *inode;
	struct file *tmp;
	int err;

	if (!sbi->opts.writable)
		return -EROFS;
	if (s3cfs_name_hidden(IS_ROOT(dentry->d_parent), dentry->d_name.name,
			      dentry->d_name.len))
		return -EPERM;
	/* A file S3 could never take is refused now, not at its close. */
	err = s3cfs_key_check(dentry->d_parent, &dentry->d_name, false);
	if (err)
		return err;
	m = kzalloc(sizeof(*m), GFP_KERNEL);
	if (!m)
		return -ENOMEM;
	m->flags = S3CFS_META_LOCAL;
	m->mtime = ktime_get_real_seconds();
	/*
	 * The mode asked for and the creator, as s3fs keeps them; never
	 * setuid/setgid (S3CFS_PERM_MASK): open(O_CREAT, 04755) would
	 * otherwise upload one for every other client of the bucket.
	 */
	p.mode = S_IFREG | (mode & S3CFS_PERM_MASK);
	p.uid = from_kuid_munged(i_user_ns(dir), current_fsuid());
	p.gid = from_kgid_munged(i_user_ns(dir), current_fsgid());
	p.mtime = m->mtime;

	old_cred = override_creds(sbi->creds);
	tmp = s3cfs_tmpfile_open(&dsi->lower, S_IFREG | 0600,
				 O_RDWR | O_LARGEFILE, sbi->creds);
	if (IS_ERR(tmp)) {
		err = PTR_ERR(tmp);
		goto out;
	}
	err = s3cfs_meta_set(tmp->f_path.dentry, m);
	if (!err && sbi->opts.posix_meta)
		err = s3cfs_posix_set(tmp->f_path.dentry, &p);
	if (!err) {
		lower = s3cfs_link_lower(dsi->lower.dentry, tmp,
					 &dentry->d_name);
		if (IS_ERR(lower)) {
			err = PTR_ERR(lower);
			lower = NULL;
		}
	}
	fput(tmp);
out:
	revert_creds(old_cred);
	kfree(m);
	if (err) {
		s3cfs_pr_d(pr_debug, dentry, "creating %*pE: %d\n", err);
		return err;
	}

	inode = s3cfs_iget(dir->i_sb, lower);
	dput(lower);
	if (IS_ERR(inode))
		return PTR_ERR(inode);
	if (WARN_ON_ONCE(!s3cfs_inode_local(inode))) {
		iput(inode);
		return -EIO;
	}
	/* Empty, but the key must exist in S3 once it is closed. */
	set_bit(S3CFS_I_DIRTY, &S3CFS_I(inode)->flags);
	dentry->d_time = jiffies;
	d_instantiate(dentry, inode);
	s3cfs_inode_touch(dir);
	return 0;
}
