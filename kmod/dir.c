// SPDX-License-Identifier: GPL-2.0
/*
 * s3cachefs: reading directories.
 *
 * A directory is listed by the daemon into the lower directory (LIST) when
 * its listing is older than meta_ttl, at the start of a readdir; then the
 * lower directory is iterated and passed up, minus the names we hide. With
 * no daemon registered, the lower directory is served as it is, as lookups
 * serve the entries already in the cache: a readdir does not wait out the
 * fetch timeout for a daemon that is not there.
 *
 * A listing is streamed: the daemon reports how much of the listing's log
 * it has written (the names applied so far, in order), and the readdir
 * that sent the LIST passes those up while later pages are on their way,
 * rather than after the last one. Its positions are then offsets in that
 * log, which only grows, so none is skipped or repeated; the lower
 * directory's own (hash order) could not be used while it grows. When the
 * open directory is closed before the end, the listing is cancelled.
 *
 * On a mount with dir_index, a directory whose listing is fresh is read
 * from its index (the last listing's log, kept: index.c), and an object
 * with no lower file gets its dentry as it is passed up.
 */
#include "s3cachefs.h"
#include <linux/namei.h>

/**
 * struct s3cfs_dir_file - an open directory
 * @lower: the lower directory, opened with the mount's credentials
 * @list: the LIST this open's readdir sent and streams; NULL: none
 * @log: @list's log (S3CFS_LISTING_DIR), once open, or with no @list
 *	the directory's index: positions are then 0 and 1 for "." and "..",
 *	and offsets in it plus two, until a readdir from 0 after the
 *	listing's end
 * @log_ino: @log's inode number, as the daemon reported it
 * @index_len: with no @list, the bytes of @log's records
 * @index_at: ... when its listing was taken (jiffies)
 * @next: the offset in @log this open's last readdir stopped at
 * @marks: record boundaries of @log seen by this open: @marks[i] is one
 *	in [i, i + 1) * S3CFS_DIR_MARK bytes, or U64_MAX (none seen)
 * @nr_marks: entries of @marks
 *
 * A position in @log given to lseek (seekdir) must be a record boundary:
 * one read at an offset inside a record would pass up names made of
 * pieces of other records, and make their dentries. A position other
 * than @next is checked by walking the records from the nearest mark
 * below it (at most S3CFS_DIR_MARK bytes and a record for a position
 * this open has passed), s3cfs_dir_log_check().
 */
struct s3cfs_dir_file {
	struct file *lower;
	struct s3cfs_req *list;
	struct file *log;
	u64 log_ino;
	u64 index_len;
	unsigned long index_at;
	u64 next;
	u64 *marks;
	unsigned int nr_marks;
};

#define S3CFS_DIR_MARK_SHIFT	16
#define S3CFS_LOG_READ	PAGE_SIZE

/* @df->log is another file now (or none): its positions are unknown. */
static void s3cfs_dir_log_reset(struct s3cfs_dir_file *df)
{
	kfree(df->marks);
	df->marks = NULL;
	df->nr_marks = 0;
	df->next = 0;
}

/* Remember that @off is a record boundary of @df->log. */
static void s3cfs_dir_mark(struct s3cfs_dir_file *df, u64 off)
{
	u64 i = off >> S3CFS_DIR_MARK_SHIFT;
	unsigned int n;
	u64 *marks;

	if (i < df->nr_marks) {
		if (df->marks[i] == U64_MAX)
			df->marks[i] = off;
		return;
	}
	if (i >= UINT_MAX / 2)
		return;
	n = max_t(unsigned int, i + 1, 2 * df->nr_marks);
	marks = krealloc_array(df->marks, n, sizeof(*marks), GFP_KERNEL);
	if (!marks)
		return;	/* a check walks from further back */
	memset(marks + df->nr_marks, 0xff,
	       (n - df->nr_marks) * sizeof(*marks));
	marks[i] = off;
	df->marks = marks;
	df->nr_marks = n;
}

/*
 * Is @want a record boundary of @df->log (whose first @valid bytes are
 * whole records)? Walk the records' headers from the nearest known
 * boundary below it. Return: 0, or -EINVAL (not a position of ours),
 * -EIO (the log cannot be read), -ENOMEM.
 */
static int s3cfs_dir_log_check(struct s3cfs_dir_file *df, u64 want, u64 valid)
{
	u64 i = want >> S3CFS_DIR_MARK_SHIFT, off = 0;
	struct s3cfs_list_rec rec;
	char *buf;
	int err = -EINVAL;

	if (want == df->next || !want)
		return 0;
	if (want > valid || want % S3CFS_LIST_REC_ALIGN)
		return -EINVAL;
	for (i = min_t(u64, i + 1, df->nr_marks); i-- > 0;) {
		if (df->marks[i] <= want) {
			off = df->marks[i];
			break;
		}
	}
	buf = kmalloc(S3CFS_LOG_READ, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	while (off < want) {
		loff_t pos = off;
		size_t used = 0;
		ssize_t n;

		n = kernel_read(df->log, buf,
				min_t(u64, valid - off, S3CFS_LOG_READ), &pos);
		if (n < (ssize_t)sizeof(rec)) {
			err = -EIO;
			break;
		}
		/* The headers in this piece; a record may end past it. */
		while (off < want && n - used >= sizeof(rec)) {
			memcpy(&rec, buf + used, sizeof(rec));
			if (!rec.namelen || rec.namelen > NAME_MAX) {
				err = -EIO;
				goto out;
			}
			off += ALIGN(sizeof(rec) + rec.namelen + rec.metalen,
				     S3CFS_LIST_REC_ALIGN);
			used = off - (u64)(pos - n);
			s3cfs_dir_mark(df, off);
			if (used > n)
				break;
		}
	}
	if (off == want)
		err = 0;
out:
	kfree(buf);
	return err;
}

/**
 * struct s3cfs_dir_ctx - iterating the lower directory for an upper readdir
 * @ctx: what the lower filesystem fills
 * @caller: the upper readdir's context
 * @in_root: the directory is the mount's root
 * @posix: a posix_meta mount: a file may be a symlink (posix.c)
 * @dentry: the directory
 * @index: a dir_index mount: log records may be objects with no lower file
 */
struct s3cfs_dir_ctx {
	struct dir_context ctx;
	struct dir_context *caller;
	bool in_root;
	bool posix;
	struct dentry *dentry;
	bool index;
};

/* Is this lower entry shown, and as what type? */
static bool s3cfs_dir_shown(const struct s3cfs_dir_ctx *dc, const char *name,
			    int namelen, unsigned int *d_type)
{
	if (s3cfs_name_hidden(dc->in_root, name, namelen))
		return false;
	if (*d_type != DT_DIR && *d_type != DT_REG && *d_type != DT_UNKNOWN)
		return false;
	/* Which files are symlinks only their lookup says (find -type l). */
	if (dc->posix && *d_type == DT_REG)
		*d_type = DT_UNKNOWN;
	return true;
}

static bool s3cfs_filldir(struct dir_context *ctx, const char *name,
			  int namelen, loff_t offset, u64 ino,
			  unsigned int d_type)
{
	struct s3cfs_dir_ctx *dc = container_of(ctx, struct s3cfs_dir_ctx, ctx);

	if (!s3cfs_dir_shown(dc, name, namelen, &d_type))
		return true;
	return dc->caller->actor(dc->caller, name, namelen, offset, ino,
				 d_type);
}

/*
 * Send a LIST for the directory if its listing is stale (or, @force, in
 * any case): @df->list.
 */
static int s3cfs_dir_list(struct file *file, struct s3cfs_dir_file *df,
			  bool force)
{
	struct inode *dir = file_inode(file);
	struct s3cfs_sb_info *sbi = S3CFS_SB(dir->i_sb);
	const struct cred *old_cred;
	struct s3cfs_req *req;
	char *buf, *path;
	bool fresh;
	int err;

	old_cred = override_creds(sbi->creds);
	fresh = !force && s3cfs_dir_listed_fresh(dir);
	revert_creds(old_cred);
	if (fresh)
		return 0;
	if (!s3cfs_daemon_present()) {
		s3cfs_pr_d(pr_debug, file->f_path.dentry,
			   "listing %*pE from the cache: no daemon\n");
		return 0;
	}

	err = s3cfs_inode_path(file->f_path.dentry, &buf, &path);
	if (err)
		return err;
	req = s3cfs_req_alloc(sbi, S3CFS_CMD_LIST);
	if (req)
		req->path = kstrdup(path, GFP_KERNEL);
	__putname(buf);
	if (!req || !req->path) {
		if (req)
			s3cfs_req_put(req);
		return -ENOMEM;
	}
	atomic64_inc(&sbi->stats.lists);
	err = s3cfs_req_submit(req, false);
	if (err) {
		s3cfs_req_put(req);
		return err;
	}
	df->list = req;
	return 0;
}

static bool s3cfs_list_grown(struct s3cfs_req *req, void *arg)
{
	return READ_ONCE(req->list_done) > *(u64 *)arg;
}

/*
 * Wait until @req's log holds more than @have bytes (U64_MAX: until its
 * answer), at most the fetch timeout from now or from the last progress.
 * Return: 0 (grown or answered: look), or -errno.
 */
static int s3cfs_dir_list_wait(struct s3cfs_req *req, u64 have)
{
	struct s3cfs_sb_info *sbi = req->sbi;
	unsigned long timeout =
		msecs_to_jiffies(READ_ONCE(sbi->opts.fetch_timeout_ms));
	int err;

	atomic_inc(&req->waiters);
	err = s3cfs_req_wait(req, jiffies + timeout, timeout,
			     have == U64_MAX ? NULL : s3cfs_list_grown, &have);
	if (err == -ETIMEDOUT || err == -ECANCELED)
		err = -EIO;
	return err;
}

/* The bytes of @df->log that are whole records, as reported. */
static u64 s3cfs_dir_log_valid(struct s3cfs_dir_file *df)
{
	u64 valid;

	if (!df->list)
		return df->index_len;
	spin_lock(&df->list->wait.lock);
	valid = df->list->list_done;
	spin_unlock(&df->list->wait.lock);
	return valid;
}

/* Stop streaming @df's LIST; unanswered, nobody else waits for it. */
static void s3cfs_dir_stream_end(struct s3cfs_dir_file *df)
{
	if (df->log)
		fput(df->log);
	df->log = NULL;
	s3cfs_dir_log_reset(df);
	if (df->list) {
		s3cfs_req_abandon(df->list);
		s3cfs_req_put(df->list);
	}
	df->list = NULL;
}

/* @df's LIST was answered: the directory is listed, if it succeeded. */
static int s3cfs_dir_list_answered(struct file *file,
				   struct s3cfs_dir_file *df)
{
	int status;

	/* DONE is set before the status is: the completion comes after. */
	wait_for_completion(&df->list->done);
	status = df->list->status;
	/* Read from a log its answer does not vouch for: read it again. */
	if (!status && df->log && !df->list->list_whole) {
		s3cfs_pr_d(pr_warn_ratelimited, file->f_path.dentry,
			   "listing %*pE: its log was cut short; read the directory again\n");
		status = -EIO;
	}

	if (!status)
		WRITE_ONCE(S3CFS_I(file_inode(file))->listed_at, jiffies ? : 1);
	/* Given up (a wait timed out), or expired: as s3cfs_upcall_req(). */
	if (status == -ETIMEDOUT || status == -ECANCELED)
		status = -EIO;
	return status;
}

/**
 * s3cfs_list_log_open() - open a listing's log, or a directory's index
 * @sbi: the mount
 * @ldir: the lower directory
 * @ino: the log's inode number, as the daemon gave it
 *
 * Return: the log, or an ERR_PTR (-ESTALE: another listing's).
 */
struct file *s3cfs_list_log_open(struct s3cfs_sb_info *sbi, struct inode *ldir,
				 u64 ino)
{
	char name[sizeof(S3CFS_LISTING_DIR) + 24];
	const struct cred *old_cred;
	struct file *log;

	snprintf(name, sizeof(name), S3CFS_LISTING_DIR "/%lu", ldir->i_ino);
	old_cred = override_creds(sbi->creds);
	log = file_open_root(&sbi->lower_root, name,
			     O_RDONLY | O_LARGEFILE | O_NOFOLLOW | O_NOATIME, 0);
	revert_creds(old_cred);
	if (!IS_ERR(log) && file_inode(log)->i_ino != ino) {
		/* Another listing's (a daemon that started over). */
		fput(log);
		log = ERR_PTR(-ESTALE);
	}
	return log;
}

/* Read the log @ino of @df's directory from now on. Return: 0 or -errno. */
static int s3cfs_dir_log_take(struct file *file, struct s3cfs_dir_file *df,
			      u64 ino)
{
	struct file *log;

	log = s3cfs_list_log_open(S3CFS_SB(file_inode(file)->i_sb),
				  file_inode(df->lower), ino);
	if (IS_ERR(log))
		return PTR_ERR(log);
	df->log = log;
	df->log_ino = ino;
	s3cfs_dir_log_reset(df);
	return 0;
}

/* Open the log @df->list reports now, or wait for the listing's end. */
static int s3cfs_dir_stream_reopen(struct file *file, struct s3cfs_dir_file *df)
{
	struct s3cfs_req *req = df->list;
	u64 ino;
	int err;

	spin_lock(&req->wait.lock);
	ino = req->list_ino;
	spin_unlock(&req->wait.lock);
	err = s3cfs_dir_log_take(file, df, ino);
	if (err) {
		s3cfs_pr_d(pr_debug, file->f_path.dentry,
			   "listing %*pE: no log (%d): waiting for its end\n", err);
		err = s3cfs_dir_list_wait(req, U64_MAX);
		return err ?: s3cfs_dir_list_answered(file, df);
	}
	atomic64_inc(&S3CFS_SB(file_inode(file)->i_sb)->stats.lists_streamed);
	return 0;
}

/*
 * A readdir from the start sent a LIST: wait for its first entries and
 * read them from its log, or for its answer (a daemon before protocol 6,
 * a listing too short to report, a log we cannot open) and read the lower
 * directory as before.
 */
static int s3cfs_dir_stream_begin(struct file *file, struct s3cfs_dir_file *df)
{
	struct s3cfs_req *req = df->list;
	int err;

	err = s3cfs_dir_list_wait(req, 0);
	if (err)
		return err;
	s3cfs_fault("list_begin");
	if (test_bit(S3CFS_REQ_DONE, &req->flags)) {
		err = s3cfs_dir_list_answered(file, df);
		/*
		 * Answered before any report: on a dir_index mount its log,
		 * kept as the index, holds the objects (whatever meta_ttl).
		 */
		if (!err && req->sbi->index && req->list_whole && req->list_ino)
			s3cfs_dir_log_take(file, df, req->list_ino);
		return err;
	}
	return s3cfs_dir_stream_reopen(file, df);
}

/*
 * Pass up the whole records in @buf (@len bytes, read from log offset
 * @off), advancing the position past each, and make the dentries of the
 * objects with no lower file, as of @at; *@emitted counts those passed
 * up, *@full says the caller's buffer is full. Return: bytes consumed, or
 * -EIO for a record that cannot be one (a log we did not expect).
 */
static ssize_t s3cfs_dir_emit_log(struct s3cfs_dir_ctx *dc,
				  struct s3cfs_dir_file *df, const char *buf,
				  size_t len, u64 off, unsigned long at,
				  unsigned int *emitted, bool *full)
{
	struct dir_context *ctx = dc->caller;
	size_t used = 0;

	while (len - used >= sizeof(struct s3cfs_list_rec)) {
		const struct s3cfs_list_rec *rec = (const void *)(buf + used);
		const char *name = (const char *)(rec + 1);
		size_t n = rec->namelen, mlen = rec->metalen;
		size_t total = ALIGN(sizeof(*rec) + n + mlen,
				     S3CFS_LIST_REC_ALIGN);
		unsigned int type = rec->type;
		u64 ino = rec->ino;

		if (!n || n > NAME_MAX || (type != DT_REG && type != DT_DIR))
			return -EIO;
		/* No lower file: an object an index mount's listing left. */
		if (!ino && (!dc->index || type != DT_REG || !mlen))
			return -EIO;
		if (total > len - used)
			break;	/* the rest is in the next read */
		if (memchr(name, '/', n) || memchr(name, '\0', n))
			return -EIO;
		if (s3cfs_dir_shown(dc, name, n, &type)) {
			if (!ino) {
				ino = s3cfs_listed_ino(d_inode(dc->dentry),
						       name, n);
				s3cfs_index_prime(dc->dentry, name, n,
						  (const u8 *)name + n, mlen,
						  ino, at);
			}
			if (!dir_emit(ctx, name, n, ino, type)) {
				*full = true;
				break;
			}
			(*emitted)++;
		}
		used += total;
		ctx->pos = off + used + 2;
		s3cfs_dir_mark(df, off + used);
	}
	return used;
}

/*
 * A readdir while (or after) the LIST it streams runs: the log's records
 * up to what the daemon reported; when there are none yet, wait for more
 * or for the listing's end, which is the directory's end. With no LIST,
 * the directory's index: all of its records.
 */
static int s3cfs_dir_iterate_log(struct file *file, struct s3cfs_dir_file *df,
				 struct s3cfs_dir_ctx *dc)
{
	struct dir_context *ctx = dc->caller;
	struct s3cfs_req *req = df->list;
	unsigned int emitted = 0;
	bool full = false;
	char *buf;
	int err = 0;

	if (!dir_emit_dots(file, ctx))
		return 0;
	buf = kmalloc(S3CFS_LOG_READ, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	/* A position lseek set: a record boundary (checked there too). */
	err = s3cfs_dir_log_check(df, ctx->pos - 2, s3cfs_dir_log_valid(df));
	while (!err && !full) {
		bool done = !req || test_bit(S3CFS_REQ_DONE, &req->flags);
		u64 valid, ino, off = ctx->pos - 2;
		unsigned long at = req ? jiffies : df->index_at;
		loff_t pos = off;
		ssize_t n;

		/* A LIST answered has reported its whole log before. */
		smp_rmb();
		if (req) {
			spin_lock(&req->wait.lock);
			valid = req->list_done;
			ino = req->list_ino;
			spin_unlock(&req->wait.lock);
		} else {
			/* The directory's index: whole. */
			valid = df->index_len;
			ino = df->log_ino;
		}
		if (ino != df->log_ino) {
			s3cfs_pr_d(pr_warn_ratelimited, file->f_path.dentry,
				   "listing %*pE: started over by a new daemon; read the directory again\n");
			err = -EIO;
			break;
		}
		if (off > valid || off % S3CFS_LIST_REC_ALIGN) {
			err = -EINVAL;	/* not a position of ours */
			break;
		}
		if (off < valid) {
			n = kernel_read(df->log, buf,
					min_t(u64, valid - off, S3CFS_LOG_READ),
					&pos);
			if (n > 0)
				n = s3cfs_dir_emit_log(dc, df, buf, n, off, at,
						       &emitted, &full);
			if (n <= 0 && !full) {
				s3cfs_pr_d(pr_warn_ratelimited, file->f_path.dentry,
					   "listing %*pE: its log cannot be read at %llu (%zd)\n",
					   off, n);
				err = -EIO;
				break;
			}
			continue;
		}
		if (done) {
			if (req)
				err = s3cfs_dir_list_answered(file, df);
			break;
		}
		if (emitted)
			break;	/* what there is now; more at the next call */
		err = s3cfs_dir_list_wait(req, valid);
		if (err)
			break;
	}
	kfree(buf);
	df->next = ctx->pos - 2;
	return err;
}

/*
 * Send a LIST if the listing is stale (or, @force, in any case) and start
 * reading it; *@listed: one was sent. Return: 0 (@df->log: its log; none:
 * read the lower directory, or the index), or -errno.
 */
static int s3cfs_dir_begin(struct file *file, struct s3cfs_dir_file *df,
			   bool force, bool *listed)
{
	int err;

	err = s3cfs_dir_list(file, df, force);
	*listed = df->list;
	if (!err && df->list)
		err = s3cfs_dir_stream_begin(file, df);
	if (err) {
		s3cfs_dir_stream_end(df);
		s3cfs_pr_d(pr_warn_ratelimited, file->f_path.dentry,
			   "listing %*pE failed (%d)\n", err);
		return err;
	}
	/* Listed, and no log to read: the lower directory or the index. */
	if (!df->log)
		s3cfs_dir_stream_end(df);
	return 0;
}

/*
 * A dir_index mount, and no log to read: open the directory's index into
 * @df (with no daemon, however old: the cache as it is). Without one, the
 * lower directory serves only if it holds a whole listing (or there is no
 * daemon to ask); otherwise list it now (once: @listed says this readdir
 * already did).
 */
static int s3cfs_dir_index_begin(struct file *file, struct s3cfs_dir_file *df,
				 bool listed)
{
	struct inode *dir = file_inode(file);
	struct file *f;
	unsigned long at;
	u64 len;
	int err;

	/* A LIST answered with no log to read is done with. */
	s3cfs_dir_stream_end(df);
	f = s3cfs_index_open(dir, &len, &at, !s3cfs_daemon_present());
	if (!IS_ERR(f)) {
		df->log = f;
		df->log_ino = file_inode(f)->i_ino;
		df->index_len = len;
		df->index_at = at;
		s3cfs_dir_log_reset(df);
		return 0;
	}
	if (s3cfs_dir_lower_listed(dir) || !s3cfs_daemon_present())
		return 0;
	if (listed) {
		s3cfs_pr_d(pr_warn_ratelimited, file->f_path.dentry,
			   "listing %*pE left no index (%ld)\n", PTR_ERR(f));
		return -EIO;
	}
	err = s3cfs_dir_begin(file, df, true, &listed);
	if (err || df->log)
		return err;
	return s3cfs_dir_index_begin(file, df, true);
}

static int s3cfs_iterate(struct file *file, struct dir_context *ctx)
{
	struct inode *dir = file_inode(file);
	struct s3cfs_sb_info *sbi = S3CFS_SB(dir->i_sb);
	struct s3cfs_dir_file *df = file->private_data;
	struct s3cfs_dir_ctx dc = {
		.ctx.actor = s3cfs_filldir,
		.caller = ctx,
		.in_root = IS_ROOT(file->f_path.dentry),
		.posix = sbi->opts.posix_meta,
		.dentry = file->f_path.dentry,
		.index = sbi->index,
	};
	const struct cred *old_cred;
	bool streaming = df->log && df->list &&
			 !test_bit(S3CFS_REQ_DONE, &df->list->flags);
	bool listed;
	int err;

	/* From the start: of the listing still running, or a new look. */
	if (ctx->pos == 0 && streaming &&
	    READ_ONCE(df->list->list_ino) != df->log_ino) {
		/* A new daemon lists it again, into a new log: read that. */
		fput(df->log);
		df->log = NULL;
		s3cfs_dir_log_reset(df);
		err = s3cfs_dir_stream_reopen(file, df);
		if (!err && !df->log && sbi->index)
			err = s3cfs_dir_index_begin(file, df, true);
		if (err)
			return err;
	} else if (ctx->pos == 0 && !streaming) {
		s3cfs_dir_stream_end(df);
		err = s3cfs_dir_begin(file, df, false, &listed);
		if (!err && !df->log && sbi->index)
			err = s3cfs_dir_index_begin(file, df, listed);
		if (err)
			return err;
	}
	if (df->log)
		return s3cfs_dir_iterate_log(file, df, &dc);

	df->lower->f_pos = ctx->pos;
	old_cred = override_creds(sbi->creds);
	err = iterate_dir(df->lower, &dc.ctx);
	revert_creds(old_cred);
	ctx->pos = df->lower->f_pos;
	return err;
}

static int s3cfs_dir_open(struct inode *inode, struct file *file)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(inode->i_sb);
	struct s3cfs_dir_file *df;
	struct file *lower;

	df = kzalloc(sizeof(*df), GFP_KERNEL);
	if (!df)
		return -ENOMEM;
	lower = dentry_open(&S3CFS_I(inode)->lower, O_RDONLY | O_DIRECTORY |
			    O_NOATIME, sbi->creds);
	if (IS_ERR(lower)) {
		kfree(df);
		return PTR_ERR(lower);
	}
	df->lower = lower;
	file->private_data = df;
	return 0;
}

static int s3cfs_dir_release(struct inode *inode, struct file *file)
{
	struct s3cfs_dir_file *df = file->private_data;

	/* A listing nobody reads any more stops (an interrupted ls). */
	s3cfs_dir_stream_end(df);
	fput(df->lower);
	kfree(df);
	return 0;
}

/*
 * Positions are the lower filesystem's (ext4 htree hashes, xfs offsets),
 * or, while a listing is streamed or an index read, offsets of records
 * in its log plus two: only those (s3cfs_dir_log_check()).
 */
static loff_t s3cfs_dir_llseek(struct file *file, loff_t offset, int whence)
{
	struct s3cfs_dir_file *df = file->private_data;
	loff_t ret;

	if (df->log) {
		if (whence == SEEK_CUR && !offset)
			return file->f_pos;
		if (whence != SEEK_SET || offset < 0)
			return -EINVAL;
		if (offset > 2) {
			ret = s3cfs_dir_log_check(df, offset - 2,
						  s3cfs_dir_log_valid(df));
			if (ret)
				return ret == -EINVAL ? ret : -EIO;
		}
		file->f_pos = offset;
		return offset;
	}
	ret = vfs_llseek(df->lower, offset, whence);
	if (ret >= 0)
		file->f_pos = ret;
	return ret;
}

/*
 * fsync(2) of a directory: its entries durable, as on ext4 (dirops.c);
 * in write-back mode the lower directory's too.
 */
static int s3cfs_dir_fsync(struct file *file, loff_t start, loff_t end,
			   int datasync)
{
	struct s3cfs_sb_info *sbi = S3CFS_SB(file_inode(file)->i_sb);
	struct s3cfs_dir_file *df = file->private_data;
	int err;

	if (!sbi->opts.writable)
		return 0;
	err = s3cfs_sync_created(file->f_path.dentry);
	if (sbi->opts.writeback) {
		int e = vfs_fsync(df->lower, datasync);

		err = err ?: e;
	}
	return err;
}

const struct file_operations s3cfs_dir_fops = {
	.open		= s3cfs_dir_open,
	.release	= s3cfs_dir_release,
	.iterate_shared	= s3cfs_iterate,
	.llseek		= s3cfs_dir_llseek,
	.read		= generic_read_dir,
	.fsync		= s3cfs_dir_fsync,
	.unlocked_ioctl	= s3cfs_ioctl,
};
