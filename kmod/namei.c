// SPDX-License-Identifier: GPL-2.0
/*
 * s3cachefs: name lookup and revalidation.
 *
 * A name is looked up in the lower directory. The lower directory is
 * trusted as a mirror of S3 while its last listing is younger than
 * meta_ttl, and so is a lower entry that the daemon found as it is in S3
 * less than meta_ttl ago (its lower mtime, see the uapi header: its
 * dentry may have been dropped since); otherwise we ask the daemon about
 * that one name (LOOKUP: HEAD key + LIST key/ max 1) rather than listing
 * a directory that may hold millions of objects. A dentry, negative ones
 * included, is trusted for meta_ttl from when what it says was checked
 * against S3 (d_time), then revalidated the same way.
 */
#include "s3cachefs.h"
#include <linux/namei.h>
#include <linux/kstrtox.h>
#include <linux/timekeeping.h>

/**
 * s3cfs_name_hidden() - is this lower name one we never show?
 * @in_root: the name is in the mount's root directory
 * @name: the name
 * @len: its length
 *
 * Return: true for the daemon's temporaries and, at the root, the cache's
 * metadata directory and the lower filesystem's lost+found (a cache at the
 * root of an ext4 has one).
 */
bool s3cfs_name_hidden(bool in_root, const char *name, int len)
{
	size_t hl = sizeof(S3CFS_HIDDEN_PREFIX) - 1;
	size_t ml = sizeof(S3CFS_META_DIR) - 1;
	size_t ll = sizeof(S3CFS_LOST_FOUND) - 1;

	if (len >= hl && !memcmp(name, S3CFS_HIDDEN_PREFIX, hl))
		return true;
	if (!in_root)
		return false;
	return (len == ml && !memcmp(name, S3CFS_META_DIR, ml)) ||
	       (len == ll && !memcmp(name, S3CFS_LOST_FOUND, ll));
}

/**
 * s3cfs_age_fresh() - is something checked @age_ms ago still trusted?
 * @age_ms: how long ago it was checked against S3
 * @ttl: meta_ttl, ms
 * @at: set, if so, to when it was checked, in jiffies
 *
 * Return: true if it is younger than @ttl.
 */
bool s3cfs_age_fresh(s64 age_ms, unsigned int ttl, unsigned long *at)
{
	if (age_ms < 0 || age_ms >= ttl)
		return false;
	*at = jiffies - msecs_to_jiffies(age_ms);
	return true;
}

/* The daemon's S3CFS_XATTR_LISTED on the lower directory @lower (seconds). */
static bool s3cfs_listed_xattr_fresh(struct dentry *lower, unsigned int ttl,
				     unsigned long *at)
{
	char buf[24];
	s64 secs;

	if (s3cfs_get_xattr(lower, S3CFS_XATTR_LISTED, buf, sizeof(buf)) <= 0 ||
	    kstrtos64(buf, 10, &secs))
		return false;
	return s3cfs_age_fresh((ktime_get_real_seconds() - secs) * MSEC_PER_SEC,
			       ttl, at);
}

/*
 * Did the daemon find @lower as it is in S3 less than @ttl ms ago (its
 * mtime)? If so, *@at is when, in jiffies.
 */
static bool s3cfs_lower_checked(struct dentry *lower, unsigned int ttl,
				unsigned long *at)
{
	struct timespec64 mt = s3cfs_inode_get_mtime(d_inode(lower));
	struct timespec64 now;

	ktime_get_real_ts64(&now);
	return s3cfs_age_fresh((timespec64_to_ns(&now) - timespec64_to_ns(&mt)) /
			       NSEC_PER_MSEC, ttl, at);
}

/*
 * Was @dir listed less than meta_ttl ago? *@at is then when. Our own
 * record of the last LIST first, then, across remounts, the daemon's
 * S3CFS_XATTR_LISTED on the lower directory.
 */
static bool s3cfs_dir_listed_at(struct inode *dir, unsigned long *at)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(dir->i_sb);
	struct s3cfs_inode_info *si = S3CFS_I(dir);
	unsigned int ttl = READ_ONCE(sbi->opts.meta_ttl_ms);
	unsigned long listed = READ_ONCE(si->listed_at);

	if (!ttl)
		return false;
	/* An index mount's own LIST left an index, not a whole lower directory. */
	if (!sbi->index && listed &&
	    time_before(jiffies, listed + msecs_to_jiffies(ttl))) {
		*at = listed;
		return true;
	}
	return s3cfs_listed_xattr_fresh(si->lower.dentry, ttl, at);
}

/**
 * s3cfs_dir_listed_fresh() - was this directory listed less than meta_ttl ago?
 * @dir: upper directory inode
 *
 * Looks at our own record of the last LIST and, across remounts, at the
 * daemon's S3CFS_XATTR_LISTED on the lower directory; on a mount with
 * dir_index, also at the directory's index. Call with the mounter's
 * credentials.
 *
 * Return: true if the lower directory, or its index, can be trusted as
 * the listing.
 */
bool s3cfs_dir_listed_fresh(struct inode *dir)
{
	unsigned long at;

	return s3cfs_dir_listed_at(dir, &at) ||
	       (S3CFS_SB(dir->i_sb)->index && s3cfs_index_fresh(dir, &at));
}

/**
 * s3cfs_dir_lower_listed() - does the lower directory hold a fresh listing?
 * @dir: upper directory inode
 *
 * As s3cfs_dir_listed_fresh(), the index left aside: on a dir_index mount
 * only a listing by a mount without it (S3CFS_XATTR_LISTED) fills the
 * lower directory.
 *
 * Return: true if the lower directory can be trusted as the listing.
 */
bool s3cfs_dir_lower_listed(struct inode *dir)
{
	const struct cred *old_cred = override_creds(S3CFS_SB(dir->i_sb)->creds);
	unsigned long at;
	bool fresh = s3cfs_dir_listed_at(dir, &at);

	revert_creds(old_cred);
	return fresh;
}

/*
 * Ask the daemon to make lower entry @name in @parent match S3, or, with
 * S3CFS_LOOKUP_INDEX in @flags, what the directory's fresh index says.
 */
static int s3cfs_lookup_upcall(struct dentry *parent, const char *name,
			       u32 flags)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(parent->d_sb);
	char *buf, *path;
	int err;

	err = s3cfs_inode_path(parent, &buf, &path);
	if (err)
		return err;
	atomic64_inc(&sbi->stats.lookups);
	if (flags & S3CFS_LOOKUP_INDEX)
		atomic64_inc(&sbi->stats.lookups_indexed);
	err = s3cfs_upcall(sbi, S3CFS_CMD_LOOKUP, path, name, flags);
	__putname(buf);
	return err;
}

/*
 * Look @name up in the lower directory, asking the daemon first unless
 * the directory's listing, or the entry's last check, is fresh. With no
 * daemon, or when the daemon fails, an entry already in the cache is
 * served as it is. *@checked: when what the lower entry says was last
 * checked against S3 (jiffies), for its dentry's d_time.
 */
struct dentry *s3cfs_lower_lookup(struct dentry *parent,
				  const struct qstr *name,
				  unsigned long *checked)
{
	struct inode *dir = d_inode(parent);
	struct s3cfs_sb_info *sbi = S3CFS_SB(dir->i_sb);
	struct dentry *lower_dir = S3CFS_I(dir)->lower.dentry;
	unsigned int ttl = READ_ONCE(sbi->opts.meta_ttl_ms);
	struct dentry *lower;
	u32 flags = 0;
	bool unknown;
	int err;

	*checked = jiffies;
	lower = lookup_one_len_unlocked(name->name, lower_dir, name->len);
	if (IS_ERR(lower))
		return lower;
	/* Listed, never HEADed: its mode and type are not known (posix.c). */
	unknown = s3cfs_posix_unknown(sbi, lower);
	if (!unknown && s3cfs_dir_listed_at(dir, checked))
		return lower;
	/*
	 * A fresh index vouches for the lower entries its listing found
	 * (it renewed or removed the others); a name with none, the index
	 * answers, through the daemon.
	 */
	if (sbi->index && s3cfs_index_fresh(dir, checked)) {
		if (d_is_positive(lower))
			return lower;
		flags = S3CFS_LOOKUP_INDEX;
	}
	if (d_is_positive(lower)) {
		/* Written here: what S3 has is not the file (yet). */
		if (!unknown && (s3cfs_lower_checked(lower, ttl, checked) ||
				 s3cfs_lower_local(lower)))
			return lower;
		if (!s3cfs_daemon_present())
			return lower;
	}

	err = s3cfs_lookup_upcall(parent, name->name, flags);
	if (err && err != -ENOENT) {
		if (d_is_positive(lower))
			return lower;
		dput(lower);
		return ERR_PTR(err);
	}
	dput(lower);
	return lookup_one_len_unlocked(name->name, lower_dir, name->len);
}

struct dentry *s3cfs_lookup(struct inode *dir, struct dentry *dentry,
			    unsigned int flags)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(dir->i_sb);
	const struct cred *old_cred;
	struct inode *inode = NULL;
	struct dentry *lower;
	unsigned long checked;

	if (dentry->d_name.len > NAME_MAX)
		return ERR_PTR(-ENAMETOOLONG);
	dentry->d_time = jiffies;
	if (s3cfs_name_hidden(IS_ROOT(dentry->d_parent), dentry->d_name.name,
			      dentry->d_name.len))
		return d_splice_alias(NULL, dentry);

	old_cred = override_creds(sbi->creds);
	lower = s3cfs_lower_lookup(dentry->d_parent, &dentry->d_name, &checked);
	revert_creds(old_cred);
	if (IS_ERR(lower))
		return ERR_CAST(lower);
	dentry->d_time = checked;
	if (d_is_positive(lower)) {
		inode = s3cfs_iget(dir->i_sb, lower);
		/* Neither file nor directory: not ours, not shown. */
		if (inode == ERR_PTR(-EIO))
			inode = NULL;
	}
	dput(lower);
	if (IS_ERR(inode))
		return ERR_CAST(inode);
	return d_splice_alias(inode, dentry);
}

static int s3cfs_d_revalidate(struct dentry *dentry, unsigned int flags)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(dentry->d_sb);
	unsigned long ttl = msecs_to_jiffies(READ_ONCE(sbi->opts.meta_ttl_ms));
	struct dentry *parent, *lower;
	const struct cred *old_cred;
	unsigned long checked;
	struct inode *inode;
	int valid;

	if (IS_ROOT(dentry))
		return 1;
	inode = d_inode_rcu(dentry);
	/* The object changed: look the name up again (a new inode). */
	if (inode && s3cfs_inode_stale(inode))
		return 0;
	/* Written here and not committed: no lookup in S3 can change it. */
	if (inode && s3cfs_inode_local(inode))
		return 1;
	/*
	 * Listed, with no lower file (index.c): young, as a listing found
	 * it (a later listing that finds it again makes it young again);
	 * then it takes its lower file, if it is still the object's.
	 */
	if (inode && s3cfs_inode_listed(inode)) {
		if (ttl && time_before(jiffies, dentry->d_time + ttl))
			return 1;
		if (flags & LOOKUP_RCU)
			return -ECHILD;
		valid = s3cfs_inode_adopt(dentry);
		if (valid == -ESTALE)
			return 0;
		return valid ?: 1;
	}
	if (ttl && time_before(jiffies, dentry->d_time + ttl)) {
		/* Young, and no listing of the parent has come in since. */
		struct inode *pdir = d_inode_rcu(READ_ONCE(dentry->d_parent));

		if (!pdir || !time_after(READ_ONCE(S3CFS_I(pdir)->listed_at),
					 dentry->d_time))
			return 1;
	}
	if (flags & LOOKUP_RCU)
		return -ECHILD;
	inode = d_inode(dentry);
	if (!inode)
		return 0;	/* negative and expired: look it up again */

	parent = dget_parent(dentry);
	old_cred = override_creds(sbi->creds);
	lower = s3cfs_lower_lookup(parent, &dentry->d_name, &checked);
	revert_creds(old_cred);
	dput(parent);
	if (IS_ERR(lower) && PTR_ERR(lower) != -ENOENT)
		return PTR_ERR(lower);
	/*
	 * Same lower inode: same object version (ETags never change in
	 * place). Another one, or none: this inode's version is no longer
	 * the object's.
	 */
	valid = !IS_ERR(lower) && d_inode(lower) == S3CFS_I(inode)->lower_inode;
	if (!IS_ERR(lower))
		dput(lower);
	if (valid) {
		dentry->d_time = checked;
		s3cfs_posix_refresh(inode);
	} else {
		s3cfs_inode_set_stale(inode);
	}
	return valid;
}

const struct dentry_operations s3cfs_dops = {
	.d_revalidate	= s3cfs_d_revalidate,
};

/**
 * s3cfs_name_refresh() - have the daemon look a name up in S3 now
 * @sbi: the mount
 * @path: the name's path relative to the root
 *
 * For a name whose cache entry is known to be another version than S3's
 * (a conflict, a rename refused on its source's ETag): the daemon renews
 * the lower entry, which a fresh listing would otherwise trust until it
 * expires. A failure only delays that to the listing's expiry.
 */
void s3cfs_name_refresh(struct s3cfs_sb_info *sbi, const char *path)
{
	const char *slash = strrchr(path, '/');
	char *parent = kstrndup(path, slash ? slash - path : 0, GFP_KERNEL);
	int err;

	if (!parent)
		return;
	err = s3cfs_upcall(sbi, S3CFS_CMD_LOOKUP, parent, slash ? slash + 1 : path,
			   0);
	if (err && err != -ENOENT)
		pr_debug("looking up %*pE again: %d\n", s3cfs_esclen(path),
			 path, err);
	kfree(parent);
}
