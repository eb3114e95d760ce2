// SPDX-License-Identifier: GPL-2.0
/*
 * s3cachefs: eviction, on the daemon's request, and the LRU clock.
 *
 * The daemon decides what to evict (cache limits, free space) but only the
 * kernel punches holes: the chunks' presence bits are cleared first (under
 * chunk_lock, where a read checks them and counts itself in flight), the
 * reads in flight are waited for, and only then is the range punched, all
 * with data_sem held for writing so that no extent scan runs meanwhile.
 * Chunks with a fetch in flight are refused. So eviction never pulls data
 * from under a reader, and no scan sees data the punch then removes.
 */
#include "s3cachefs.h"
#include <linux/namei.h>
#include <linux/falloc.h>
#include <linux/mount.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/string.h>

/*
 * How often a use (open, read(2)) refreshes the lower file's atime, the
 * daemon's LRU clock. Set explicitly: relatime or noatime on the cache
 * device would hide the uses, and our own lower reads are O_NOATIME.
 */
static unsigned int lru_interval = 60;
module_param(lru_interval, uint, 0644);
MODULE_PARM_DESC(lru_interval, "Seconds between two records of a file's use in its lower atime, for eviction (60)");

/**
 * s3cfs_touch_lower() - record a use of a file for the daemon's LRU
 * @inode: upper inode of a regular file being opened or read
 *
 * At most once per lru_interval per inode. Call with none of our locks
 * held and not inside sb_writers (EVICT takes sb_writers under data_sem).
 */
void s3cfs_touch_lower(struct inode *inode)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(inode->i_sb);
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	unsigned long last = READ_ONCE(si->touched_at);
	unsigned int interval = READ_ONCE(lru_interval);
	struct iattr attr = { .ia_valid = ATTR_ATIME };
	const struct cred *old_cred;
	struct dentry *lower = si->lower.dentry;
	struct inode *linode = d_inode(lower);
	time64_t age;

	if (last && time_before(jiffies, last + (unsigned long)interval * HZ))
		return;
	/*
	 * A use recorded less than lru_interval ago, by an earlier inode of
	 * this file (evicted since: drop_caches, memory pressure), needs no
	 * write: a loader that opens its files again each epoch would
	 * otherwise dirty one lower inode per open.
	 */
	age = ktime_get_real_seconds() - s3cfs_inode_get_atime(linode).tv_sec;
	if (!last && age >= 0 && age < interval) {
		WRITE_ONCE(si->touched_at, (jiffies - age * HZ) ? : 1);
		return;
	}
	WRITE_ONCE(si->touched_at, jiffies ? : 1);
	if (mnt_want_write(si->lower.mnt))
		return;
	old_cred = override_creds(sbi->creds);
	inode_lock(linode);
	notify_change(S3CFS_IDMAP_NOP, lower, &attr, NULL);
	inode_unlock(linode);
	revert_creds(old_cred);
	mnt_drop_write(si->lower.mnt);
}

/* Forget chunks [c0, c1) unless a fetch is in flight for one of them. */
static int s3cfs_forget_chunks(struct s3cfs_inode_info *si, u64 c0, u64 c1)
	__must_hold(&si->data_sem)
{
	struct s3cfs_req *req;
	int err = 0;

	spin_lock(&si->chunk_lock);
	list_for_each_entry(req, &si->fetches, inode_link)
		if (req->first_chunk < c1 &&
		    req->first_chunk + req->nr_chunks > c0)
			err = -EBUSY;
	if (!err && si->present && c0 < si->nr_chunks)
		bitmap_clear(si->present, c0, min(c1, si->nr_chunks) - c0);
	spin_unlock(&si->chunk_lock);
	return err;
}

/*
 * Punch [@off, @off + @len) out of the lower file, keeping its mtime: the
 * mtime says when the daemon last found the file as it is in S3 (namei.c
 * trusts the name for meta_ttl from then), which a punch does not.
 */
static int s3cfs_punch(struct s3cfs_sb_info *sbi, struct path *lower,
		       loff_t off, loff_t len)
{
	struct inode *linode = d_inode(lower->dentry);
	struct iattr attr = {
		.ia_valid = ATTR_MTIME | ATTR_MTIME_SET,
		.ia_mtime = s3cfs_inode_get_mtime(linode),
	};
	struct file *file;
	int err, err2;

	file = dentry_open(lower, O_WRONLY | O_LARGEFILE | O_NOATIME,
			   sbi->creds);
	if (IS_ERR(file))
		return PTR_ERR(file);
	err = vfs_fallocate(file, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			    off, len);
	inode_lock(linode);
	err2 = notify_change(S3CFS_IDMAP_NOP, lower->dentry, &attr, NULL);
	inode_unlock(linode);
	fput(file);
	if (err2)
		s3cfs_pr_d(pr_warn_ratelimited, lower->dentry,
			   "%*pE: keeping the mtime across a punch: %d\n", err2);
	return err;
}

/*
 * Resolve @path under the cache root one component at a time, refusing
 * "", ".", ".." and symlinks, so it cannot leave the cache directory.
 */
static int s3cfs_lower_walk(struct s3cfs_sb_info *sbi, const char *path,
			    struct path *out)
{
	struct dentry *dir = dget(sbi->lower_root.dentry), *next;
	const char *p = path, *slash;
	size_t n;

	for (;;) {
		slash = strchrnul(p, '/');
		n = slash - p;
		if (!n || n > NAME_MAX || (n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.')) {
			dput(dir);
			return -EINVAL;
		}
		next = lookup_one_len_unlocked(p, dir, n);
		dput(dir);
		if (IS_ERR(next))
			return PTR_ERR(next);
		if (d_is_negative(next) || d_is_symlink(next)) {
			dput(next);
			return -ENOENT;
		}
		dir = next;
		if (!*slash)
			break;
		if (!d_is_dir(dir)) {
			dput(dir);
			return -ENOTDIR;
		}
		p = slash + 1;
	}
	out->dentry = dir;
	out->mnt = mntget(sbi->lower_root.mnt);
	return 0;
}

static int s3cfs_evict_locked(struct s3cfs_sb_info *sbi, const char *path,
			      u64 off, u64 len)
{
	u64 mask = sbi->opts.chunk_size - 1;
	struct s3cfs_inode_info *si;
	struct inode *inode, *linode;
	struct path lower;
	loff_t size;
	int err;

	if ((off & mask) || !len || off + len < off)
		return -EINVAL;
	err = s3cfs_lower_walk(sbi, path, &lower);
	if (err)
		return err;
	err = -EINVAL;
	if (!d_is_reg(lower.dentry))
		goto out_path;
	/* Written here: the only copy of its bytes until it is uploaded. */
	err = -EBUSY;
	if (s3cfs_lower_local(lower.dentry))
		goto out_path;
	err = -EINVAL;
	linode = d_inode(lower.dentry);
	size = i_size_read(linode);
	if (off >= size) {
		err = 0;
		goto out_path;
	}
	len = min_t(u64, len, size - off);
	if ((len & mask) && off + len != size)
		goto out_path;

	/*
	 * The upper inode, made if there is none yet: every scan of the
	 * lower extent map runs under its data_sem (chunk.c), so holding it
	 * for writing across the punch keeps a scan from seeing data the
	 * punch then removes, also for an inode first opened meanwhile:
	 *
	 *   CPU0 (EVICT)                    CPU1 (first open)
	 *   s3cfs_iget(): inode, data_sem
	 *     for writing, forget chunks
	 *                                   s3cfs_iget(): the same inode
	 *                                   s3cfs_chunks_load(): waits for
	 *                                     data_sem
	 *   punch; up_write
	 *                                   scan: the chunks are holes
	 *
	 * No mnt_want_write() here: s3cfs_punch() opens the file for writing
	 * (mount write access) and vfs_fallocate() takes sb_writers itself,
	 * under data_sem; nothing takes them in the other order.
	 */
	inode = s3cfs_iget(sbi->sb, lower.dentry);
	if (IS_ERR(inode)) {
		err = PTR_ERR(inode);
		goto out_path;
	}
	si = S3CFS_I(inode);
	down_write(&si->data_sem);
	/*
	 * Bytes written here live only in this file until uploaded; a
	 * copy-up needs every chunk it fetched until the file is LOCAL.
	 */
	err = -EBUSY;
	if (s3cfs_inode_local(inode) || test_bit(S3CFS_I_COPYUP, &si->flags))
		goto out_inode;
	err = s3cfs_forget_chunks(si, off >> sbi->chunk_shift,
				  ((off + len - 1) >> sbi->chunk_shift) + 1);
	if (err)
		goto out_inode;
	/* Reads that found these chunks present before they were forgotten. */
	s3cfs_chunks_drain(inode);
	s3cfs_fault("evict");
	/*
	 * Punch to the chunk's end even past EOF: a punch that stops at an
	 * unaligned EOF zeroes the last block instead of freeing it, and a
	 * zeroed block reads as data, i.e. as a present chunk of zeros.
	 */
	err = s3cfs_punch(sbi, &lower, off,
			  round_up(off + len, (u64)sbi->opts.chunk_size) - off);
out_inode:
	up_write(&si->data_sem);
	iput(inode);
out_path:
	path_put(&lower);
	return err;
}

/**
 * s3cfs_evict() - punch a chunk-aligned range out of a cached file
 * @sbi: the mount (an active reference is held)
 * @path: the file, relative to the cache root
 * @off: start, chunk aligned
 * @len: length, chunk aligned or reaching EOF (may run past it)
 *
 * Return: 0, -EBUSY if a fetch is in flight in the range or the file is
 * LOCAL (written here, not uploaded), -EINVAL for a
 * misaligned range or a path that is not a regular file, or the error of
 * the lookup or of fallocate.
 */
int s3cfs_evict(struct s3cfs_sb_info *sbi, const char *path, u64 off, u64 len)
{
	const struct cred *old_cred = override_creds(sbi->creds);
	int err = s3cfs_evict_locked(sbi, path, off, len);

	revert_creds(old_cred);
	return err;
}

/**
 * s3cfs_evict_ioctl() - S3CFS_IOC_EVICT: an administrator's EVICT
 * @file: any open file of the mount (it keeps the mount active)
 * @uarg: the user's struct s3cfs_ioc_evict
 *
 * Netlink EVICT is taken from the registered daemon's socket only; other
 * root processes (s3cachectl evict) ask through the mount.
 *
 * Return: as s3cfs_evict(), or -EPERM without CAP_SYS_ADMIN, -EFAULT,
 * -ENOMEM, -EINVAL (a path that is not NUL-terminated).
 */
int s3cfs_evict_ioctl(struct file *file, void __user *uarg)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(file_inode(file)->i_sb);
	struct s3cfs_ioc_evict *arg;
	int err;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	arg = memdup_user(uarg, sizeof(*arg));
	if (IS_ERR(arg))
		return PTR_ERR(arg);
	err = -EINVAL;
	if (memchr(arg->path, '\0', sizeof(arg->path)))
		err = s3cfs_evict(sbi, arg->path, arg->offset, arg->length);
	kfree(arg);
	return err;
}
