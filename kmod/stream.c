// SPDX-License-Identifier: GPL-2.0
/*
 * s3cachefs: streamed uploads (protocol 8).
 *
 * A LOCAL file written from its start, in order (a checkpoint's shard,
 * torch.save), has its finished parts uploaded while the writer goes on,
 * so that its close or fsync waits only for the last part and the
 * Complete, not for the whole upload after the whole write:
 *
 *   1. a write at offset 0 into an empty file starts a stream (an id); each
 *      write that continues it moves its end (@st_next);
 *   2. when a byte is written past a whole part (stream_part_mb), a worker writes
 *      that range back to the lower file and tells the daemon the first
 *      @st_ready parts are there for good (UPLOAD with S3CFS_UP_PART); the
 *      daemon puts them into a multipart upload it opened for the stream;
 *   3. the close or fsync's UPLOAD (upload.c) names the stream and its
 *      parts (s3cfs_stream_take()); the daemon sends the rest and
 *      completes on that UPLOAD's condition. Either way the stream ends.
 *
 * Anything else that changes the file, a write elsewhere, a truncate, a
 * fallocate, a mapped write, a chmod, chown or utimes (their attributes
 * went with the upload's creation), breaks the stream: its parts may no longer
 * be the file's, so the worker aborts it (PARTS 0) and the next upload
 * sends the file whole. So does the last writer's release of a file with
 * no upload to come (unlinked). The daemon checks the rest (the key, the
 * inode, the layout) and uploads whole what it cannot match.
 *
 * The worker holds no lock of the file's while it writes back (the
 * writer keeps i_rwsem across its writes); an upload waits for it
 * (s3cfs_stream_settle()) before it takes wb_sem.
 */
#include "s3cachefs.h"
#include <linux/moduleparam.h>
#include <linux/pagemap.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

/* S3's smallest part but the last, and the largest part. */
#define S3CFS_STREAM_PART_MIN_MB	5
#define S3CFS_STREAM_PART_MAX_MB	5120

static unsigned int stream_part_mb = 16;

static int s3cfs_stream_part_set(const char *val,
				 const struct kernel_param *kp)
{
	unsigned int mb;
	int err = kstrtouint(val, 0, &mb);

	if (err)
		return err;
	if (mb && (mb < S3CFS_STREAM_PART_MIN_MB ||
		   mb > S3CFS_STREAM_PART_MAX_MB))
		return -EINVAL;
	WRITE_ONCE(stream_part_mb, mb);
	return 0;
}

static const struct kernel_param_ops s3cfs_stream_part_ops = {
	.set = s3cfs_stream_part_set,
	.get = param_get_uint,
};
module_param_cb(stream_part_mb, &s3cfs_stream_part_ops, &stream_part_mb,
		0644);
MODULE_PARM_DESC(stream_part_mb, "Files written in order are uploaded while they are written, in parts of this many MiB (5-5120; 0: off; 16)");

static void s3cfs_stream_workfn(struct work_struct *work);

/* At every allocation of an upper inode. */
void s3cfs_stream_init_inode(struct s3cfs_inode_info *si)
{
	spin_lock_init(&si->st_lock);
	si->st_id = 0;
	si->st_told = 0;
	si->st_next = 0;
	si->st_ready = 0;
	si->st_broken = false;
	si->st_part = 0;
	INIT_WORK(&si->st_work, s3cfs_stream_workfn);
}

/*
 * Parts of @part bytes a stream ending at @end has finished: those a byte
 * was written past. A file that ends on a part's end keeps that part for
 * its close, so the close always has something to send, and a file of
 * one part goes up in one PutObject.
 */
static u64 s3cfs_stream_done_parts(loff_t end, u64 part)
{
	return end > 0 && part ? div64_u64(end - 1, part) : 0;
}

/* Streams are unique while the module is loaded (the daemon keys them). */
static atomic64_t s3cfs_stream_ids = ATOMIC64_INIT(0);

/*
 * Whether @inode's writes may start a stream: a writable mount without
 * POSIX attributes (they go with the multipart upload's creation, and a
 * file being written has no final mtime yet), a daemon that knows streams.
 */
static bool s3cfs_stream_allowed(struct inode *inode)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(inode->i_sb);

	return READ_ONCE(stream_part_mb) && sbi->opts.writable &&
	       !sbi->opts.posix_meta && s3cfs_daemon_version() >= 8;
}

/**
 * s3cfs_stream_wrote() - a buffered write into a LOCAL file went in
 * @inode: upper inode, i_rwsem held
 * @pos: where the write began
 * @len: bytes written
 * @old_size: the file's size before it
 */
void s3cfs_stream_wrote(struct inode *inode, loff_t pos, size_t len,
			loff_t old_size)
{
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	bool kick = false, start;
	u64 part;

	start = !pos && !old_size && s3cfs_stream_allowed(inode);
	spin_lock(&si->st_lock);
	if (start) {
		/* A new stream; the worker aborts one told before. */
		si->st_id = atomic64_inc_return(&s3cfs_stream_ids);
		si->st_part = (u64)READ_ONCE(stream_part_mb) << 20;
		si->st_ready = 0;
		si->st_broken = false;
		si->st_next = len;
		kick = !!si->st_told;
	} else if (si->st_id && !si->st_broken) {
		if (pos == si->st_next) {
			si->st_next += len;
		} else {
			si->st_broken = true;
			kick = !!si->st_told;
		}
	}
	if (si->st_id && !si->st_broken) {
		part = s3cfs_stream_done_parts(si->st_next, si->st_part);
		kick |= part > si->st_ready &&
			si->st_ready < S3CFS_STREAM_PARTS_MAX;
	}
	spin_unlock(&si->st_lock);
	if (kick)
		queue_work(system_unbound_wq, &si->st_work);
}

/**
 * s3cfs_stream_break() - @inode changed other than by an appending write
 * @inode: upper inode
 *
 * A truncate, a fallocate, a mapped write: the stream's parts may no
 * longer be the file's. Any context that may sleep.
 */
void s3cfs_stream_break(struct inode *inode)
{
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	bool kick;

	if (!READ_ONCE(si->st_id))
		return;
	spin_lock(&si->st_lock);
	kick = si->st_id && !si->st_broken && si->st_told;
	si->st_broken = true;
	spin_unlock(&si->st_lock);
	if (kick)
		queue_work(system_unbound_wq, &si->st_work);
}

/*
 * Tell the daemon about stream @id of @inode: @parts are written, or (0)
 * abort it. Parts carry the file's path (the upload's key) and its POSIX
 * attributes but the mtime, which goes on changing while it is written:
 * they go with the upload's creation, and the object's time is then the
 * one S3 gives it at the Complete. An abort needs neither (an unlinked
 * file has no path).
 */
static int s3cfs_stream_send(struct inode *inode, u64 id, unsigned int parts,
			     u64 part)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(inode->i_sb);
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	struct dentry *dentry;
	struct s3cfs_req *req;
	char *buf = NULL, *path = "";
	int err;

	if (parts) {
		dentry = d_find_alias(inode);
		if (!dentry)
			return -ENOENT;
		err = s3cfs_inode_path(dentry, &buf, &path);
		dput(dentry);
		if (err)
			return err;
	}
	err = -ENOMEM;
	req = s3cfs_req_alloc(sbi, S3CFS_CMD_UPLOAD);
	if (!req)
		goto out;
	req->path = kstrdup(path, GFP_KERNEL);
	if (req->path) {
		req->ino = si->lower_inode->i_ino;
		req->up_flags = S3CFS_UP_PART;
		req->prio = S3CFS_PRIO_ASYNC;
		req->stream = id;
		req->parts = parts;
		req->length = part;
		req->size = part * parts;
		if (parts) {
			s3cfs_posix_of(inode, &req->posix);
			req->posix.flags &= ~S3CFS_POSIX_MTIME;
		}
		err = s3cfs_upcall_req(req);
	}
	s3cfs_req_put(req);
out:
	if (buf)
		__putname(buf);
	return err;
}

/*
 * Write back and announce the parts the writer finished; abort a stream
 * the daemon was told of that is broken or replaced.
 */
static void s3cfs_stream_workfn(struct work_struct *work)
{
	struct s3cfs_inode_info *si = container_of(work, struct s3cfs_inode_info,
						   st_work);
	struct inode *inode = &si->vfs_inode;
	unsigned int ready, target;
	u64 id, told, part;
	bool broken, abort;
	int err;

	for (;;) {
		spin_lock(&si->st_lock);
		id = si->st_id;
		told = si->st_told;
		broken = si->st_broken;
		part = si->st_part;
		ready = si->st_ready;
		target = id ? min_t(u64, s3cfs_stream_done_parts(si->st_next,
								 part),
				    S3CFS_STREAM_PARTS_MAX) : 0;
		abort = told && (told != id || broken);
		if (abort)
			si->st_told = 0;
		spin_unlock(&si->st_lock);
		if (abort) {
			/* No answer needed to go on: the daemon drops it at UMOUNT too. */
			s3cfs_stream_send(inode, told, 0, part);
			continue;
		}
		if (!id || broken || target <= ready)
			return;
		err = filemap_write_and_wait_range(inode->i_mapping,
						   (loff_t)ready * part,
						   (loff_t)target * part - 1);
		spin_lock(&si->st_lock);
		if (!err && si->st_id == id && !si->st_broken)
			si->st_told = id;	/* abort it if anything goes wrong */
		else
			err = err ?: -EAGAIN;
		spin_unlock(&si->st_lock);
		if (!err) {
			s3cfs_fault("stream_send");
			err = s3cfs_stream_send(inode, id, target, part);
		}
		spin_lock(&si->st_lock);
		if (si->st_id == id) {
			if (!err)
				si->st_ready = max(si->st_ready, target);
			else
				si->st_broken = true;
		}
		spin_unlock(&si->st_lock);
		if (!err)
			atomic64_add(target - ready,
				     &S3CFS_SB(inode->i_sb)->stats.stream_parts);
	}
}

/**
 * s3cfs_stream_settle() - wait for @inode's stream worker
 * @inode: upper inode, i_rwsem held (no write can queue it again)
 *
 * Before an upload takes wb_sem: the worker writes back under it.
 */
void s3cfs_stream_settle(struct inode *inode)
{
	struct s3cfs_inode_info *si = S3CFS_I(inode);

	if (READ_ONCE(si->st_id) || READ_ONCE(si->st_told))
		flush_work(&si->st_work);
}

/**
 * s3cfs_stream_take() - the stream an UPLOAD of @size bytes may use
 * @inode: upper inode, settled (s3cfs_stream_settle()), i_rwsem held
 * @req: the UPLOAD: STREAM, PARTS and LENGTH are set when its first
 *	parts are in the daemon's hands, unbroken
 * @size: the bytes it uploads
 *
 * The stream ends here, whatever the upload does: the daemon uses or
 * aborts it.
 */
void s3cfs_stream_take(struct inode *inode, struct s3cfs_req *req, u64 size)
{
	struct s3cfs_inode_info *si = S3CFS_I(inode);

	spin_lock(&si->st_lock);
	if (si->st_told && si->st_told == si->st_id && !si->st_broken &&
	    si->st_ready && (u64)si->st_ready * si->st_part <= size) {
		req->stream = si->st_id;
		req->parts = si->st_ready;
		req->length = si->st_part;
	} else if (si->st_told) {
		/* Told, then broken: the worker's abort has gone already. */
		req->stream = si->st_told;
		req->parts = 0;
		req->length = si->st_part;
	}
	si->st_id = 0;
	si->st_told = 0;
	si->st_ready = 0;
	si->st_broken = false;
	spin_unlock(&si->st_lock);
	if (req->parts)
		atomic64_inc(&S3CFS_SB(inode->i_sb)->stats.stream_uploads);
}

/**
 * s3cfs_stream_drop() - @inode's stream has no upload to come
 * @inode: upper inode
 *
 * The last writer's release of a file that is not queued for upload (it
 * was unlinked, or its upload happened), an unlinked queued file: the
 * daemon is told to abort a stream it knows. Process context, no lock of
 * the file's held but i_rwsem, which the worker never takes.
 */
void s3cfs_stream_drop(struct inode *inode)
{
	struct s3cfs_inode_info *si = S3CFS_I(inode);

	if (!READ_ONCE(si->st_id) && !READ_ONCE(si->st_told))
		return;
	s3cfs_stream_break(inode);
	flush_work(&si->st_work);
	spin_lock(&si->st_lock);
	si->st_id = 0;
	si->st_ready = 0;
	si->st_broken = false;
	spin_unlock(&si->st_lock);
}

/* At eviction: nothing may run on the inode any more. */
void s3cfs_stream_evict(struct inode *inode)
{
	cancel_work_sync(&S3CFS_I(inode)->st_work);
}
