// SPDX-License-Identifier: GPL-2.0
/*
 * s3cachefs: directory indexes (mounts with dir_index).
 *
 * On such a mount a listing leaves no lower file per object: the daemon
 * keeps the listing's log as the directory's index (uapi/s3cachefs.h,
 * S3CFS_XATTR_INDEX), and an object gets its lower file only when it is
 * first looked up or opened. A readdir reads the index (dir.c), and for
 * each object without a lower file makes its dentry at once, on a
 * "listed" inode: the index's size, mtime and ETag, and no lower file.
 * So `ls -l` or `find` of a million objects costs one record each, not a
 * file each on the cache device.
 *
 * A listed inode stands for one object version, as every upper inode
 * does. Its lower file is made by a LOOKUP the daemon answers from the
 * index, with no request to S3, at the inode's first open (or when its
 * dentry is revalidated after meta_ttl); the inode then takes it as its
 * own, once and for good, if it holds the same ETag (an object changed
 * since the listing gets a new lower file: the inode is stale, and the
 * VFS looks the name up again). From then on it is an ordinary inode,
 * hashed by its lower inode like the others.
 */
#include "s3cachefs.h"
#include <linux/namei.h>
#include <linux/kstrtox.h>
#include <linux/siphash.h>
#include <linux/timekeeping.h>

/* Inode numbers of listed inodes: a hash of the name, top bit set. */
static const siphash_key_t s3cfs_ino_key = { { 0x73336366736c6973ULL,
					      0x746564696e6f6465ULL } };

/**
 * s3cfs_listed_ino() - the inode number of a listed object
 * @dir: the upper directory
 * @name: the object's name
 * @len: its length
 *
 * Stable across listings and mounts of the same cache; apart from the
 * lower filesystem's numbers (they never have the top bit set).
 *
 * Return: the number.
 */
u64 s3cfs_listed_ino(struct inode *dir, const char *name, unsigned int len)
{
	siphash_key_t key = s3cfs_ino_key;

	key.key[1] ^= S3CFS_I(dir)->lower_inode->i_ino;
	return siphash(name, len, &key) | BIT_ULL(63);
}

/*
 * The directory's S3CFS_XATTR_INDEX: when it was listed, the index's inode
 * number and the bytes of its records. Return: 0 or -errno.
 */
static int s3cfs_index_xattr(struct inode *dir, s64 *secs, u64 *ino, u64 *len)
{
	char buf[80];
	char *p = buf, *t;

	if (s3cfs_get_xattr(S3CFS_I(dir)->lower.dentry, S3CFS_XATTR_INDEX,
			    buf, sizeof(buf)) <= 0)
		return -ENODATA;
	t = strsep(&p, " ");
	if (!p || kstrtos64(t, 10, secs))
		return -EINVAL;
	t = strsep(&p, " ");
	if (!p || kstrtou64(t, 10, ino) || kstrtou64(p, 10, len))
		return -EINVAL;
	return 0;
}

/* Is an index of a listing taken at @secs fresh? *@at: then, in jiffies. */
static bool s3cfs_index_secs_fresh(struct inode *dir, s64 secs,
				   unsigned long *at)
{
	return s3cfs_age_fresh((ktime_get_real_seconds() - secs) * MSEC_PER_SEC,
			       READ_ONCE(S3CFS_SB(dir->i_sb)->opts.meta_ttl_ms),
			       at);
}

/**
 * s3cfs_index_fresh() - does the directory have an index younger than meta_ttl?
 * @dir: upper directory on a mount with dir_index
 * @at: set to when it was listed, in jiffies
 *
 * Call with the mounter's credentials.
 *
 * Return: true if so.
 */
bool s3cfs_index_fresh(struct inode *dir, unsigned long *at)
{
	u64 ino, len;
	s64 secs;

	return !s3cfs_index_xattr(dir, &secs, &ino, &len) &&
	       s3cfs_index_secs_fresh(dir, secs, at);
}

/* Does @f end in the tail of an index of @len bytes of records? */
static bool s3cfs_index_whole(struct file *f, u64 len)
{
	loff_t size = i_size_read(file_inode(f));
	struct s3cfs_index_tail tail;
	loff_t pos = size - sizeof(tail);

	if (size < sizeof(tail) || len > size - sizeof(tail) ||
	    kernel_read(f, &tail, sizeof(tail), &pos) != sizeof(tail))
		return false;
	/* The daemon's, on this host: host byte order. */
	return tail.magic == S3CFS_INDEX_MAGIC && tail.records == len &&
	       tail.count * 8 == size - sizeof(tail) - len;
}

/**
 * s3cfs_index_open() - open the directory's index, if it is fresh
 * @dir: upper directory on a mount with dir_index
 * @len: set to the bytes of its records
 * @at: set to when it was listed, in jiffies
 * @any_age: a stale one too (no daemon to list again: the cache as it is;
 *	its names are then trusted no longer, *@at is long past)
 *
 * Return: the open index, or an ERR_PTR (-ENODATA: none, or too old).
 */
struct file *s3cfs_index_open(struct inode *dir, u64 *len, unsigned long *at,
			      bool any_age)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(dir->i_sb);
	const struct cred *old_cred;
	struct file *f;
	u64 ino;
	s64 secs;
	int err;

	old_cred = override_creds(sbi->creds);
	err = s3cfs_index_xattr(dir, &secs, &ino, len);
	revert_creds(old_cred);
	if (err)
		return ERR_PTR(-ENODATA);
	if (!s3cfs_index_secs_fresh(dir, secs, at)) {
		if (!any_age)
			return ERR_PTR(-ENODATA);
		*at = jiffies - msecs_to_jiffies(READ_ONCE(sbi->opts.meta_ttl_ms)) - 1;
	}
	/* Another listing's log (checked there), or one cut short: not this index. */
	f = s3cfs_list_log_open(sbi, S3CFS_I(dir)->lower_inode, ino);
	if (!IS_ERR(f) && !s3cfs_index_whole(f, *len)) {
		fput(f);
		f = ERR_PTR(-ESTALE);
	}
	return f;
}

/**
 * s3cfs_iget_listed() - a new inode for an object with no lower file
 * @sb: our superblock
 * @m: the object's metadata, from the index
 * @ino: its inode number (s3cfs_listed_ino())
 *
 * Not hashed: only its dentry finds it, until it takes its lower file.
 *
 * Return: the inode, or NULL without memory.
 */
static struct inode *s3cfs_iget_listed(struct super_block *sb,
				       const struct s3cfs_meta *m, u64 ino)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(sb);
	struct s3cfs_inode_info *si;
	struct inode *inode;

	inode = new_inode(sb);
	if (!inode)
		return NULL;
	si = S3CFS_I(inode);
	set_bit(S3CFS_I_LISTED, &si->flags);
	inode->i_ino = ino;
	inode->i_uid = sbi->opts.uid;
	inode->i_gid = sbi->opts.gid;
	inode->i_mode = S_IFREG | (sbi->opts.file_mode & S3CFS_PERM_MASK);
	inode->i_mapping->a_ops = &s3cfs_aops;
	inode->i_op = &s3cfs_file_iops;
	inode->i_fop = &s3cfs_file_fops;
	mapping_set_large_folios(inode->i_mapping);
	set_nlink(inode, 1);
	s3cfs_inode_set_times(inode, (struct timespec64){ .tv_sec = m->mtime });
	strscpy(si->etag, m->etag, sizeof(si->etag));
	i_size_write(inode, m->size);
	return inode;
}

/**
 * s3cfs_inode_listed() - is @inode a listed inode, with no lower file yet?
 * @inode: upper inode
 *
 * Return: true until it takes its lower file (s3cfs_inode_adopt()).
 */
bool s3cfs_inode_listed(struct inode *inode)
{
	/* Pairs with clear_bit_unlock() in s3cfs_inode_adopt(): @lower is set. */
	return test_bit_acquire(S3CFS_I_LISTED, &S3CFS_I(inode)->flags);
}

/**
 * s3cfs_index_prime() - the dentry of a name a readdir passes up
 * @parent: the directory being read (its i_rwsem held shared)
 * @name: a name the index gives as an object with no lower file
 * @len: its length
 * @v: its S3CFS_XATTR_META value
 * @vlen: that value's length
 * @ino: its inode number
 * @at: when the listing was taken, in jiffies
 *
 * Makes the dentry, on a listed inode, unless the name has one: a stat
 * that follows (ls -l) then needs no lookup. A dentry of a listed inode
 * of the same version is trusted from @at on; one of another version is
 * stale. Nothing is made without memory: a lookup will.
 */
void s3cfs_index_prime(struct dentry *parent, const char *name,
		       unsigned int len, const u8 *v, size_t vlen, u64 ino,
		       unsigned long at)
{
	DECLARE_WAIT_QUEUE_HEAD_ONSTACK(wq);
	struct qstr q = QSTR_INIT(name, len);
	struct dentry *dentry, *alias;
	struct s3cfs_meta *m;
	struct inode *inode;

	m = kmalloc(sizeof(*m), GFP_KERNEL);
	if (!m)
		return;
	if (s3cfs_meta_decode(v, vlen, m) || m->flags)
		goto out;
	q.hash = full_name_hash(parent, name, len);
	dentry = d_lookup(parent, &q);
	if (dentry && d_is_negative(dentry)) {
		/* Older than the listing, which has the name. */
		d_invalidate(dentry);
		dput(dentry);
		dentry = NULL;
	}
	if (dentry) {
		inode = d_inode(dentry);
		if (inode && s3cfs_inode_listed(inode)) {
			/* Same version: trusted from this listing on. */
			if (strcmp(S3CFS_I(inode)->etag, m->etag))
				s3cfs_inode_set_stale(inode);
			else if (time_after(at, dentry->d_time))
				dentry->d_time = at;
		}
		/* Another kind: its revalidation asks the lower directory. */
		dput(dentry);
		goto out;
	}
	dentry = d_alloc_parallel(parent, &q, &wq);
	if (IS_ERR(dentry))
		goto out;
	if (!d_in_lookup(dentry)) {
		/* Looked up meanwhile. */
		dput(dentry);
		goto out;
	}
	inode = s3cfs_iget_listed(parent->d_sb, m, ino);
	if (inode) {
		atomic64_inc(&S3CFS_SB(parent->d_sb)->stats.primed);
		dentry->d_time = at;
		alias = d_splice_alias(inode, dentry);
		d_lookup_done(dentry);
		if (!IS_ERR_OR_NULL(alias))
			dput(alias);
	} else {
		d_lookup_done(dentry);
	}
	dput(dentry);
out:
	kfree(m);
}

/**
 * s3cfs_inode_adopt() - give a listed inode its lower file
 * @dentry: the inode's dentry
 *
 * Has the daemon make the lower file from the directory's index (or, if
 * the index is no longer fresh, from S3), then takes it if it holds the
 * inode's ETag and no other inode has taken it. Otherwise the inode is
 * stale: the object changed or vanished since the listing.
 *
 * Return: 0 (the inode has its lower file), -ESTALE, or another -errno.
 */
int s3cfs_inode_adopt(struct dentry *dentry)
{
	struct inode *inode = d_inode(dentry);
	struct s3cfs_sb_info *sbi = S3CFS_SB(inode->i_sb);
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	struct dentry *parent, *lower;
	const struct cred *old_cred;
	struct s3cfs_meta *m = NULL;
	struct inode *linode, *found;
	unsigned long checked;
	int err;

	/*
	 * One adoption at a time; not i_rwsem, which an mmap's open (under
	 * mmap_lock) would take in the order writes never may.
	 */
	if (wait_on_bit_lock(&si->flags, S3CFS_I_ADOPTING, TASK_KILLABLE))
		return -EINTR;
	if (!s3cfs_inode_listed(inode)) {
		err = s3cfs_inode_stale(inode) ? -ESTALE : 0;
		goto unlock;
	}
	parent = dget_parent(dentry);
	old_cred = override_creds(sbi->creds);
	lower = s3cfs_lower_lookup(parent, &dentry->d_name, &checked);
	revert_creds(old_cred);
	dput(parent);
	err = PTR_ERR_OR_ZERO(lower);
	if (err)
		goto out;
	err = -ESTALE;
	if (!d_is_reg(lower))
		goto out_dput;
	m = kmalloc(sizeof(*m), GFP_KERNEL);
	if (!m) {
		err = -ENOMEM;
		goto out_dput;
	}
	old_cred = override_creds(sbi->creds);
	err = s3cfs_meta_get(lower, m);
	revert_creds(old_cred);
	if (err || m->flags || strcmp(m->etag, si->etag) || m->size != i_size_read(inode)) {
		err = -ESTALE;
		goto out_dput;
	}
	linode = d_inode(lower);
	/* Hashed by its lower inode from now on, as s3cfs_iget() hashes. */
	found = inode_insert5(inode, (unsigned long)linode, s3cfs_inode_test,
			      s3cfs_inode_set, linode);
	if (found != inode) {
		/* Another inode has the file (an earlier lookup's). */
		if (found)
			iput(found);
		goto out_dput;
	}
	si->lower.dentry = dget(lower);
	si->lower.mnt = mntget(sbi->lower_root.mnt);
	dentry->d_time = checked;
	/* The lower file is set before anyone sees the inode as not listed. */
	clear_bit_unlock(S3CFS_I_LISTED, &si->flags);
	unlock_new_inode(inode);
	err = 0;
out_dput:
	dput(lower);
out:
	if (err == -ENOENT)
		err = -ESTALE;
	if (err == -ESTALE)
		s3cfs_inode_set_stale(inode);
	kfree(m);
unlock:
	clear_and_wake_up_bit(S3CFS_I_ADOPTING, &si->flags);
	return err;
}
