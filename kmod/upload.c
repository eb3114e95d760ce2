// SPDX-License-Identifier: GPL-2.0
/*
 * s3cachefs: uploading LOCAL files (writable mounts).
 *
 * The last close of a file opened for writing, and every fsync, write the
 * dirty folios to the lower file and ask the daemon to put the lower file
 * as the object (UPLOAD), on a condition: the key must not exist (a file
 * never uploaded) or must still be the version we uploaded last
 * (If-Match), so a change made in S3 meanwhile is never overwritten.
 * The whole upload runs under the upper i_rwsem: no write lands between
 * the snapshot and the commit, and the object is exactly the file. (A
 * queued upload of write-back mode sends under wb_sem alone: see
 * s3cfs_upload_acked().)
 *
 * After a successful upload the file is committed when no other writer
 * has it open: its tag becomes an ordinary copy of the new version
 * (S3CFS_META_VERSION, the new ETag) and it is read, cached and evicted
 * like any other file. With writers left it stays LOCAL, based on the
 * new ETag. When the condition fails (a conflict) our bytes are kept
 * under .s3cachefs/conflicts/ in the cache, the inode goes stale (the name
 * shows S3's version from the next lookup), and close or fsync fails with
 * ESTALE.
 */
#include "s3cachefs.h"
#include <linux/namei.h>
#include <linux/xattr.h>
#include <linux/slab.h>
#include <linux/pagemap.h>
#include <linux/timekeeping.h>

#define S3CFS_CONFLICTS	"conflicts"

/**
 * s3cfs_lower_subdir() - the lower directory @name in @parent, created if
 *	missing (mode 0700; call with the mounter's credentials)
 * @parent: a lower directory
 * @name: one path component
 *
 * Return: a referenced dentry or an ERR_PTR.
 */
struct dentry *s3cfs_lower_subdir(struct dentry *parent, const char *name)
{
	struct inode *dir = d_inode(parent);
	struct dentry *d;
	int err = 0;

	inode_lock_nested(dir, I_MUTEX_PARENT);
	d = lookup_one_len(name, parent, strlen(name));
	if (!IS_ERR(d) && d_is_negative(d))
		err = vfs_mkdir(S3CFS_IDMAP_NOP, dir, d, 0700);
	inode_unlock(dir);
	if (IS_ERR(d))
		return d;
	if (!err && !d_is_dir(d))
		err = -ENOTDIR;
	if (err) {
		dput(d);
		return ERR_PTR(err);
	}
	return d;
}

/*
 * The name of a conflict's copy: <seconds>-<lower ino>-<name>, the name
 * cut so that the whole fits NAME_MAX (a name of more than about 225
 * bytes made one too long, the copy stayed at its name, and every close
 * of the file met the conflict again). The copy's xattr names the whole
 * path. Return: a kmalloc'ed name, or NULL.
 */
static char *s3cfs_conflict_name(struct s3cfs_inode_info *si)
{
	struct name_snapshot n;
	char *kept;
	int len;

	kept = kmalloc(NAME_MAX + 1, GFP_KERNEL);
	if (!kept)
		return NULL;
	len = snprintf(kept, NAME_MAX + 1, "%lld-%lu-",
		       ktime_get_real_seconds(), si->lower_inode->i_ino);
	take_dentry_name_snapshot(&n, si->lower.dentry);
	strscpy(kept + len, n.name.name, NAME_MAX + 1 - len);
	release_dentry_name_snapshot(&n);
	return kept;
}

/*
 * Keep the lower file of @inode, whose upload of @path met a conflict, as
 * .s3cachefs/conflicts/<seconds>-<lower ino>-<name> (s3cfs_conflict_name()):
 * out of the namespace, so the name shows S3's version again, and never
 * pruned or evicted. It names @path in S3CFS_XATTR_CONFLICT (s3cachectl
 * status lists it). Called with the mounter's credentials. Return: 0 or a
 * negative errno.
 */
static int s3cfs_conflict_keep(struct inode *inode, const char *path,
			       char **kept)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(inode->i_sb);
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	struct dentry *meta, *cdir, *parent, *old, *new, *trap;
	int err;

	err = vfs_setxattr(S3CFS_IDMAP_NOP, si->lower.dentry,
			   S3CFS_XATTR_CONFLICT, path, strlen(path), 0);
	if (err)
		return err;
	meta = s3cfs_lower_subdir(sbi->lower_root.dentry, S3CFS_META_DIR);
	if (IS_ERR(meta))
		return PTR_ERR(meta);
	cdir = s3cfs_lower_subdir(meta, S3CFS_CONFLICTS);
	dput(meta);
	if (IS_ERR(cdir))
		return PTR_ERR(cdir);
	*kept = s3cfs_conflict_name(si);
	err = -ENOMEM;
	if (!*kept)
		goto out_cdir;
	parent = dget_parent(si->lower.dentry);
	trap = lock_rename(cdir, parent);
	err = -EINVAL;
	if (IS_ERR(trap)) {
		err = PTR_ERR(trap);
		goto out_parent;
	}
	old = lookup_one_len(si->lower.dentry->d_name.name, parent,
			     si->lower.dentry->d_name.len);
	if (IS_ERR(old)) {
		err = PTR_ERR(old);
		goto out_unlock;
	}
	new = lookup_one_len(*kept, cdir, strlen(*kept));
	if (IS_ERR(new)) {
		err = PTR_ERR(new);
		goto out_old;
	}
	err = -ESTALE;
	if (old == si->lower.dentry && d_is_negative(new) && old != trap &&
	    new != trap)
		err = s3cfs_vfs_rename(d_inode(parent), old, d_inode(cdir), new);
	dput(new);
out_old:
	dput(old);
out_unlock:
	unlock_rename(cdir, parent);
out_parent:
	dput(parent);
out_cdir:
	dput(cdir);
	return err;
}

/*
 * The upload of @inode failed on its condition (@err: -EEXIST, -ESTALE or
 * -ENOENT from the daemon). Return: -ESTALE for close or fsync.
 */
static int s3cfs_upload_conflict(struct inode *inode, const char *path,
				 int err)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(inode->i_sb);
	const struct cred *old_cred;
	char *kept = NULL;
	int kerr;

	old_cred = override_creds(sbi->creds);
	kerr = s3cfs_conflict_keep(inode, path, &kept);
	revert_creds(old_cred);
	atomic64_inc(&sbi->stats.conflicts);
	if (kerr)
		pr_err("conflict: s3://%*pE/%*pE%*pE %s in S3 since it was written here; our copy stays at its name in the cache (moving it failed: %d)\n",
		       s3cfs_esclen(sbi->bucket), sbi->bucket,
		       s3cfs_esclen(sbi->prefix), sbi->prefix,
		       s3cfs_esclen(path), path,
		       err == -EEXIST ? "was created" : "changed", kerr);
	else
		pr_warn("conflict: s3://%*pE/%*pE%*pE %s in S3 since it was written here; our copy is kept as %*pE/%s/%s/%*pE\n",
			s3cfs_esclen(sbi->bucket), sbi->bucket,
			s3cfs_esclen(sbi->prefix), sbi->prefix,
			s3cfs_esclen(path), path,
			err == -EEXIST ? "was created" : "changed",
			s3cfs_esclen(sbi->cache_path), sbi->cache_path, S3CFS_META_DIR,
			S3CFS_CONFLICTS, s3cfs_esclen(kept), kept);
	kfree(kept);
	if (kerr)
		return -ESTALE;
	s3cfs_inode_set_stale(inode);
	s3cfs_name_refresh(sbi, path);
	return -ESTALE;
}

/*
 * The upload of @inode's content as @etag succeeded: with no other writer,
 * the file becomes an ordinary copy of that version; otherwise it stays
 * LOCAL, based on it. Called with i_rwsem held.
 */
static int s3cfs_upload_commit(struct inode *inode, const char *etag,
			       bool last_writer)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(inode->i_sb);
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	const struct cred *old_cred;
	unsigned long *old;
	int err;

	/* The base of the next upload, whatever the tag below does. */
	s3cfs_inode_set_etag(inode, etag);
	old_cred = override_creds(sbi->creds);
	err = 0;
	/* What S3 now has, so no lookup needs to ask (posix_meta). */
	if (sbi->opts.posix_meta) {
		struct s3cfs_posix p;

		s3cfs_posix_of(inode, &p);
		err = s3cfs_posix_set(si->lower.dentry, &p);
	}
	if (!err)
		err = s3cfs_meta_tag(inode, last_writer ? 0 : S3CFS_META_LOCAL,
				     i_size_read(inode), etag);
	revert_creds(old_cred);
	if (err)
		return err;
	if (!last_writer)
		return 0;
	/* The lower file holds all of it: present where it has data. */
	down_write(&si->data_sem);
	spin_lock(&si->chunk_lock);
	old = si->present;
	si->present = NULL;
	si->nr_chunks = 0;
	spin_unlock(&si->chunk_lock);
	up_write(&si->data_sem);
	kvfree(old);
	err = s3cfs_chunks_load(inode);
	if (err) {
		/* Still LOCAL here: so on disk too, or the daemon may take it. */
		old_cred = override_creds(sbi->creds);
		if (s3cfs_meta_tag(inode, S3CFS_META_LOCAL, i_size_read(inode),
				   etag))
			s3cfs_pr_d(pr_err, si->lower.dentry,
				   "%*pE: clean on disk but not here after a failed commit (%d)\n",
				   err);
		revert_creds(old_cred);
		return err;
	}
	clear_bit(S3CFS_I_LOCAL, &si->flags);
	/* EVICT may free its blocks from now on. */
	s3cfs_reserve_forget(si);
	return 0;
}

/*
 * The UPLOAD of @size bytes of @inode as @path; a @background one
 * (write-back) goes behind reads a reader waits for. Called with i_rwsem
 * held (the stream it takes) and wb_sem held for writing.
 */
static struct s3cfs_req *s3cfs_upload_req(struct inode *inode,
					  const char *path, loff_t size,
					  bool background)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(inode->i_sb);
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	struct s3cfs_req *req;

	if (s3cfs_daemon_version() < 3)
		return ERR_PTR(s3cfs_daemon_present() ? -EPROTO : -EIO);
	req = s3cfs_req_alloc(sbi, S3CFS_CMD_UPLOAD);
	if (!req)
		return ERR_PTR(-ENOMEM);
	req->path = kstrdup(path, GFP_KERNEL);
	if (!req->path)
		goto nomem;
	req->ino = si->lower_inode->i_ino;
	req->size = size;
	req->prio = background ? S3CFS_PRIO_ASYNC : S3CFS_PRIO_SYNC;
	s3cfs_posix_of(inode, &req->posix);
	if (si->etag[0]) {
		req->up_flags = S3CFS_UP_MATCH;
		req->etag = kstrdup(si->etag, GFP_KERNEL);
		if (!req->etag)
			goto nomem;
	} else {
		req->up_flags = S3CFS_UP_NEW;
	}
	/* Its first parts may be up already (stream.c). */
	s3cfs_stream_take(inode, req, size);
	atomic64_inc(&sbi->stats.uploads);
	return req;
nomem:
	s3cfs_req_put(req);
	return ERR_PTR(-ENOMEM);
}

/*
 * Send @req, an UPLOAD of @inode, and wait for its answer; the new ETag
 * in *@etag. Puts @req. Called with wb_sem held for writing.
 */
static int s3cfs_upload_wait(struct inode *inode, struct s3cfs_req *req,
			     char **etag)
{
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	int err;

	set_bit(S3CFS_I_UPLOADING, &si->flags);
	s3cfs_fault("upload_send");
	err = s3cfs_upcall_req(req);
	clear_bit(S3CFS_I_UPLOADING, &si->flags);
	if (!err && !req->reply_etag)
		err = -EIO;
	if (!err) {
		*etag = req->reply_etag;
		req->reply_etag = NULL;
	}
	s3cfs_req_put(req);
	return err;
}

/*
 * No writer but @file (if it is one and @closing) has @inode open; with
 * no @file, no writer at all.
 */
static bool s3cfs_last_writer(struct inode *inode, struct file *file,
			      bool closing)
{
	int mine = file && closing && (file->f_mode & FMODE_WRITE) ? 1 : 0;

	return atomic_read(&S3CFS_I(inode)->nr_writers) <= mine;
}

/* The UPLOAD's condition failed: the object changed in S3 meanwhile. */
static bool s3cfs_upload_conflicted(int err)
{
	return err == -EEXIST || err == -ESTALE || err == -ENOENT;
}

/*
 * What the answer @err of an UPLOAD of @inode as @path (with @etag, on
 * success) does: a conflict keeps our bytes, a failure is counted and
 * logged (tried again @when), a success is committed, as an ordinary copy
 * if @last_writer. Called with i_rwsem held. Return: as the upload.
 */
static int s3cfs_upload_answer(struct inode *inode, const char *path,
			       int err, const char *etag, bool last_writer,
			       const char *when)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(inode->i_sb);

	if (s3cfs_upload_conflicted(err))
		return s3cfs_upload_conflict(inode, path, err);
	if (err) {
		atomic64_inc(&sbi->stats.upload_errors);
		pr_warn_ratelimited("uploading s3://%*pE/%*pE%*pE: %d; kept here, tried again %s\n",
				    s3cfs_esclen(sbi->bucket), sbi->bucket,
				    s3cfs_esclen(sbi->prefix), sbi->prefix,
				    s3cfs_esclen(path), path, err, when);
		return err;
	}
	err = s3cfs_upload_commit(inode, etag, last_writer);
	if (err)
		pr_err("s3://%*pE/%*pE%*pE uploaded as %*pE, but its cache file could not be tagged (%d)\n",
		       s3cfs_esclen(sbi->bucket), sbi->bucket,
		       s3cfs_esclen(sbi->prefix), sbi->prefix,
		       s3cfs_esclen(path), path, s3cfs_esclen(etag), etag, err);
	return err;
}

/**
 * s3cfs_upload_prepare() - the lower file of a LOCAL @inode made to hold
 *	exactly the file (not yet synced)
 * @inode: upper inode, i_rwsem held
 *
 * Return: 0 or a negative errno (of the writeback, for close or fsync).
 */
int s3cfs_upload_prepare(struct inode *inode)
{
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	int err;

	err = filemap_write_and_wait(inode->i_mapping);
	if (err)
		return err;
	/*
	 * The lower file ends where written back data ends: a hole at the
	 * end (ftruncate up, or a failed lower truncate) is made its size.
	 * Blocks reserved past the end (write.c) are given back the same way
	 * (ext4 and xfs free them at a truncate to the same size).
	 */
	if (i_size_read(d_inode(si->lower.dentry)) != i_size_read(inode) ||
	    si->res_end > i_size_read(inode)) {
		err = s3cfs_truncate_lower(inode, i_size_read(inode));
		if (err)
			return err;
		s3cfs_reserve_forget(si);
	}
	return s3cfs_open_lower(inode);
}

/*
 * s3cfs_upload_inode() with i_rwsem held. Nothing is sent unless the file
 * is LOCAL with changes S3 has not had.
 */
static int s3cfs_upload_locked(struct inode *inode, struct dentry *dentry,
			       struct file *file, bool closing)
{
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	char *buf = NULL, *path, *etag = NULL;
	struct s3cfs_req *req;
	bool dirty = false;
	int err;

	/* Not LOCAL, or unlinked (or renamed over): nothing to upload. */
	if (!s3cfs_inode_local(inode) || !inode->i_nlink)
		return 0;
	if (s3cfs_inode_stale(inode))
		return -ESTALE;
	/*
	 * Cleared before the snapshot: a mapped write from here on sets it
	 * again, and the next close or fsync sends that too.
	 */
	dirty = test_and_clear_bit(S3CFS_I_DIRTY, &si->flags);
	/* Its stream's worker writes back too: done before wb_sem. */
	s3cfs_stream_settle(inode);
	err = s3cfs_upload_prepare(inode);
	if (err)
		goto out;
	/*
	 * On the cache device before the commit tags the file as that
	 * version: a power cut must not leave the tag without the bytes
	 * (ext4 orders no data of blocks overwritten in place, xfs none).
	 */
	err = vfs_fsync(si->lower_file, 0);
	if (err)
		goto out;
	err = s3cfs_inode_path(dentry, &buf, &path);
	if (err)
		goto out;
	if (!dirty) {
		/* Uploaded by an fsync, unchanged since: just commit. */
		if (si->etag[0] && closing &&
		    s3cfs_last_writer(inode, file, closing))
			err = s3cfs_upload_commit(inode, si->etag, true);
		goto out;
	}
	/* No writeback into the lower file while the daemon reads it. */
	down_write(&si->wb_sem);
	req = s3cfs_upload_req(inode, path, i_size_read(inode), false);
	err = PTR_ERR_OR_ZERO(req);
	if (!err)
		err = s3cfs_upload_wait(inode, req, &etag);
	up_write(&si->wb_sem);
	if (!err)
		dirty = false;
	err = s3cfs_upload_answer(inode, path, err, etag,
				  s3cfs_last_writer(inode, file, closing),
				  "at the next close or fsync");
	kfree(etag);
out:
	if (dirty && err)
		set_bit(S3CFS_I_DIRTY, &si->flags);
	if (buf)
		__putname(buf);
	return err;
}

/**
 * s3cfs_upload_inode() - put a LOCAL file's content to S3
 * @inode: upper inode
 * @dentry: a name of it (may be negative: a symlink not yet instantiated)
 * @file: the open file of @inode that asks (close, fsync), or NULL
 * @closing: the last close of @file (->flush), not an fsync; with no
 *	@file, whether the file is committed if no writer has it open
 *
 * Nothing is sent unless the file is LOCAL with changes S3 has not had.
 * An unchanged LOCAL file whose last writer closes is committed as the
 * version it was last uploaded as.
 *
 * Return: 0, -ESTALE (a conflict: see above), or the error of the
 * writeback or the upload (the file stays LOCAL and changed: the next
 * close or fsync tries again).
 */
int s3cfs_upload_inode(struct inode *inode, struct dentry *dentry,
		       struct file *file, bool closing)
{
	int err;

	inode_lock(inode);
	s3cfs_upq_settle(inode);
	err = s3cfs_upload_locked(inode, dentry, file, closing);
	inode_unlock(inode);
	return err;
}

/**
 * s3cfs_upload_acked() - send what a write-back close or fsync acknowledged
 * @inode: upper inode, with S3CFS_I_QUEUED at its acknowledgment; no lock
 *	of it held
 * @dentry: a name of it
 * @sent: filled in when the UPLOAD went out
 *
 * The lower file as it is, and only while it still holds exactly what was
 * acknowledged (S3CFS_I_QUEUED, which writeback into it clears first):
 * writes since then, in the page cache or past it, are the next
 * acknowledgment's, never half of them in S3. Nothing is written back
 * here.
 *
 * The UPLOAD is made under i_rwsem and wb_sem (the path, the condition,
 * the stream), and sent under wb_sem alone: writes go on into the page
 * cache meanwhile, and whatever would change the lower file or the name
 * waits for the answer (s3cfs_upq_settle()). The answer is left in
 * @up_sent for the caller (or whoever takes i_rwsem first) to apply
 * with s3cfs_upload_acked_answer().
 *
 * Return: -EINPROGRESS (sent: @sent holds the answer), 0 (nothing to
 * upload: not LOCAL, or unlinked), -EAGAIN (changed since its
 * acknowledgment: the next one queues it again), -ESTALE (a conflict
 * came first), or another negative errno (nothing was sent).
 */
int s3cfs_upload_acked(struct inode *inode, struct dentry *dentry,
		       struct s3cfs_upload_sent *sent)
{
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	struct s3cfs_req *req;
	char *buf = NULL, *path;
	int err = 0;

	inode_lock(inode);
	if (!s3cfs_inode_local(inode) || !inode->i_nlink)
		goto out;
	err = -ESTALE;
	if (s3cfs_inode_stale(inode))
		goto out;
	/* The commit reads the lower extent map through it. */
	err = s3cfs_open_lower(inode) ?: s3cfs_inode_path(dentry, &buf, &path);
	if (err)
		goto out;
	sent->path = kstrdup(path, GFP_KERNEL);
	err = -ENOMEM;
	if (!sent->path)
		goto out;
	s3cfs_stream_settle(inode);
	/* No writeback into the lower file from here to the answer. */
	down_write(&si->wb_sem);
	err = -EAGAIN;
	if (!test_bit(S3CFS_I_QUEUED, &si->flags))
		goto out_wb;
	/* Cleared first: a mapped write from now on sets it again. */
	clear_bit(S3CFS_I_DIRTY, &si->flags);
	sent->unchanged = s3cfs_upq_unchanged(inode);
	req = s3cfs_upload_req(inode, sent->path,
			       i_size_read(d_inode(si->lower.dentry)), true);
	err = PTR_ERR_OR_ZERO(req);
	/* Changes S3 will not have from this upload. */
	if (err || !sent->unchanged)
		set_bit(S3CFS_I_DIRTY, &si->flags);
	if (err)
		goto out_wb;
	inode_unlock(inode);
	sent->err = s3cfs_upload_wait(inode, req, &sent->etag);
	si->up_sent = sent;
	up_write(&si->wb_sem);
	__putname(buf);
	return -EINPROGRESS;
out_wb:
	up_write(&si->wb_sem);
out:
	inode_unlock(inode);
	if (buf)
		__putname(buf);
	return err;
}

/**
 * s3cfs_upload_acked_answer() - what the answer of a queued upload does
 * @inode: upper inode, i_rwsem held
 * @sent: what s3cfs_upload_acked() sent, and its answer
 *
 * A conflict keeps our bytes; a success is committed, as an ordinary copy
 * only if nothing changed from the acknowledgment to now and no writer
 * has the file open; otherwise the file stays LOCAL (and changed), based
 * on the new version.
 *
 * Return: 0, -ESTALE (a conflict), or the upload's or the commit's error.
 */
int s3cfs_upload_acked_answer(struct inode *inode,
			      struct s3cfs_upload_sent *sent)
{
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	bool unchanged;
	int err;

	lockdep_assert_held(&inode->i_rwsem);
	/* Written to or truncated since the send? */
	unchanged = sent->unchanged && !test_bit(S3CFS_I_DIRTY, &si->flags) &&
		    s3cfs_upq_unchanged(inode);
	if (sent->err && !s3cfs_upload_conflicted(sent->err))
		unchanged = false;
	err = s3cfs_upload_answer(inode, sent->path, sent->err, sent->etag,
				  unchanged &&
				  s3cfs_last_writer(inode, NULL, true), "later");
	if (!unchanged)
		set_bit(S3CFS_I_DIRTY, &si->flags);
	return err;
}

/**
 * s3cfs_upload_state() - where @inode's content stands against S3
 * @inode: upper inode
 * @st: filled in (S3CFS_IOC_STATE)
 *
 * A snapshot without locks: each flag was true at some moment of the call.
 *
 * Return: 0, or -EINVAL if @inode is not a regular file.
 */
int s3cfs_upload_state(struct inode *inode, struct s3cfs_ioc_state *st)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(inode->i_sb);
	struct s3cfs_inode_info *si = S3CFS_I(inode);

	memset(st, 0, sizeof(*st));
	if (!S_ISREG(inode->i_mode))
		return -EINVAL;
	if (s3cfs_inode_local(inode)) {
		st->flags |= S3CFS_STATE_LOCAL;
		if (test_bit(S3CFS_I_DIRTY, &si->flags) ||
		    mapping_tagged(inode->i_mapping, PAGECACHE_TAG_DIRTY))
			st->flags |= S3CFS_STATE_DIRTY;
	}
	if (test_bit(S3CFS_I_UPLOADING, &si->flags))
		st->flags |= S3CFS_STATE_UPLOADING;
	if (test_bit(S3CFS_I_QUEUED, &si->flags))
		st->flags |= S3CFS_STATE_QUEUED;
	spin_lock(&sbi->upq.lock);
	if (!list_empty(&si->up_link)) {
		st->tries = si->up_tries;
		st->queued_ms = jiffies_to_msecs(jiffies - si->up_since);
	}
	spin_unlock(&sbi->upq.lock);
	return 0;
}

/*
 * What a close or fsync of @inode does, i_rwsem held: in write-back mode a
 * LOCAL file with changes is made durable here and queued (upqueue.c),
 * otherwise it is uploaded now (s3cfs_upload_locked()).
 */
static int s3cfs_upload_or_ack(struct inode *inode, struct dentry *dentry,
			       struct file *file, bool closing)
{
	if (S3CFS_SB(inode->i_sb)->opts.writeback &&
	    s3cfs_inode_local(inode) && inode->i_nlink &&
	    !s3cfs_inode_stale(inode) &&
	    test_bit(S3CFS_I_DIRTY, &S3CFS_I(inode)->flags))
		return s3cfs_upq_ack(inode, dentry);
	return s3cfs_upload_locked(inode, dentry, file, closing);
}

/**
 * s3cfs_upload_created() - a file created here and not yet in S3 made to
 *	exist there (in write-back mode: recorded on the cache device), as
 *	an fsync of it would; for an fsync of its directory
 * @inode: upper inode of a regular file
 * @dentry: its name
 *
 * Return: as s3cfs_upload(); 0 if S3 has had a version of the file
 * meanwhile, it is already recorded, or it is no longer the name's (a
 * conflict made it stale: its fsync or close said so).
 */
int s3cfs_upload_created(struct inode *inode, struct dentry *dentry)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(inode->i_sb);
	struct s3cfs_inode_info *si = S3CFS_I(inode);
	int err = 0;

	inode_lock(inode);
	s3cfs_upq_settle(inode);
	if (s3cfs_inode_local(inode) && inode->i_nlink && !si->etag[0] &&
	    !s3cfs_inode_stale(inode) && !test_bit(S3CFS_I_QUEUED, &si->flags))
		err = s3cfs_upload_or_ack(inode, dentry, NULL, true);
	inode_unlock(inode);
	if (sbi->opts.writeback)
		s3cfs_upq_throttle(sbi);
	return err;
}

/**
 * s3cfs_upload_truncated() - a LOCAL file that truncate(2) changed and no
 *	writer has open sent to S3 (in write-back mode: acknowledged), as
 *	the close of a writer would
 * @inode: upper inode of a regular file, i_rwsem held
 * @dentry: its name
 *
 * Return: as s3cfs_upload().
 */
int s3cfs_upload_truncated(struct inode *inode, struct dentry *dentry)
{
	lockdep_assert_held(&inode->i_rwsem);
	return s3cfs_upload_or_ack(inode, dentry, NULL, true);
}

/**
 * s3cfs_upload() - put a LOCAL file's content to S3 (close, fsync)
 * @file: an open file of the inode
 * @closing: the last close of @file (->flush), not an fsync
 *
 * Return: as s3cfs_upload_inode().
 */
int s3cfs_upload(struct file *file, bool closing)
{
	struct inode *inode = file_inode(file);
	int err;

	/*
	 * Write-back, and nothing changed since the last acknowledgment (an
	 * fsync's, before this close): it holds, and the lock the queued
	 * upload of the file may be holding is not waited for.
	 */
	if (S3CFS_SB(inode->i_sb)->opts.writeback && s3cfs_upq_unchanged(inode))
		return 0;
	inode_lock(inode);
	/* A queued upload sent meanwhile: its answer first. */
	s3cfs_upq_settle(inode);
	err = s3cfs_upload_or_ack(inode, file->f_path.dentry, file, closing);
	inode_unlock(inode);
	if (S3CFS_SB(inode->i_sb)->opts.writeback)
		s3cfs_upq_throttle(S3CFS_SB(inode->i_sb));
	return err;
}
