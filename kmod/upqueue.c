// SPDX-License-Identifier: GPL-2.0
/*
 * s3cachefs: write-back mode's upload queue (mount option writeback).
 *
 * In write-back mode the last close and every fsync of a LOCAL file with
 * changes return once the file is durable on the cache device, and the
 * upload (upload.c) runs later from a worker:
 *
 *   1. dirty folios written back to the lower file (and its size fixed),
 *      and the lower file fsync'd;
 *   2. the record: a hard link .s3cachefs/pending/<lower ino> to the lower
 *      file, whose S3CFS_XATTR_PENDING names the file's path(s);
 *   3. another fsync of the lower file: ext4 and xfs commit the link and
 *      the xattr with it (the link changed the file's inode). Not one
 *      commit for all: a commit made by another file's fsync in between
 *      would carry the record with only the data already allocated;
 *   4. the file is queued: upload_delay seconds after its last
 *      acknowledgment (a file closed again meanwhile waits again, so it
 *      is uploaded once), at most S3CFS_UPQ_ACTIVE uploads at a time, a
 *      failed one tried again with a growing delay.
 *
 * The record says: the lower file holds exactly what was acknowledged.
 * So it is dropped, and durably, before anything written after the
 * acknowledgment reaches the lower file (->writepages, a truncate, a
 * fallocate); the next acknowledgment records the file again. A crash
 * then never uploads bytes nobody acknowledged, as ext4 never promises
 * bytes written after the last fsync. A successful upload (or a conflict,
 * which keeps our bytes under .s3cachefs/conflicts/, or an unlink) drops
 * the record.
 *
 * What survives a module reload, an unmount with the daemon gone or a
 * power cut is the record: the next mount (s3cfs_upq_resume_work()) looks each
 * recorded path up and queues the file if the name still leads to the
 * recorded lower inode.
 *
 * Lock order: upper i_rwsem -> wb_sem (writeback, shared) -> @up_mutex ->
 * the pending directory's i_rwsem. A queued upload holds wb_sem alone
 * while it sends: writes go on into the page cache; what changes the
 * lower file or the name waits for its answer (s3cfs_upq_settle()). The
 * queue's list and counts are under the mount's upq.lock.
 */
#include "s3cachefs.h"
#include <linux/namei.h>
#include <linux/statfs.h>
#include <linux/xattr.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <linux/sched/signal.h>
#include <linux/moduleparam.h>

#define S3CFS_PENDING		(S3CFS_PENDING_DIR + sizeof(S3CFS_META_DIR))
/* Uploads a mount's queue runs at once. */
#define S3CFS_UPQ_ACTIVE	4
/* The longest wait before a failed upload is tried again. */
#define S3CFS_UPQ_BACKOFF_MAX	(300 * HZ)

static void s3cfs_upq_workfn(struct work_struct *work);
static void s3cfs_upq_kick(struct s3cfs_sb_info *sbi);

/*
 * Write-back mounts (struct s3cfs_upq @dev_link). The files queued by all
 * those on one cache filesystem are bounded together, at wb_device_pct of
 * it: each mount's writeback_max alone would let two mounts fill it.
 */
static LIST_HEAD(s3cfs_upq_mounts);
static DEFINE_SPINLOCK(s3cfs_upq_mounts_lock);
/* Woken after every upload of any mount (throttled writers wait there). */
static DECLARE_WAIT_QUEUE_HEAD(s3cfs_upq_dev_wq);

static unsigned int wb_device_pct = 50;
module_param(wb_device_pct, uint, 0644);
MODULE_PARM_DESC(wb_device_pct, "Percent of a cache filesystem the write-back mounts on it may hold in files not uploaded yet, together (50)");

/* At every allocation of an upper inode (the slab does not zero it). */
void s3cfs_upq_init_inode(struct s3cfs_inode_info *si)
{
	INIT_DELAYED_WORK(&si->up_work, s3cfs_upq_workfn);
	INIT_LIST_HEAD(&si->up_link);
	mutex_init(&si->up_mutex);
	si->up_dentry = NULL;
	si->up_bytes = 0;
	si->up_since = 0;
	si->up_tries = 0;
	si->up_sent = NULL;
}

void s3cfs_upq_init_mount(struct s3cfs_sb_info *sbi)
{
	spin_lock_init(&sbi->upq.lock);
	INIT_LIST_HEAD(&sbi->upq.list);
	INIT_LIST_HEAD(&sbi->upq.dev_link);
	init_waitqueue_head(&sbi->upq.wq);
	INIT_WORK(&sbi->upq.resume_work, s3cfs_upq_resume_work);
}

/**
 * s3cfs_upq_start() - a write-back mount's queue: its workqueue, and what
 *	an earlier mount of the cache recorded and did not upload
 * @sbi: the mount, set up
 *
 * Return: 0 or -ENOMEM.
 */
int s3cfs_upq_start(struct s3cfs_sb_info *sbi)
{
	struct kstatfs st;

	if (vfs_statfs(&sbi->lower_root, &st))
		st.f_blocks = 0;
	sbi->upq.dev_bytes = st.f_blocks * st.f_bsize;
	/* By default half the cache filesystem may wait for uploads. */
	if (!sbi->opts.writeback_max_mb)
		sbi->opts.writeback_max_mb =
			max_t(u64, (sbi->upq.dev_bytes / 2) >> 20, 1);
	sbi->upq.workq = alloc_workqueue("s3cfs_upload%u", WQ_UNBOUND,
					 S3CFS_UPQ_ACTIVE, sbi->mount_id);
	if (!sbi->upq.workq)
		return -ENOMEM;
	spin_lock(&s3cfs_upq_mounts_lock);
	list_add_tail(&sbi->upq.dev_link, &s3cfs_upq_mounts);
	spin_unlock(&s3cfs_upq_mounts_lock);
	queue_work(sbi->upq.workq, &sbi->upq.resume_work);
	return 0;
}

/* Both on the same cache filesystem. */
static bool s3cfs_upq_same_dev(struct s3cfs_sb_info *a,
			       struct s3cfs_sb_info *b)
{
	return a->lower_root.mnt->mnt_sb == b->lower_root.mnt->mnt_sb;
}

/*
 * The files queued by every write-back mount on @sbi's cache filesystem
 * are within wb_device_pct of it, or only one file is queued there.
 */
static bool s3cfs_upq_dev_below(struct s3cfs_sb_info *sbi)
{
	u64 max = div_u64(sbi->upq.dev_bytes *
			  clamp_val(READ_ONCE(wb_device_pct), 1, 100), 100);
	struct s3cfs_sb_info *other;
	unsigned int nr = 0;
	u64 sum = 0;

	spin_lock(&s3cfs_upq_mounts_lock);
	list_for_each_entry(other, &s3cfs_upq_mounts, upq.dev_link) {
		if (s3cfs_upq_same_dev(sbi, other)) {
			sum += READ_ONCE(other->upq.bytes);
			nr += READ_ONCE(other->upq.nr);
		}
	}
	spin_unlock(&s3cfs_upq_mounts_lock);
	return sum <= max || nr <= 1;
}

/* Run every queued upload of every write-back mount on @sbi's device. */
static void s3cfs_upq_kick_dev(struct s3cfs_sb_info *sbi)
{
	struct s3cfs_sb_info *other;

	spin_lock(&s3cfs_upq_mounts_lock);
	list_for_each_entry(other, &s3cfs_upq_mounts, upq.dev_link)
		if (s3cfs_upq_same_dev(sbi, other))
			s3cfs_upq_kick(other);
	spin_unlock(&s3cfs_upq_mounts_lock);
}

/* .s3cachefs/pending in the cache, created if missing. */
static struct dentry *s3cfs_pending_dir(struct s3cfs_sb_info *sbi)
{
	struct dentry *meta, *dir;

	meta = s3cfs_lower_subdir(sbi->lower_root.dentry, S3CFS_META_DIR);
	if (IS_ERR(meta))
		return meta;
	dir = s3cfs_lower_subdir(meta, S3CFS_PENDING);
	dput(meta);
	return dir;
}

/*
 * The record's entry for @inode in the pending directory, looked up with
 * the directory (*@pdirp, referenced) locked; s3cfs_record_put() undoes
 * both. Called with the mounter's credentials.
 */
static struct dentry *s3cfs_record_get(struct inode *inode,
				       struct dentry **pdirp)
{
	struct dentry *pdir, *d;
	char name[24];

	pdir = s3cfs_pending_dir(S3CFS_SB(inode->i_sb));
	if (IS_ERR(pdir))
		return pdir;
	snprintf(name, sizeof(name), "%lu", S3CFS_I(inode)->lower_inode->i_ino);
	inode_lock_nested(d_inode(pdir), I_MUTEX_PARENT);
	d = lookup_one_len(name, pdir, strlen(name));
	if (IS_ERR(d)) {
		inode_unlock(d_inode(pdir));
		dput(pdir);
		return d;
	}
	*pdirp = pdir;
	return d;
}

static void s3cfs_record_put(struct dentry *pdir, struct dentry *d)
{
	dput(d);
	inode_unlock(d_inode(pdir));
	dput(pdir);
}

/*
 * Remove the record of @inode (if it is the record's inode): with @sync,
 * durably, before the caller changes the lower file. Called with
 * @up_mutex held and the mounter's credentials.
 */
static int s3cfs_unrecord(struct inode *inode, bool sync)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(inode->i_sb);
	struct path p = { .mnt = sbi->lower_root.mnt };
	struct dentry *d;
	struct file *f;
	int err = 0;

	d = s3cfs_record_get(inode, &p.dentry);
	if (IS_ERR(d))
		return PTR_ERR(d);
	if (d_inode(d) == S3CFS_I(inode)->lower_inode)
		err = vfs_unlink(S3CFS_IDMAP_NOP, d_inode(p.dentry), d, NULL);
	dget(p.dentry);
	s3cfs_record_put(p.dentry, d);
	if (!err && sync) {
		f = dentry_open(&p, O_RDONLY | O_DIRECTORY, sbi->creds);
		err = IS_ERR(f) ? PTR_ERR(f) : vfs_fsync(f, 0);
		if (!IS_ERR(f))
			fput(f);
	}
	dput(p.dentry);
	return err;
}

/*
 * Record @inode (named @path) as acknowledged: the link and the xattr;
 * the caller's fsync of the lower file makes them durable. Called with
 * @up_mutex held and the mounter's credentials.
 */
static int s3cfs_record(struct inode *inode, const char *path)
{
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	struct dentry *pdir, *d;
	int err;

	err = vfs_setxattr(S3CFS_IDMAP_NOP, si->lower.dentry,
			   S3CFS_XATTR_PENDING, path, strlen(path), 0);
	if (err)
		return err;
	d = s3cfs_record_get(inode, &pdir);
	if (IS_ERR(d))
		return PTR_ERR(d);
	/* A record of an earlier file with this inode number: stale. */
	if (d_is_positive(d) && d_inode(d) != si->lower_inode) {
		err = vfs_unlink(S3CFS_IDMAP_NOP, d_inode(pdir), d, NULL);
		/* Negative now, unless someone else held it (then unhashed). */
		if (!err && (d_is_positive(d) || d_unhashed(d)))
			err = -EBUSY;
	}
	if (!err && d_is_negative(d))
		err = vfs_link(si->lower.dentry, S3CFS_IDMAP_NOP,
			       d_inode(pdir), d, NULL);
	s3cfs_record_put(pdir, d);
	return err;
}

/*
 * Queue the upload of @dentry's inode @delay jiffies from now. The queue
 * holds the dentry: the upload needs a name, and it follows renames.
 */
static void s3cfs_upq_add(struct dentry *dentry, unsigned long delay)
{
	struct inode *inode = d_inode(dentry);
	struct s3cfs_sb_info *sbi = S3CFS_SB(inode->i_sb);
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	u64 size = i_size_read(inode);

	spin_lock(&sbi->upq.lock);
	sbi->upq.bytes += size - si->up_bytes;
	si->up_bytes = size;
	if (list_empty(&si->up_link)) {
		si->up_since = jiffies;
		si->up_dentry = dget(dentry);
		list_add_tail(&si->up_link, &sbi->upq.list);
		sbi->upq.nr++;
		si->up_tries = 0;
	}
	mod_delayed_work(sbi->upq.workq, &si->up_work, delay);
	spin_unlock(&sbi->upq.lock);
}

/**
 * s3cfs_upq_ack() - acknowledge a LOCAL file's content (write-back mode)
 * @inode: upper inode, i_rwsem held
 * @dentry: a name of it
 *
 * Makes the file durable on the cache device, records it and queues its
 * upload. Return: 0 or a negative errno (nothing is promised then).
 */
int s3cfs_upq_ack(struct inode *inode, struct dentry *dentry)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(inode->i_sb);
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	const struct cred *old_cred;
	char *buf, *path;
	int err;

	lockdep_assert_held(&inode->i_rwsem);
	/*
	 * The data and the size on the device before the record exists: a
	 * journal commit made by anyone else's fsync would carry the record
	 * and only the data that happened to be allocated (delalloc).
	 */
	err = s3cfs_upload_prepare(inode) ?: vfs_fsync(si->lower_file, 0);
	if (err)
		return err;
	err = s3cfs_inode_path(dentry, &buf, &path);
	if (err)
		return err;
	mutex_lock(&si->up_mutex);
	old_cred = override_creds(sbi->creds);
	err = s3cfs_record(inode, path);
	revert_creds(old_cred);
	/* The link and the xattr changed the file's inode: one commit. */
	if (!err)
		err = vfs_fsync(si->lower_file, 0);
	if (!err) {
		set_bit(S3CFS_I_QUEUED, &si->flags);
		atomic64_inc(&sbi->stats.wb_acks);
	}
	mutex_unlock(&si->up_mutex);
	__putname(buf);
	if (!err)
		s3cfs_upq_add(dentry, READ_ONCE(sbi->opts.upload_delay) * HZ);
	return err;
}

/* Past writeback_max, or nothing left that could get under it. */
static bool s3cfs_upq_below(struct s3cfs_sb_info *sbi)
{
	return READ_ONCE(sbi->upq.bytes) <=
		(u64)READ_ONCE(sbi->opts.writeback_max_mb) << 20 ||
		READ_ONCE(sbi->upq.nr) <= 1;
}

/**
 * s3cfs_upq_unchanged() - nothing changed since @inode's acknowledgment
 * @inode: upper inode
 *
 * Without locks: the record stands (writeback into the lower file, a
 * truncate or a fallocate would have dropped it first), no folio waits
 * for writeback, and the sizes agree (an ftruncate up reaches the lower
 * file only at the next acknowledgment). A write racing with the caller
 * may be missed, as it would be by a lock taken a moment earlier.
 */
bool s3cfs_upq_unchanged(struct inode *inode)
{
	struct s3cfs_inode_info *si = S3CFS_I(inode);

	return test_bit(S3CFS_I_QUEUED, &si->flags) &&
	       !mapping_tagged(inode->i_mapping, PAGECACHE_TAG_DIRTY) &&
	       !mapping_tagged(inode->i_mapping, PAGECACHE_TAG_WRITEBACK) &&
	       i_size_read(inode) == i_size_read(d_inode(si->lower.dentry));
}

/**
 * s3cfs_upq_throttle() - an acknowledgment past writeback_max waits
 * @sbi: the mount
 *
 * Called after an acknowledgment, with no lock held: while the files the
 * queue holds are more than writeback_max MiB, or the queues of all
 * write-back mounts on the cache filesystem more than wb_device_pct of
 * it, their uploads start at once and the writer waits (killably: what it
 * wrote is acknowledged anyway) until they are under it again, as
 * balance_dirty_pages() makes a writer wait for writeback. The file being
 * written last may stay queued.
 */
void s3cfs_upq_throttle(struct s3cfs_sb_info *sbi)
{
	if (!s3cfs_upq_below(sbi)) {
		s3cfs_upq_kick(sbi);
		wait_event_killable(sbi->upq.wq, s3cfs_upq_below(sbi));
	}
	if (!s3cfs_upq_dev_below(sbi)) {
		s3cfs_upq_kick_dev(sbi);
		wait_event_killable(s3cfs_upq_dev_wq,
				    s3cfs_upq_dev_below(sbi));
	}
}

/**
 * s3cfs_upq_changing() - the lower file of @inode is about to change
 * @inode: upper inode
 *
 * Drops an acknowledged file's record durably first: what the record
 * promised is about to be overwritten. Return: 0 or a negative errno
 * (then the lower file must not be changed).
 */
int s3cfs_upq_changing(struct inode *inode)
{
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	const struct cred *old_cred;
	int err = 0;

	if (!test_bit(S3CFS_I_QUEUED, &si->flags))
		return 0;
	mutex_lock(&si->up_mutex);
	if (test_bit(S3CFS_I_QUEUED, &si->flags)) {
		old_cred = override_creds(S3CFS_SB(inode->i_sb)->creds);
		err = s3cfs_unrecord(inode, true);
		revert_creds(old_cred);
		if (!err)
			clear_bit(S3CFS_I_QUEUED, &si->flags);
		else
			s3cfs_pr_d(pr_warn_ratelimited, si->lower.dentry,
				   "%*pE: cannot drop its upload record (%d): not written\n",
				   err);
	}
	mutex_unlock(&si->up_mutex);
	return err;
}

/* The upload of @inode is done (or moot): forget its record. */
static void s3cfs_upq_forget(struct inode *inode)
{
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	const struct cred *old_cred;

	mutex_lock(&si->up_mutex);
	if (test_and_clear_bit(S3CFS_I_QUEUED, &si->flags)) {
		old_cred = override_creds(S3CFS_SB(inode->i_sb)->creds);
		s3cfs_unrecord(inode, false);
		revert_creds(old_cred);
	}
	mutex_unlock(&si->up_mutex);
}

/**
 * s3cfs_upq_unlinked() - an acknowledged file lost its name (unlink,
 *	renamed over)
 * @inode: upper inode
 */
void s3cfs_upq_unlinked(struct inode *inode)
{
	if (test_bit(S3CFS_I_QUEUED, &S3CFS_I(inode)->flags)) {
		s3cfs_upq_forget(inode);
		/* Never uploaded now: a stream it kept for that is dropped. */
		if (!atomic_read(&S3CFS_I(inode)->nr_writers))
			s3cfs_stream_drop(inode);
	}
}

/**
 * s3cfs_upq_renaming() - an acknowledged file is about to be renamed
 * @inode: upper inode
 * @old_path: its path now
 * @new_path: its path after the rename
 *
 * The record names both until the next acknowledgment: a crash on
 * either side of the rename finds the file. Return: 0 or a negative errno.
 */
int s3cfs_upq_renaming(struct inode *inode, const char *old_path,
		       const char *new_path)
{
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	size_t lo = strlen(old_path), ln = strlen(new_path);
	const struct cred *old_cred;
	char *both;
	int err = 0;

	if (!test_bit(S3CFS_I_QUEUED, &si->flags))
		return 0;
	both = kmalloc(lo + ln + 2, GFP_KERNEL);
	if (!both)
		return -ENOMEM;
	memcpy(both, old_path, lo + 1);
	memcpy(both + lo + 1, new_path, ln + 1);
	old_cred = override_creds(S3CFS_SB(inode->i_sb)->creds);
	mutex_lock(&si->up_mutex);
	if (test_bit(S3CFS_I_QUEUED, &si->flags))
		err = vfs_setxattr(S3CFS_IDMAP_NOP, si->lower.dentry,
				   S3CFS_XATTR_PENDING, both, lo + ln + 1, 0);
	mutex_unlock(&si->up_mutex);
	revert_creds(old_cred);
	kfree(both);
	return err;
}

/**
 * s3cfs_upq_settle() - apply the answer of @inode's queued upload
 * @inode: upper inode, i_rwsem held
 *
 * A queued upload sends without i_rwsem (s3cfs_upload_acked()). Whatever
 * takes i_rwsem to change the lower file, the name, or what the answer
 * decides (close, fsync, truncate, fallocate, unlink, rename) calls this
 * first: it waits for a send in flight (none can start while i_rwsem is
 * held) and applies its answer, so that it finds the file as if the
 * upload had held i_rwsem throughout. An unlink's DELETE then never goes
 * before the upload's PUT, nor a rename's copy; a close's new record is
 * never the one the upload drops.
 */
void s3cfs_upq_settle(struct inode *inode)
{
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	struct s3cfs_upload_sent *sent;

	lockdep_assert_held(&inode->i_rwsem);
	if (!S_ISREG(inode->i_mode))
		return;
	/* The send holds wb_sem for writing until its answer is in. */
	down_read(&si->wb_sem);
	sent = si->up_sent;
	si->up_sent = NULL;
	up_read(&si->wb_sem);
	if (!sent)
		return;
	sent->result = s3cfs_upload_acked_answer(inode, sent);
	/* A conflict keeps our bytes (upload.c): the record is done with. */
	if (!sent->result || sent->result == -ESTALE)
		s3cfs_upq_forget(inode);
}

static void s3cfs_upq_workfn(struct work_struct *work)
{
	struct s3cfs_inode_info *si = container_of(to_delayed_work(work),
						   struct s3cfs_inode_info,
						   up_work);
	struct inode *inode = &si->vfs_inode;
	struct s3cfs_sb_info *sbi = S3CFS_SB(inode->i_sb);
	struct s3cfs_upload_sent sent = { };
	struct dentry *dentry = NULL;
	unsigned long delay;
	bool done = true;
	int err;

	/* On the queue (and so @up_dentry set) until this run ends. */
	err = s3cfs_upload_acked(inode, si->up_dentry, &sent);
	if (err == -EINPROGRESS)
		s3cfs_fault("upq_uploaded");
	/*
	 * The record goes under i_rwsem: a close acknowledging the file
	 * again right after the upload must find it gone and make it anew
	 * (it applies the answer first, if it comes before us).
	 */
	inode_lock(inode);
	if (err == -EINPROGRESS) {
		s3cfs_upq_settle(inode);
		err = sent.result;
	} else if (!err || err == -ESTALE) {
		/* Nothing to upload, or not ours to upload any more. */
		s3cfs_upq_forget(inode);
	}
	inode_unlock(inode);
	kfree(sent.path);
	kfree(sent.etag);
	/*
	 * A failure is tried again; -EAGAIN: changed since its
	 * acknowledgment, whose next one queues it.
	 */
	if (err && err != -ESTALE && err != -EAGAIN) {
		done = READ_ONCE(sbi->upq.draining);
		atomic64_inc(&sbi->upq.errors);
	}

	spin_lock(&sbi->upq.lock);
	if (!done) {
		si->up_tries++;
		delay = min_t(unsigned long,
			      (READ_ONCE(sbi->opts.upload_delay) * HZ ?: HZ) <<
			      min(si->up_tries, 10U), S3CFS_UPQ_BACKOFF_MAX);
		mod_delayed_work(sbi->upq.workq, &si->up_work, delay);
	} else if (delayed_work_pending(&si->up_work)) {
		/* Acknowledged again meanwhile: that run uploads it. */
		done = false;
	} else {
		list_del_init(&si->up_link);
		sbi->upq.nr--;
		sbi->upq.bytes -= si->up_bytes;
		si->up_bytes = 0;
		dentry = si->up_dentry;
		si->up_dentry = NULL;
	}
	sbi->upq.runs++;
	spin_unlock(&sbi->upq.lock);
	wake_up_all(&sbi->upq.wq);
	wake_up_all(&s3cfs_upq_dev_wq);
	dput(dentry);
}

/**
 * s3cfs_upq_oldest() - seconds the longest-queued file has waited
 * @sbi: the mount
 *
 * Return: 0 with nothing queued.
 */
unsigned long s3cfs_upq_oldest(struct s3cfs_sb_info *sbi)
{
	struct s3cfs_inode_info *si;
	unsigned long oldest = 0;

	spin_lock(&sbi->upq.lock);
	list_for_each_entry(si, &sbi->upq.list, up_link)
		oldest = max(oldest, jiffies - si->up_since);
	spin_unlock(&sbi->upq.lock);
	return oldest / HZ;
}

/* Run every queued upload of @sbi now. */
static void s3cfs_upq_kick(struct s3cfs_sb_info *sbi)
{
	struct s3cfs_inode_info *si;

	spin_lock(&sbi->upq.lock);
	list_for_each_entry(si, &sbi->upq.list, up_link)
		mod_delayed_work(sbi->upq.workq, &si->up_work, 0);
	spin_unlock(&sbi->upq.lock);
}

/**
 * s3cfs_upq_sync() - upload everything queued on @sbi now and wait
 * @sbi: the mount
 *
 * Includes what an earlier mount recorded (s3cfs_upq_resume_work()).
 *
 * Return: 0 once the queue is empty, -EIO if an upload failed meanwhile
 * (it stays queued), -EINTR if killed.
 */
int s3cfs_upq_sync(struct s3cfs_sb_info *sbi)
{
	s64 errors = atomic64_read(&sbi->upq.errors);
	int err;

	/* What an earlier mount recorded is queued first. */
	if (sbi->upq.workq)
		flush_work(&sbi->upq.resume_work);
	s3cfs_upq_kick(sbi);
	err = wait_event_killable(sbi->upq.wq,
				  READ_ONCE(sbi->upq.nr) == 0 ||
				  atomic64_read(&sbi->upq.errors) != errors);
	if (err)
		return -EINTR;
	return READ_ONCE(sbi->upq.nr) ? -EIO : 0;
}

/**
 * s3cfs_ioctl() - ->unlocked_ioctl of files and directories
 * @file: any open file of the mount
 * @cmd: S3CFS_IOC_SYNC, S3CFS_IOC_STATE or S3CFS_IOC_EVICT
 * @arg: S3CFS_IOC_STATE: the user's struct s3cfs_ioc_state;
 *	S3CFS_IOC_EVICT: the user's struct s3cfs_ioc_evict
 *
 * Return: see S3CFS_IOC_SYNC (-EPERM unless the caller owns @file or has
 * CAP_SYS_ADMIN: a sync starts everyone's queued uploads); S3CFS_IOC_STATE:
 * 0, -EINVAL (not a regular file) or -EFAULT; S3CFS_IOC_EVICT: see
 * s3cfs_evict_ioctl(); -ENOTTY for any other @cmd.
 */
long s3cfs_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct s3cfs_ioc_state st;
	s64 cached;
	int err;

	switch (cmd) {
	case S3CFS_IOC_SYNC:
		if (!inode_owner_or_capable(S3CFS_IDMAP_NOP, file_inode(file)) &&
		    !capable(CAP_SYS_ADMIN))
			return -EPERM;
		return s3cfs_upq_sync(S3CFS_SB(file_inode(file)->i_sb));
	case S3CFS_IOC_EVICT:
		return s3cfs_evict_ioctl(file, (void __user *)arg);
	case S3CFS_IOC_STATE:
		err = s3cfs_upload_state(file_inode(file), &st);
		if (!err) {
			cached = s3cfs_chunks_cached(file_inode(file));
			if (cached >= 0) {
				st.cached = cached;
				st.flags |= S3CFS_STATE_CACHED;
			}
		}
		if (!err && copy_to_user((void __user *)arg, &st, sizeof(st)))
			err = -EFAULT;
		return err;
	}
	return -ENOTTY;
}

/**
 * s3cfs_upq_drain() - unmount: try every queued upload once, then wait
 * @sbi: the mount
 *
 * What fails keeps its record for the next mount.
 */
void s3cfs_upq_drain(struct s3cfs_sb_info *sbi)
{
	if (!sbi->upq.workq)
		return;
	cancel_work_sync(&sbi->upq.resume_work);
	WRITE_ONCE(sbi->upq.draining, true);
	s3cfs_upq_kick(sbi);
	wait_event(sbi->upq.wq, READ_ONCE(sbi->upq.nr) == 0);
	/* Each run's last steps (the wake-up, the dput) done too. */
	destroy_workqueue(sbi->upq.workq);
	sbi->upq.workq = NULL;
	spin_lock(&s3cfs_upq_mounts_lock);
	list_del_init(&sbi->upq.dev_link);
	spin_unlock(&s3cfs_upq_mounts_lock);
	wake_up_all(&s3cfs_upq_dev_wq);
}

/* The upper dentry at @path from the root, or an ERR_PTR. */
static struct dentry *s3cfs_upq_walk(struct s3cfs_sb_info *sbi,
				     const char *path)
{
	struct dentry *d = dget(sbi->sb->s_root), *next;
	const char *p = path, *end;

	while (*p) {
		end = strchrnul(p, '/');
		next = lookup_one_len_unlocked(p, d, end - p);
		dput(d);
		if (IS_ERR(next))
			return next;
		d = next;
		if (d_is_negative(d)) {
			dput(d);
			return ERR_PTR(-ENOENT);
		}
		p = *end ? end + 1 : end;
	}
	return d;
}

struct s3cfs_upq_names {
	struct dir_context ctx;
	char *names;		/* NUL-separated */
	size_t len, cap;
};

static bool s3cfs_upq_fill(struct dir_context *ctx, const char *name,
			   int namelen, loff_t off, u64 ino, unsigned int type)
{
	struct s3cfs_upq_names *n = container_of(ctx, struct s3cfs_upq_names,
						 ctx);
	char *bigger;

	if (type != DT_REG || namelen >= 24)
		return true;
	if (n->len + namelen + 1 > n->cap) {
		bigger = krealloc(n->names, max(n->cap * 2, (size_t)4096),
				  GFP_KERNEL);
		if (!bigger)
			return false;
		n->names = bigger;
		n->cap = max(n->cap * 2, (size_t)4096);
	}
	memcpy(n->names + n->len, name, namelen);
	n->names[n->len + namelen] = '\0';
	n->len += namelen + 1;
	return true;
}

/*
 * Queue the file the record @rec (a positive lower dentry in the pending
 * directory @pdir) stands for. A record whose file is no longer LOCAL
 * (uploaded before the crash, the record's removal lost) or that no name
 * leads to while nothing else links the file is removed. Return: true if
 * the file was queued.
 */
static bool s3cfs_upq_resume_one(struct s3cfs_sb_info *sbi,
				 struct dentry *pdir, struct dentry *rec)
{
	struct inode *lower = d_inode(rec);
	bool found = false, moot = false;
	char *paths, *p;
	struct dentry *d;
	ssize_t n;

	paths = kzalloc(2 * PATH_MAX + 2, GFP_KERNEL);
	if (!paths)
		return false;
	n = s3cfs_get_xattr(rec, S3CFS_XATTR_PENDING, paths, 2 * PATH_MAX);
	for (p = paths; n > 0 && p < paths + n && !found && !moot;
	     p += strlen(p) + 1) {
		d = s3cfs_upq_walk(sbi, p);
		if (IS_ERR(d))
			continue;
		if (d_is_reg(d) && S3CFS_I(d_inode(d))->lower_inode == lower) {
			if (s3cfs_inode_local(d_inode(d))) {
				set_bit(S3CFS_I_QUEUED,
					&S3CFS_I(d_inode(d))->flags);
				s3cfs_upq_add(d, 0);
				found = true;
			} else {
				moot = true;
			}
		}
		dput(d);
	}
	if (moot || (!found && lower->i_nlink <= 1)) {
		inode_lock_nested(d_inode(pdir), I_MUTEX_PARENT);
		if (rec->d_parent == pdir && !d_unhashed(rec))
			vfs_unlink(S3CFS_IDMAP_NOP, d_inode(pdir), rec, NULL);
		inode_unlock(d_inode(pdir));
	} else if (!found) {
		const char *shown = n > 0 ? paths : "no path";

		s3cfs_pr_d(pr_warn, rec,
			   "pending upload %*pE (%*pE) in %*pE: no name leads to it; kept\n",
			   s3cfs_esclen(shown), shown,
			   s3cfs_esclen(sbi->cache_path), sbi->cache_path);
	}
	kfree(paths);
	return found;
}

/**
 * s3cfs_upq_resume_work() - a new write-back mount queues what earlier
 *	ones acknowledged and did not upload
 * @work: the mount's upq.resume_work
 */
void s3cfs_upq_resume_work(struct work_struct *work)
{
	struct s3cfs_sb_info *sbi = container_of(work, struct s3cfs_sb_info,
						 upq.resume_work);
	struct s3cfs_upq_names n = { .ctx.actor = s3cfs_upq_fill };
	struct path p = { .mnt = sbi->lower_root.mnt };
	const struct cred *old_cred;
	struct dentry *rec;
	struct file *dir;
	char *name;
	int err;

	old_cred = override_creds(sbi->creds);
	p.dentry = s3cfs_pending_dir(sbi);
	if (IS_ERR(p.dentry)) {
		err = PTR_ERR(p.dentry);
		goto out;
	}
	dir = dentry_open(&p, O_RDONLY | O_DIRECTORY, sbi->creds);
	err = PTR_ERR_OR_ZERO(dir);
	if (!err) {
		err = iterate_dir(dir, &n.ctx);
		fput(dir);
	}
	for (name = n.names; !err && name && name < n.names + n.len;
	     name += strlen(name) + 1) {
		rec = lookup_one_len_unlocked(name, p.dentry, strlen(name));
		if (IS_ERR(rec))
			continue;
		if (d_is_reg(rec) && s3cfs_upq_resume_one(sbi, p.dentry, rec))
			atomic64_inc(&sbi->stats.wb_resumed);
		dput(rec);
	}
	dput(p.dentry);
out:
	revert_creds(old_cred);
	if (err)
		pr_warn("%*pE: reading the pending uploads: %d\n",
			s3cfs_esclen(sbi->cache_path), sbi->cache_path, err);
	kfree(n.names);
}
