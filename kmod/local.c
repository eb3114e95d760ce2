// SPDX-License-Identifier: GPL-2.0
/*
 * s3cachefs: making an object's cache file LOCAL (writable mounts).
 *
 * An object opened for writing becomes LOCAL in place: its lower file,
 * the upper inode's one and only, becomes the file's whole content, so the
 * inode, its page cache and every open of it stay what they are. Without
 * O_TRUNC every missing chunk is fetched first (copy-up, as overlayfs does
 * at an open for write); with O_TRUNC nothing is fetched and the lower
 * file is emptied. The tag then says S3CFS_META_LOCAL with the object's
 * ETag as the base: the upload is conditional on it (If-Match), so a
 * change made in S3 meanwhile is a conflict, never overwritten.
 *
 * The daemon replaces and removes cache files (LIST, LOOKUP, a FETCH that
 * finds the object changed) and writes fetched chunks into them, so the
 * two must not both act on one file. The rule: the daemon does each of
 * those under flock(LOCK_EX | LOCK_NB) on the file, having read the tag
 * under the lock, and leaves LOCAL files alone; the kernel holds
 * flock(LOCK_SH) while it changes the tag. Once the tag says LOCAL the
 * kernel needs no lock: the daemon reads it under its own.
 *
 *   CPU0 (daemon: LIST replaces)        CPU1 (kernel: open for write)
 *   flock EX: ok; tag says clean
 *                                       s3cfs_lower_pin(): EX held, waits
 *   renameat(new file over the name)
 *   close: EX dropped
 *                                       SH taken; i_nlink == 0: replaced,
 *                                       the inode goes stale, the VFS
 *                                       looks the name up again
 *
 * Lock order: upper i_rwsem -> the flock -> data_sem. The flock is never
 * held while waiting for a FETCH (the daemon would refuse to write under
 * it), nor under invalidate_lock.
 */
#include "s3cachefs.h"
#include <linux/delay.h>
#include <linux/pagemap.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>

/* Copy-up waits for at most this much at once; the next is fetched ahead. */
#define S3CFS_COPYUP_STEP	(32LL << 20)
/* How long an open for write waits for the daemon to let go of a file. */
#define S3CFS_PIN_WAIT		(10 * HZ)
/* Tries of copy-up when chunks go missing under it all the same. */
#define S3CFS_COPYUP_TRIES	4

/*
 * Set or clear S3CFS_I_COPYUP under data_sem: an EVICT punching now is
 * waited for, and one after it sees the bit.
 */
static void s3cfs_local_copyup_flag(struct inode *inode, bool on)
{
	struct s3cfs_inode_info *si = S3CFS_I(inode);

	down_write(&si->data_sem);
	if (on)
		set_bit(S3CFS_I_COPYUP, &si->flags);
	else
		clear_bit(S3CFS_I_COPYUP, &si->flags);
	up_write(&si->data_sem);
}

/*
 * Fetch every missing chunk of @inode (killable, one fetch timeout per
 * step, the next step in flight meanwhile).
 */
static int s3cfs_local_copyup(struct inode *inode)
{
	loff_t size = i_size_read(inode), pos;
	int err;

	s3cfs_local_copyup_flag(inode, true);
	for (pos = 0; pos < size; pos += S3CFS_COPYUP_STEP) {
		if (fatal_signal_pending(current))
			return -EINTR;
		s3cfs_chunks_prefetch(inode, pos + S3CFS_COPYUP_STEP,
				      2 * S3CFS_COPYUP_STEP,
				      pos + S3CFS_COPYUP_STEP);
		err = s3cfs_chunks_ensure(inode, pos, S3CFS_COPYUP_STEP);
		if (err < 0)
			return err;
	}
	return 0;
}

/**
 * s3cfs_lower_pin() - flock(LOCK_SH) on a lower file
 * @lower: an open lower file
 *
 * Waits (killable, bounded) while the daemon holds LOCK_EX for one replace
 * or one written piece. Call with the mounter's credentials.
 *
 * Return: 0 (release with s3cfs_lower_unpin()), -EINTR, or -EIO.
 */
int s3cfs_lower_pin(struct file *lower)
{
	unsigned long until = jiffies + S3CFS_PIN_WAIT;
	int err;

	for (;;) {
		err = s3cfs_flock_file(lower, F_RDLCK);
		if (err != -EAGAIN)
			return err;
		if (fatal_signal_pending(current))
			return -EINTR;
		if (time_after(jiffies, until)) {
			s3cfs_pr_d(pr_warn_ratelimited, lower->f_path.dentry,
				   "%*pE: s3cachefsd held the cache file for %u s\n",
				   S3CFS_PIN_WAIT / HZ);
			return -EIO;
		}
		usleep_range(5000, 10000);
	}
}

/**
 * s3cfs_lower_unpin() - drop what s3cfs_lower_pin() took
 * @lower: the file
 */
void s3cfs_lower_unpin(struct file *lower)
{
	int err = s3cfs_flock_file(lower, F_UNLCK);

	if (err)
		s3cfs_pr_d(pr_warn_ratelimited, lower->f_path.dentry,
			   "%*pE: unlocking the cache file: %d\n", err);
}

/* Has the daemon replaced or removed the lower file under its name? */
static bool s3cfs_local_gone(struct s3cfs_inode_info *si)
{
	return d_unhashed(si->lower.dentry) || !si->lower_inode->i_nlink;
}

/*
 * Set or clear S3CFS_I_LOCAL under data_sem, which EVICT checks it under.
 * With @need_all, only if every chunk is present: else -EAGAIN (an EVICT
 * came between copy-up and here).
 */
static int s3cfs_local_flag(struct inode *inode, bool on, bool need_all)
{
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	int err = 0;

	down_write(&si->data_sem);
	if (!on)
		clear_bit(S3CFS_I_LOCAL, &si->flags);
	else if (s3cfs_inode_stale(inode))
		err = -ESTALE;
	else if (need_all && !s3cfs_chunks_present(inode, 0, i_size_read(inode)))
		err = -EAGAIN;
	else
		set_bit(S3CFS_I_LOCAL, &si->flags);
	up_write(&si->data_sem);
	return err;
}

/* Tag the lower file LOCAL, based on the object's ETag, durably. */
static int s3cfs_local_tag(struct inode *inode, loff_t size)
{
	struct s3cfs_inode_info *si = S3CFS_I(inode);

	return s3cfs_meta_tag(inode, S3CFS_META_LOCAL, size, si->etag) ?:
	       vfs_fsync(si->lower_file, 0);
}

/* Undo s3cfs_local_tag() after a later step failed: a copy again. */
static void s3cfs_local_untag(struct inode *inode, loff_t size)
{
	int err = s3cfs_meta_tag(inode, 0, size, S3CFS_I(inode)->etag);

	if (err)
		s3cfs_pr_d(pr_err, S3CFS_I(inode)->lower.dentry,
			   "%*pE: restoring its tag: %d; the cache file stays LOCAL\n",
			   err);
}

/*
 * Copy-up done: under the pin, with every chunk still present, the file
 * becomes LOCAL as it is. The data is made durable before the tag that
 * says it is the file's content (fetched chunks are written without a
 * sync), the tag before the first local byte.
 */
static int s3cfs_local_keep(struct inode *inode)
{
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	loff_t size = i_size_read(inode);
	int err;

	err = s3cfs_local_flag(inode, true, true);
	if (err)
		return err;
	err = vfs_fsync(si->lower_file, 0);
	if (err)
		goto out;
	err = s3cfs_local_tag(inode, size);
	/* A lower file left a DIO block long by a crash: the object's size. */
	if (!err && i_size_read(si->lower_inode) != size)
		err = s3cfs_truncate_lower(inode, size);
	if (err)
		s3cfs_local_untag(inode, size);
out:
	if (err)
		s3cfs_local_flag(inode, false, false);
	return err;
}

/*
 * O_TRUNC, in memory: the page cache is emptied first, so that readers see
 * an empty file, never a missing chunk read as zeros from the lower file.
 */
static int s3cfs_local_empty_cache(struct inode *inode)
{
	struct address_space *mapping = inode->i_mapping;

	filemap_invalidate_lock(mapping);
	truncate_setsize(inode, 0);
	filemap_invalidate_unlock(mapping);
	return s3cfs_local_flag(inode, true, false);
}

/*
 * O_TRUNC, on disk, under the pin: the lower file is emptied before its
 * tag says LOCAL, so that a crash leaves a copy of the object (@size bytes)
 * with chunks missing, fetched again, never a LOCAL file holding some of
 * the object's bytes.
 */
static int s3cfs_local_empty_lower(struct inode *inode, loff_t size)
{
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	int err;

	err = s3cfs_truncate_lower(inode, 0);
	if (err)
		return err;
	err = s3cfs_local_tag(inode, 0);
	if (err) {
		/* A copy of the object again, with every chunk to fetch. */
		s3cfs_local_untag(inode, size);
		down_write(&si->data_sem);
		spin_lock(&si->chunk_lock);
		if (si->present)
			bitmap_zero(si->present, si->nr_chunks);
		spin_unlock(&si->chunk_lock);
		up_write(&si->data_sem);
	}
	return err;
}

/**
 * s3cfs_local_begin() - make an object's file LOCAL for a writer
 * @inode: upper inode of a regular file, not LOCAL, lower file open
 * @trunc: the open truncates (O_TRUNC): nothing is fetched
 *
 * Called with i_rwsem held, at an open for writing.
 *
 * Return: 0 (the inode is LOCAL), -EOPENSTALE (the object changed in S3,
 * or the daemon renewed the file: the VFS opens the name again), -EINTR,
 * or another negative errno (nothing changed).
 */
int s3cfs_local_begin(struct inode *inode, bool trunc)
{
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	struct s3cfs_sb_info *sbi = S3CFS_SB(inode->i_sb);
	loff_t size = i_size_read(inode);
	const struct cred *old_cred;
	int err, tries = 0;

	if (!si->etag[0])
		return -EIO;	/* an unreadable tag: the daemon renews it */
	err = trunc ? s3cfs_local_empty_cache(inode) : 0;
	while (!err) {
		if (!trunc) {
			err = s3cfs_local_copyup(inode);
			if (err)
				break;
		}
		old_cred = override_creds(sbi->creds);
		err = s3cfs_lower_pin(si->lower_file);
		if (!err) {
			if (s3cfs_local_gone(si)) {
				s3cfs_inode_set_stale(inode);
				err = -ESTALE;
			} else {
				s3cfs_fault("local_pin");
				err = trunc ? s3cfs_local_empty_lower(inode, size) :
					      s3cfs_local_keep(inode);
			}
			s3cfs_lower_unpin(si->lower_file);
		}
		revert_creds(old_cred);
		if (err != -EAGAIN || ++tries >= S3CFS_COPYUP_TRIES)
			break;
		err = 0;
	}
	if (!trunc)
		s3cfs_local_copyup_flag(inode, false);
	if (trunc && err) {
		/* Back to the object, whose bytes the lower file may lack. */
		s3cfs_local_flag(inode, false, false);
		i_size_write(inode, size);
	}
	if (!err && trunc)
		set_bit(S3CFS_I_DIRTY, &si->flags);
	if (err == -EAGAIN)
		err = -EIO;
	if (err && err != -ESTALE && err != -EINTR)
		s3cfs_pr_d(pr_warn_ratelimited, si->lower.dentry,
			   "%*pE: making it writable: %d\n", err);
	return err == -ESTALE ? -EOPENSTALE : err;
}

/**
 * s3cfs_local_retag() - a copy of an object now stands for another version
 * @inode: upper inode of a regular file, not LOCAL (a rename's source,
 *	copied in S3 to a key whose object got ETag @etag)
 * @etag: the new ETag
 *
 * The tag changes under the pin, as the daemon's writers of fetched bytes
 * check it under their lock; FETCHes in flight for the old ETag are then
 * refused and asked again (chunk.c). Best effort: a file left with the old
 * tag is renewed when its chunks are fetched, never read wrong.
 */
void s3cfs_local_retag(struct inode *inode, const char *etag)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(inode->i_sb);
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	const struct cred *old_cred;
	int err;

	err = s3cfs_open_lower(inode);
	if (err)
		goto out;
	old_cred = override_creds(sbi->creds);
	err = s3cfs_lower_pin(si->lower_file);
	if (!err) {
		err = s3cfs_meta_tag(inode, 0, i_size_read(inode), etag);
		if (!err)
			s3cfs_inode_set_etag(inode, etag);
		s3cfs_lower_unpin(si->lower_file);
	}
	revert_creds(old_cred);
out:
	if (err)
		s3cfs_pr_d(pr_warn_ratelimited, si->lower.dentry,
			   "%*pE: tagging it %*pE: %d\n",
			   s3cfs_esclen(etag), etag, err);
}

/**
 * s3cfs_local_rebase() - a LOCAL file never uploaded replaced @target
 * @inode: upper inode of the LOCAL file (a rename's source)
 * @target: the file it replaced under its new name
 *
 * Its upload must now replace @target's object, the version this node
 * knew (If-Match), not create the key (If-None-Match), which would be a
 * conflict with ourselves. The LOCAL tag records the new base.
 */
void s3cfs_local_rebase(struct inode *inode, struct inode *target)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(inode->i_sb);
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	char *etag = s3cfs_inode_etag(target);
	const struct cred *old_cred;
	int err = -ENOMEM;

	if (!etag)
		goto out;
	err = 0;
	if (!etag[0])
		goto out;	/* never uploaded either: the key is new */
	s3cfs_inode_set_etag(inode, etag);
	err = s3cfs_open_lower(inode);
	if (err)
		goto out;
	old_cred = override_creds(sbi->creds);
	err = s3cfs_local_tag(inode, i_size_read(inode));
	revert_creds(old_cred);
out:
	kfree(etag);
	if (err)
		s3cfs_pr_d(pr_warn_ratelimited, si->lower.dentry,
			   "%*pE: recording its upload's condition: %d\n", err);
}
