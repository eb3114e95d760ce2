/* SPDX-License-Identifier: GPL-2.0 */
/*
 * s3cachefs: private header of the kernel module.
 *
 * Layers: an upper (s3cachefs) inode/dentry pairs with a lower one in the
 * cache directory; the upper inode owns the page cache, filled from the
 * lower file with direct I/O; chunks missing in the lower file are fetched
 * by the daemon (upcall.c, netlink.c).
 */
#ifndef _S3CFS_H
#define _S3CFS_H

#undef pr_fmt
#define pr_fmt(fmt) "s3cachefs: " fmt

#include <linux/fs.h>
#include <linux/fs_context.h>
#include <linux/fs_parser.h>
#include <linux/path.h>
#include <linux/cred.h>
#include <linux/kobject.h>
#include <linux/completion.h>
#include <linux/rwsem.h>
#include <linux/spinlock.h>
#include <linux/list.h>
#include <linux/refcount.h>
#include <linux/atomic.h>
#include <linux/workqueue.h>
#include "compat.h"
#include "uapi/s3cachefs.h"

#define S3CFS_MAGIC		0x53334346	/* "S3CF" */

/*
 * Most chunks a file may have: its presence bitmap is at most 16 MiB, and
 * bitmap_set() counts in unsigned int. At the smallest chunk (64 KiB) this
 * is 8 TiB, above S3's largest object (5 TiB); a bigger size is refused
 * (EFBIG) rather than allocated.
 */
#define S3CFS_CHUNKS_MAX	BIT_ULL(27)

/*
 * S3's limits on what we write: an object of at most 5 TiB (the size a
 * writable mount's files may reach: s_maxbytes), a key of at most 1024
 * bytes (the mount's prefix, the path and, for a directory's marker, the
 * '/').
 */
#define S3CFS_OBJECT_MAX	(5ULL << 40)
#define S3CFS_KEY_MAX		1024

/* Upcall latency histogram: bucket i counts fetches under 2^i ms. */
#define S3CFS_LAT_BUCKETS	16

/**
 * struct s3cfs_stats - per-mount counters, shown in sysfs
 * @chunk_hits: chunks read from the lower file without a fetch
 * @chunk_misses: chunks a reader found missing and waited for
 * @fetches: FETCH upcalls sent
 * @fetch_bytes: bytes requested by successful FETCHes
 * @fetch_errors: FETCHes that ended in an error (timeouts included)
 * @fetch_timeouts: waits that gave up after fetch_timeout_ms
 * @lookups: LOOKUP upcalls sent
 * @lookups_indexed: ... of them answered from a directory's index
 * @primed: dentries a readdir made from a directory's index (index.c)
 * @lists: LIST upcalls sent
 * @lists_streamed: readdirs that read a listing's log while it ran
 * @stale: inodes whose object was found changed or gone in S3 (marked stale)
 * @read_retries: lower reads that would have blocked under our locks
 *	(IOCB_NOWAIT) and were made again from the workqueue
 * @expired: requests nobody waited for that passed their deadline
 * @direct_bytes: bytes returned by O_DIRECT reads
 * @uploads: UPLOAD upcalls sent
 * @upload_errors: uploads that failed (conflicts not counted)
 * @conflicts: uploads refused because the object changed in S3 meanwhile
 * @wb_acks: closes and fsyncs acknowledged on the cache device (writeback)
 * @wb_resumed: acknowledged files a mount found recorded and queued
 * @latency: FETCH round trip histogram, see S3CFS_LAT_BUCKETS
 */
struct s3cfs_stats {
	atomic64_t chunk_hits;
	atomic64_t chunk_misses;
	atomic64_t fetches;
	atomic64_t fetch_bytes;
	atomic64_t fetch_errors;
	atomic64_t fetch_timeouts;
	atomic64_t lookups;
	atomic64_t lookups_indexed;
	atomic64_t primed;
	atomic64_t lists;
	atomic64_t lists_streamed;
	atomic64_t stale;
	atomic64_t read_retries;
	atomic64_t expired;
	atomic64_t direct_bytes;
	atomic64_t uploads;
	atomic64_t upload_errors;
	atomic64_t conflicts;
	atomic64_t wb_acks;
	atomic64_t wb_resumed;
	atomic64_t stream_parts;
	atomic64_t stream_uploads;
	atomic64_t latency[S3CFS_LAT_BUCKETS];
};

/*
 * The permission bits anything of a mount may show, whatever the options
 * (file_mode=, dir_mode=: refused at mount), the bucket (x-amz-meta-mode)
 * or a creat/mkdir/chmod ask for: never set-user-ID or set-group-ID.
 * Anyone who can write to the bucket, or to a directory of a writable
 * mount, would otherwise make setuid programs (a file of a file_mode=4755
 * mount is root's). The sticky bit only restricts (who may delete from a
 * directory): it is kept.
 */
#define S3CFS_PERM_MASK		01777	/* rwx for all, sticky */

/*
 * Names in the kernel log. A name, path, key or ETag comes from a bucket
 * that anyone with write access to it fills (or from a server): a key
 * with a newline would forge log lines (syslog(2) and the console start
 * a new line, with its own timestamp, at each one), escape sequences
 * would drive the terminal that shows them. So each is printed with
 * %*pE, which escapes every byte that is not printable ASCII or Latin-1:
 * "%*pE" with s3cfs_esclen(s), s for a string, and s3cfs_pr_d() for a
 * line whose first conversion is a dentry's name (instead of %pd).
 */
static inline int s3cfs_esclen(const char *s)
{
	return s ? strlen(s) : 0;	/* %*pE prints nothing for 0 */
}

/* A dentry's name and length, read as %pd reads it (under RCU). */
static inline const char *s3cfs_dname(const struct dentry *d, int *len)
{
	const char *n = READ_ONCE(d->d_name.name);

	*len = strnlen(n, n == (const char *)d->d_iname ?
			  DNAME_INLINE_LEN - 1 : NAME_MAX);
	return n;
}

#define s3cfs_pr_d(pr, dentry, fmt, ...)				\
do {									\
	const char *__n;						\
	int __len;							\
									\
	rcu_read_lock();						\
	__n = s3cfs_dname(dentry, &__len);				\
	pr(fmt, __len, __n, ##__VA_ARGS__);				\
	rcu_read_unlock();						\
} while (0)

/**
 * struct s3cfs_mount_opts - parsed mount options
 * @cache: path of the cache directory (cache=)
 * @chunk_size: chunk size in bytes (chunk=)
 * @uid: owner of every inode (uid=)
 * @gid: group of every inode (gid=)
 * @file_mode: permission bits of files (file_mode=)
 * @dir_mode: permission bits of directories (dir_mode=)
 * @fetch_timeout_ms: how long a reader waits for the daemon (fetch_timeout=, s)
 * @meta_ttl_ms: how long listings and lookups are trusted (meta_ttl=, s)
 * @readahead_kb: readahead window (readahead=, KiB)
 * @dirty_ratio: percent of the dirty threshold this mount's dirty pages
 *	may take (dirty_ratio=; the bdi's max_ratio, strict on writable mounts)
 * @writable: new files may be created and written (writable); fixed for
 *	the life of the mount
 * @allow_delete: objects in S3 may be deleted: unlink, rmdir, rename's
 *	source (allow_delete, with writable); fixed for the life of the mount
 * @posix_meta: modes, owners, mtimes and symlinks are the objects'
 *	x-amz-meta-* headers (posix_meta); fixed for the life of the mount
 * @dir_index: listings leave an index per directory, not a lower file per
 *	object (dir_index; read-only mounts without posix_meta; index.c);
 *	fixed for the life of the mount
 * @writeback: close and fsync return once the file is durable on the
 *	cache device; the upload is queued (writeback; upqueue.c); fixed
 * @upload_delay: seconds a write-back upload waits after the file's last
 *	acknowledgment (upload_delay=)
 * @writeback_max_mb: MiB of queued files past which an acknowledgment
 *	waits for uploads (writeback_max=; 0 until the mount sets its default)
 * @writeback_given: the options said writeback or nowriteback (the
 *	daemon's default for the bucket does not apply)
 * @upload_delay_given: the options said upload_delay= (likewise)
 */
struct s3cfs_mount_opts {
	char *cache;
	u32 chunk_size;
	kuid_t uid;
	kgid_t gid;
	umode_t file_mode;
	umode_t dir_mode;
	unsigned int fetch_timeout_ms;
	unsigned int meta_ttl_ms;
	unsigned int readahead_kb;
	unsigned int dirty_ratio;
	bool writable;
	bool allow_delete;
	bool posix_meta;
	bool dir_index;
	bool writeback;
	unsigned int upload_delay;
	unsigned int writeback_max_mb;
	bool writeback_given;
	bool upload_delay_given;
};

/**
 * struct s3cfs_upq - a write-back mount's upload queue (upqueue.c)
 * @lock: protects @list, @nr and @runs
 * @list: inodes owing an upload (s3cfs_inode_info @up_link; each holds a
 *	dentry reference)
 * @nr: entries on @list
 * @bytes: their sizes at their last acknowledgment
 * @runs: uploads the queue ran (for tests: one per run)
 * @errors: uploads that failed (tried again later)
 * @wq: woken after every run (sync and unmount wait there)
 * @draining: unmount: a failed upload is not tried again
 * @resume_work: queues what an earlier mount recorded (at mount)
 * @workq: runs the uploads (and @resume_work); NULL without writeback
 * @dev_link: entry in the list of write-back mounts (upqueue.c), whose
 *	queues together are bounded per cache device
 * @dev_bytes: the size of the cache filesystem, at mount
 */
struct s3cfs_upq {
	spinlock_t lock;
	struct list_head list;
	unsigned int nr;
	u64 bytes;
	u64 runs;
	atomic64_t errors;
	wait_queue_head_t wq;
	bool draining;
	struct work_struct resume_work;
	struct workqueue_struct *workq;
	struct list_head dev_link;
	u64 dev_bytes;
};

/*
 * Request slots one user holds in a mount (a reader's fsuid; root and
 * kernel threads are not counted). An entry with @n 0 is free: it is
 * claimed, and @n raised, under s3cfs_slot_lock only; a slot is given back
 * with atomic_dec() alone. Users past the table's size share the mount's
 * slots uncounted (an unprivileged user has one uid).
 */
#define S3CFS_USER_SLOTS	32
struct s3cfs_user_slots {
	kuid_t uid;
	atomic_t n;
};

/**
 * struct s3cfs_sb_info - one mount (sb->s_fs_info)
 * @sb: the superblock
 * @lower_root: the cache directory
 * @creds: the mounter's credentials; all lower I/O runs with them
 * @bucket: bucket name
 * @prefix: key prefix, empty or ending in '/'
 * @cache_path: @lower_root as a string, for the daemon
 * @opts: mount options; the knobs are read with READ_ONCE and changed
 *	through sysfs with WRITE_ONCE
 * @chunk_shift: log2(@opts.chunk_size)
 * @mount_id: id in the upcall protocol (s3cfs_mount_ida)
 * @mounts_link: entry in the list of live mounts (s3cfs_mounts_lock)
 * @cache_link: entry in the list of claimed cache directories
 *	(s3cfs_mounts_lock), from s3cfs_open_cache() until the mount is freed
 * @stats: counters
 * @kobj: /sys/fs/s3cachefs/<MAJ:MIN>/
 * @kobj_unregister: completed by the kobject's release
 * @kobj_added: @kobj was added and must be deleted
 * @nr_pending: request slots this mount holds (max_pending_mount; sysfs
 *	pending): its requests in the request table, and submissions about
 *	to enter it
 * @user_slots: request slots each user holds in this mount
 *	(max_pending_user; s3cfs_slot_get())
 * @dying: unmount has begun: no new request (set and read under the
 *	request table's lock, see s3cfs_upcall_flush())
 * @expire_work: fails this mount's requests that passed their deadline
 *	with nobody waiting (upcall.c); armed while requests are pending
 * @nr_work: readahead work items (and NOWAIT retries) of this mount queued
 *	or running; unmount waits for 0 (aops.c, s3cfs_aops_drain())
 * @upq: the upload queue of a write-back mount
 * @index: listings leave directory indexes (dir_index, and the daemon
 *	said so in the MOUNT's answer; index.c)
 * @token: random bytes in S3CFS_XATTR_TOKEN on the cache root, sent with
 *	MOUNT: the daemon serves the mount only from the directory that
 *	carries them (cachedir.c); set at mount, then constant
 */
struct s3cfs_sb_info {
	struct super_block *sb;
	struct path lower_root;
	const struct cred *creds;
	char *bucket;
	char *prefix;
	char *cache_path;
	struct s3cfs_mount_opts opts;
	unsigned int chunk_shift;
	u32 mount_id;
	struct list_head mounts_link;
	struct list_head cache_link;
	struct s3cfs_stats stats;
	struct kobject kobj;
	struct completion kobj_unregister;
	bool kobj_added;
	atomic_t nr_pending;
	struct s3cfs_user_slots user_slots[S3CFS_USER_SLOTS];
	bool dying;
	struct delayed_work expire_work;
	atomic_t nr_work;
	struct s3cfs_upq upq;
	bool index;
	u8 token[S3CFS_TOKEN_LEN];
};

/**
 * struct s3cfs_inode_info - upper inode: one lower inode, one object version
 * @vfs_inode: the VFS inode
 * @lower_inode: the lower inode, the inode's key in the inode hash; set
 *	in s3cfs_inode_set() and never changed (NULL while S3CFS_I_LISTED)
 * @lower: the lower dentry and mount this inode stands on, set when the
 *	inode is created (a listed inode: when it takes its lower file, under
 *	S3CFS_I_ADOPTING, before S3CFS_I_LISTED is cleared) and never changed
 * @flags: S3CFS_I_* bits
 * @data_sem: shared around every scan of the lower extent map (and while
 *	opening @lower_file); exclusive while punching lower data (EVICT)
 * @lower_file: the lower file opened O_DIRECT, read-only, shared by all
 *	openers (regular files; set once under @data_sem, then stable until
 *	eviction)
 * @chunk_lock: protects @present, @nr_chunks and @fetches, and the
 *	presence check that counts a read in @reads
 * @present: bitmap of chunks known present in the lower file, NULL until
 *	the first open scans the lower extent map
 * @reads: lower reads in flight, counted from the presence check of their
 *	chunks to their completion (s3cfs_chunks_hold(), s3cfs_chunks_unhold())
 * @reads_wq: woken when @reads drops to 0 (EVICT waits there)
 * @nr_chunks: number of bits in @present
 * @fetches: FETCH requests in flight for this inode (struct s3cfs_req)
 * @etag: ETag of the object version the lower file holds
 * @listed_at: directories: jiffies of our last successful LIST, 0 if none
 * @touched_at: files: jiffies of the last lower atime update (evict.c)
 * @failed_chunk: the last chunk whose fetch timed out (chunk_lock)
 * @failed_at: when, in jiffies; 0 if none (chunk_lock)
 * @sq_pos: start of the last range a reader prefetched (chunk_lock)
 * @sq_next: its end: a range starting after @sq_pos, at most here, is a
 *	sequential reader's next (chunk_lock)
 * @sq_end: end of the last stream run fetched for it (chunk_lock)
 * @sq_run: that run's length, in bytes; 0 while no stream (chunk_lock)
 * @lower_wfile: LOCAL files: the lower file opened for writing (buffered),
 *	set once under @data_sem like @lower_file
 * @nr_writers: open files of this inode with FMODE_WRITE
 * @wb_sem: LOCAL files: shared while ->writepages writes folios to the
 *	lower file, exclusive while the daemon reads it for an upload, so
 *	that a mapped write written back meanwhile cannot tear the object
 * @res_start: LOCAL files: the lower range last reserved for writes
 *	(fallocate'd, write.c), [@res_start, @res_end); empty after anything
 *	that frees lower blocks (under i_rwsem)
 * @res_end: see @res_start
 * @up_work: write-back: this file's queued upload (upqueue.c)
 * @up_link: entry in the mount's upload queue (upq.lock)
 * @up_dentry: the name the queued upload uses, referenced while queued
 * @up_bytes: its size counted in the queue's bytes
 * @up_since: jiffies when it was queued (it has owed an upload since)
 * @up_mutex: serializes the file's upload record with what drops it
 * @up_tries: failed uploads in a row (the next waits longer)
 * @up_sent: the answer of the queued upload that was sent, not yet
 *	applied (set under @wb_sem held for writing, taken under i_rwsem:
 *	s3cfs_upq_settle())
 * @st_lock: protects the @st_* fields (stream.c)
 * @st_id: the stream the file's writes are in, 0: none
 * @st_told: the stream the daemon was told of (abort it if not used)
 * @st_next: the stream's end: written in order from 0 up to here
 * @st_ready: parts the daemon was told are written
 * @st_part: their size
 * @st_broken: written other than in order since the stream began
 * @st_work: writes back and announces parts, aborts broken streams
 */
struct s3cfs_inode_info {
	struct inode vfs_inode;
	struct inode *lower_inode;
	struct path lower;
	unsigned long flags;
	struct rw_semaphore data_sem;
	struct file *lower_file;
	spinlock_t chunk_lock;	/* see @chunk_lock above */
	unsigned long *present;
	atomic_t reads;
	wait_queue_head_t reads_wq;
	u64 nr_chunks;
	struct list_head fetches;
	char etag[S3CFS_ETAG_MAX + 1];
	unsigned long listed_at;
	unsigned long touched_at;
	u64 failed_chunk;
	unsigned long failed_at;
	loff_t sq_pos;
	loff_t sq_next;
	loff_t sq_end;
	u64 sq_run;
	struct file *lower_wfile;
	atomic_t nr_writers;
	struct rw_semaphore wb_sem;
	loff_t res_start;
	loff_t res_end;
	struct delayed_work up_work;
	struct list_head up_link;
	struct dentry *up_dentry;
	u64 up_bytes;
	unsigned long up_since;
	struct mutex up_mutex;
	unsigned int up_tries;
	struct s3cfs_upload_sent *up_sent;
	spinlock_t st_lock;	/* see @st_lock above */
	u64 st_id;
	u64 st_told;
	loff_t st_next;
	unsigned int st_ready;
	u64 st_part;
	bool st_broken;
	struct work_struct st_work;
};

/*
 * The object this inode's version belongs to changed or vanished in S3:
 * no new open, name lookup or fetch uses the inode again (S3CFS_I flags).
 */
#define S3CFS_I_STALE		0
/*
 * The lower file holds bytes written here (S3CFS_META_LOCAL on disk): all
 * of it is present, nothing is fetched or evicted, and no lookup or
 * listing replaces it. Set before the inode is visible (creation, or a
 * LOCAL file found on disk), cleared by the commit after an upload
 * (upload.c), under i_rwsem and data_sem.
 */
#define S3CFS_I_LOCAL		1
/*
 * LOCAL, with changes S3 has not had yet: set under i_rwsem, or by a
 * mapped write (->page_mkwrite); the upload clears it before its snapshot.
 */
#define S3CFS_I_DIRTY		2
/*
 * An open for writing is fetching every chunk (local.c): EVICT refuses
 * the file, as a LOCAL one. Changed under data_sem.
 */
#define S3CFS_I_COPYUP		3
/*
 * Write-back: the lower file holds exactly what a close or fsync
 * acknowledged, and .s3cachefs/pending/ records it (upqueue.c). Changed
 * under @up_mutex.
 */
#define S3CFS_I_QUEUED		4
/* An UPLOAD of the file is with the daemon (s3cachectl status). */
#define S3CFS_I_UPLOADING	5
/*
 * A listed inode (index.c): an object a directory's index gives, with no
 * lower file yet. Cleared once, when it takes its lower file.
 */
#define S3CFS_I_LISTED		6
/* A listed inode is taking its lower file: a bit lock (index.c). */
#define S3CFS_I_ADOPTING	7

static inline struct s3cfs_sb_info *S3CFS_SB(struct super_block *sb)
{
	return sb->s_fs_info;
}

static inline struct s3cfs_inode_info *S3CFS_I(struct inode *inode)
{
	return container_of(inode, struct s3cfs_inode_info, vfs_inode);
}

/**
 * struct s3cfs_req - one upcall, from submission to the daemon's answer
 * @ref: one for the request table while queued, one per waiter
 * @id: request id (key in the request table; set by the table's allocation
 *	before the request is visible there)
 * @cmd: S3CFS_CMD_*
 * @flags: S3CFS_REQ_* bits
 * @status: the answer, valid once S3CFS_REQ_DONE is set
 * @waiters: readers waiting; the last one to give up cancels the request
 * @done: completed exactly once, when S3CFS_REQ_DONE is set
 * @wait: woken at completion, when a FETCH progress report lands chunks
 *	and when a LIST's grows its log
 * @sbi: the mount (requests never outlive their mount: see s3cfs_upcall_flush)
 * @inode: FETCH: the upper inode (referenced)
 * @inode_link: FETCH: entry in the inode's @fetches (chunk_lock)
 * @first_chunk: FETCH: first chunk
 * @nr_chunks: FETCH: number of chunks
 * @sent_at: jiffies when first sent, for the latency histogram
 * @progress_at: jiffies of the daemon's last progress report, 0 if none
 * @timeout: the mount's fetch timeout when submitted, in jiffies
 * @deadline: jiffies after which nobody waiting means failed (extended to
 *	@progress_at + @timeout by progress reports)
 * @path: PATH attribute
 * @name: NAME attribute (LOOKUP)
 * @etag: ETAG attribute (FETCH)
 * @offset: OFFSET attribute (FETCH)
 * @length: LENGTH attribute (FETCH)
 * @uid: the fsuid of the task that made it (its slot is this user's)
 * @user_slots: the user's entry in the mount's @user_slots its slot counts
 *	in, or NULL
 */
struct s3cfs_req {
	refcount_t ref;
	u32 id;
	u8 cmd;
	unsigned long flags;
	int status;
	atomic_t waiters;
	struct completion done;
	wait_queue_head_t wait;
	struct s3cfs_sb_info *sbi;
	kuid_t uid;
	struct s3cfs_user_slots *user_slots;
	struct inode *inode;
	struct list_head inode_link;
	u64 first_chunk;
	u64 nr_chunks;
	unsigned long sent_at;
	unsigned long progress_at;
	unsigned long timeout;
	unsigned long deadline;
	char *path;
	char *name;
	char *etag;
	u64 offset;
	u64 length;
	u32 prio;		/* FETCH: enum s3cfs_prio */
	u64 ino;		/* UPLOAD: INO */
	u64 size;		/* UPLOAD, RENAME: SIZE */
	/* FLAGS: UPLOAD's S3CFS_UP_*, DELETE's S3CFS_DEL_*, LOOKUP's S3CFS_LOOKUP_* */
	u32 up_flags;
	u64 stream;		/* UPLOAD: STREAM, with PARTS and LENGTH (stream.c) */
	u32 parts;
	char *path2;		/* RENAME: PATH2 */
	char *reply_etag;	/* UPLOAD, RENAME, SETMETA: the answer's ETAG (kmalloc'ed) */
	struct s3cfs_posix posix;	/* UPLOAD, MKDIR, SETMETA: POSIX */
	u64 list_done;		/* LIST: bytes of its log (dir.c) */
	u64 list_ino;		/* LIST: its log's inode number */
	bool list_whole;	/* LIST: the answer said the log is whole */
	u32 reply_flags;	/* MOUNT: the answer's FLAGS (the bucket's defaults) */
	s32 reply_upload_delay;	/* MOUNT: the answer's UPLOAD_DELAY, or -1 */
};

#define S3CFS_REQ_DONE		0	/* answered, cancelled or flushed */
#define S3CFS_REQ_SENT		1	/* claimed by a sender for the current daemon */
#define S3CFS_REQ_QUEUED	2	/* counted in the pending requests */

/* params.c */
int s3cfs_init_fs_context(struct fs_context *fc);
int s3cfs_parse_source(struct fs_context *fc, char **bucket, char **prefix);
void s3cfs_take_opts(struct fs_context *fc, struct s3cfs_mount_opts *opts);
extern const struct fs_parameter_spec s3cfs_fs_parameters[];

/* super.c */
extern struct file_system_type s3cfs_fs_type;
int s3cfs_fill_super(struct super_block *sb, struct fs_context *fc);
void s3cfs_kill_sb(struct super_block *sb);
void s3cfs_mounts_lock(void);
void s3cfs_mounts_unlock(void);
int s3cfs_for_each_mount(int (*fn)(struct s3cfs_sb_info *sbi, void *arg),
			 void *arg);
struct s3cfs_sb_info *s3cfs_get_mount(u32 mount_id);
void s3cfs_put_mount(struct s3cfs_sb_info *sbi);

/* cachedir.c */
int s3cfs_cache_adopt(struct fs_context *fc, struct s3cfs_sb_info *sbi);

/* inode.c */
int s3cfs_inode_cache_init(void);
void s3cfs_inode_cache_exit(void);
struct inode *s3cfs_alloc_inode(struct super_block *sb);
void s3cfs_free_inode(struct inode *inode);
void s3cfs_evict_inode(struct inode *inode);
int s3cfs_drop_inode(struct inode *inode);
struct inode *s3cfs_iget(struct super_block *sb, struct dentry *lower);
int s3cfs_inode_test(struct inode *inode, void *lower);
int s3cfs_inode_set(struct inode *inode, void *lower);

/* meta.c: what the daemon stored on a lower file */
struct s3cfs_meta {
	u64 size;
	s64 mtime;
	u8 flags;		/* S3CFS_META_LOCAL */
	char etag[S3CFS_ETAG_MAX + 1];
};

ssize_t s3cfs_get_xattr(struct dentry *lower, const char *name, char *buf,
			size_t size);
int s3cfs_meta_get(struct dentry *lower, struct s3cfs_meta *m);
int s3cfs_meta_decode(const u8 *v, size_t n, struct s3cfs_meta *m);
int s3cfs_meta_set(struct dentry *lower, const struct s3cfs_meta *m);
int s3cfs_meta_tag(struct inode *inode, u8 flags, loff_t size,
		   const char *etag);
loff_t s3cfs_lower_size(struct dentry *lower);
bool s3cfs_lower_local(struct dentry *lower);
int s3cfs_inode_path(struct dentry *dentry, char **bufp, char **pathp);
int s3cfs_key_check(struct dentry *parent, const struct qstr *name, bool dir);
char *s3cfs_path_dup(struct dentry *dentry);
char *s3cfs_inode_etag(struct inode *inode);
void s3cfs_inode_set_etag(struct inode *inode, const char *etag);
void s3cfs_inode_set_stale(struct inode *inode);
bool s3cfs_inode_stale(struct inode *inode);
bool s3cfs_inode_local(struct inode *inode);
extern const struct inode_operations s3cfs_file_iops;
extern const struct inode_operations s3cfs_dir_iops;

/* namei.c */
struct dentry *s3cfs_lookup(struct inode *dir, struct dentry *dentry,
			    unsigned int flags);
extern const struct dentry_operations s3cfs_dops;
bool s3cfs_name_hidden(bool in_root, const char *name, int len);
bool s3cfs_age_fresh(s64 age_ms, unsigned int ttl, unsigned long *at);
bool s3cfs_dir_listed_fresh(struct inode *dir);
bool s3cfs_dir_lower_listed(struct inode *dir);
void s3cfs_name_refresh(struct s3cfs_sb_info *sbi, const char *path);
struct dentry *s3cfs_lower_lookup(struct dentry *parent,
				  const struct qstr *name,
				  unsigned long *checked);

/* index.c: directory indexes */
u64 s3cfs_listed_ino(struct inode *dir, const char *name, unsigned int len);
bool s3cfs_index_fresh(struct inode *dir, unsigned long *at);
struct file *s3cfs_index_open(struct inode *dir, u64 *len, unsigned long *at,
			      bool any_age);
bool s3cfs_inode_listed(struct inode *inode);
void s3cfs_index_prime(struct dentry *parent, const char *name,
		       unsigned int len, const u8 *v, size_t vlen, u64 ino,
		       unsigned long at);
int s3cfs_inode_adopt(struct dentry *dentry);

/* dir.c */
extern const struct file_operations s3cfs_dir_fops;
struct file *s3cfs_list_log_open(struct s3cfs_sb_info *sbi, struct inode *ldir,
				 u64 ino);

/* posix.c */
int s3cfs_posix_get(struct dentry *lower, struct s3cfs_posix *p);
int s3cfs_posix_set(struct dentry *lower, const struct s3cfs_posix *p);
void s3cfs_posix_of(struct inode *inode, struct s3cfs_posix *p);
umode_t s3cfs_posix_load(struct inode *inode, struct dentry *lower);
void s3cfs_posix_refresh(struct inode *inode);
bool s3cfs_posix_unknown(struct s3cfs_sb_info *sbi, struct dentry *lower);
int s3cfs_posix_dir_setattr(struct dentry *dentry, struct iattr *attr);
int s3cfs_posix_setattr(struct dentry *dentry, struct iattr *attr);

/* symlink.c */
extern const struct inode_operations s3cfs_symlink_iops;
int s3cfs_symlink(S3CFS_IDMAP_ARG, struct inode *dir, struct dentry *dentry,
		  const char *target);

/* create.c */
struct dentry *s3cfs_link_lower(struct dentry *ldir, struct file *tmp,
				const struct qstr *name);
int s3cfs_create(S3CFS_IDMAP_ARG, struct inode *dir, struct dentry *dentry,
		 umode_t mode, bool excl);

/* local.c */
int s3cfs_local_begin(struct inode *inode, bool trunc);
int s3cfs_lower_pin(struct file *lower);
void s3cfs_lower_unpin(struct file *lower);
void s3cfs_local_retag(struct inode *inode, const char *etag);
void s3cfs_local_rebase(struct inode *inode, struct inode *target);

/* dirops.c */
int s3cfs_mkdir(S3CFS_IDMAP_ARG, struct inode *dir, struct dentry *dentry,
		umode_t mode);
int s3cfs_rmdir(struct inode *dir, struct dentry *dentry);
int s3cfs_unlink(struct inode *dir, struct dentry *dentry);
int s3cfs_rename(S3CFS_IDMAP_ARG, struct inode *old_dir,
		 struct dentry *old_dentry, struct inode *new_dir,
		 struct dentry *new_dentry, unsigned int flags);
int s3cfs_sync_created(struct dentry *dir);

/* write.c */
int s3cfs_open_write(struct inode *inode, bool trunc);
ssize_t s3cfs_write_iter(struct kiocb *iocb, struct iov_iter *from);
bool s3cfs_attr_changes_ids(struct inode *inode, const struct iattr *attr);
int s3cfs_setattr(S3CFS_IDMAP_ARG, struct dentry *dentry, struct iattr *attr);
int s3cfs_truncate_lower(struct inode *inode, loff_t size);
void s3cfs_reserve_forget(struct s3cfs_inode_info *si);
long s3cfs_fallocate(struct file *file, int mode, loff_t offset, loff_t len);
extern const struct vm_operations_struct s3cfs_write_vm_ops;
int s3cfs_write_begin(struct file *file, struct address_space *mapping,
		      loff_t pos, unsigned int len, S3CFS_WB_FOLIO **foliop,
		      void **fsdata);
int s3cfs_write_end(struct file *file, struct address_space *mapping,
		    loff_t pos, unsigned int len, unsigned int copied,
		    S3CFS_WB_FOLIO *folio, void *fsdata);

/* wback.c */
int s3cfs_writepages(struct address_space *mapping,
		     struct writeback_control *wbc);

/* upload.c */
struct dentry *s3cfs_lower_subdir(struct dentry *parent, const char *name);
int s3cfs_upload_created(struct inode *inode, struct dentry *dentry);
int s3cfs_upload_truncated(struct inode *inode, struct dentry *dentry);
int s3cfs_upload(struct file *file, bool closing);
int s3cfs_upload_prepare(struct inode *inode);

/*
 * A queued upload sends without i_rwsem (upqueue.c); what its answer does
 * to the file is applied under i_rwsem afterwards, by the queue or by the
 * first to take i_rwsem before it (s3cfs_upq_settle()).
 */
struct s3cfs_upload_sent {
	int err;		/* the UPLOAD's answer */
	bool unchanged;		/* nothing changed since the acknowledgment */
	char *path;		/* the key it was sent to */
	char *etag;		/* the new version's, on success */
	int result;		/* what applying the answer returned */
};

int s3cfs_upload_acked(struct inode *inode, struct dentry *dentry,
		       struct s3cfs_upload_sent *sent);
int s3cfs_upload_acked_answer(struct inode *inode,
			      struct s3cfs_upload_sent *sent);
int s3cfs_upload_state(struct inode *inode, struct s3cfs_ioc_state *st);
int s3cfs_upload_inode(struct inode *inode, struct dentry *dentry,
		       struct file *file, bool closing);

/* stream.c */
void s3cfs_stream_init_inode(struct s3cfs_inode_info *si);
void s3cfs_stream_wrote(struct inode *inode, loff_t pos, size_t len,
			loff_t old_size);
void s3cfs_stream_break(struct inode *inode);
void s3cfs_stream_settle(struct inode *inode);
void s3cfs_stream_take(struct inode *inode, struct s3cfs_req *req, u64 size);
void s3cfs_stream_drop(struct inode *inode);
void s3cfs_stream_evict(struct inode *inode);

/* upqueue.c */
void s3cfs_upq_init_inode(struct s3cfs_inode_info *si);
void s3cfs_upq_init_mount(struct s3cfs_sb_info *sbi);
int s3cfs_upq_start(struct s3cfs_sb_info *sbi);
int s3cfs_upq_ack(struct inode *inode, struct dentry *dentry);
int s3cfs_upq_changing(struct inode *inode);
void s3cfs_upq_throttle(struct s3cfs_sb_info *sbi);
bool s3cfs_upq_unchanged(struct inode *inode);
void s3cfs_upq_settle(struct inode *inode);
void s3cfs_upq_unlinked(struct inode *inode);
int s3cfs_upq_renaming(struct inode *inode, const char *old_path,
		       const char *new_path);
int s3cfs_upq_sync(struct s3cfs_sb_info *sbi);
long s3cfs_ioctl(struct file *file, unsigned int cmd, unsigned long arg);
unsigned long s3cfs_upq_oldest(struct s3cfs_sb_info *sbi);
void s3cfs_upq_drain(struct s3cfs_sb_info *sbi);
void s3cfs_upq_resume_work(struct work_struct *work);

/**
 * struct s3cfs_file - an open regular file
 * @lock: protects the fields below
 * @used: bytes of the inode's version were returned (or it was mapped):
 *	once the inode is stale, reads fail with ESTALE
 * @active: reads of the inode in progress
 * @next: the open of the object's newer version that reads are passed
 *	to: set when the inode went stale before this open returned any byte
 * @dio_next: where the last O_DIRECT read ended (a hint, not under @lock):
 *	a read starting there is a stream and is read ahead
 * @uploads: the last close uploads: opened for writing, or the open
 *	created the file (O_CREAT without a write mode: the name must reach
 *	S3 too, as an empty object)
 * @uploaded: the last close's ->flush uploaded (or tried to): ->release
 *	need not
 */
struct s3cfs_file {
	spinlock_t lock;	/* see @lock above */
	bool used;
	unsigned int active;
	struct file *next;
	loff_t dio_next;
	bool uploads;
	bool uploaded;
};

/* file.c */
extern const struct file_operations s3cfs_file_fops;
int s3cfs_open_lower(struct inode *inode);

/* direct.c */
bool s3cfs_dio_aligned(struct s3cfs_inode_info *si, loff_t pos,
		       const struct iov_iter *iter);
ssize_t s3cfs_direct_read(struct kiocb *iocb, struct iov_iter *to);

/* aops.c */
extern const struct address_space_operations s3cfs_aops;
int s3cfs_aops_init(void);
void s3cfs_aops_drain(struct s3cfs_sb_info *sbi);
int s3cfs_fill_hold(struct inode *inode, loff_t pos, size_t len);
void s3cfs_aops_exit(void);

/* chunk.c */
int s3cfs_chunks_load(struct inode *inode);
void s3cfs_chunks_free(struct s3cfs_inode_info *si);
s64 s3cfs_chunks_cached(struct inode *inode);
int s3cfs_chunks_ensure(struct inode *inode, loff_t pos, size_t len);
void s3cfs_chunks_prefetch(struct inode *inode, loff_t pos, u64 len,
			   loff_t sync_end);
loff_t s3cfs_chunks_segment(struct inode *inode, loff_t pos, loff_t end);
bool s3cfs_chunks_present(struct inode *inode, loff_t pos, size_t len);
bool s3cfs_chunks_hold(struct inode *inode, loff_t pos, size_t len);
void s3cfs_chunks_unhold(struct inode *inode);
void s3cfs_chunks_drain(struct inode *inode);
int s3cfs_chunks_fetched(struct s3cfs_req *req);
void s3cfs_chunks_landed(struct s3cfs_req *req, u64 done);

/* evict.c */
void s3cfs_touch_lower(struct inode *inode);
int s3cfs_evict(struct s3cfs_sb_info *sbi, const char *path, u64 off, u64 len);
int s3cfs_evict_ioctl(struct file *file, void __user *uarg);

/*
 * The daemon's answer to a request, as netlink.c parsed it. The optional
 * attributes have a has_ flag each (FETCH answers carry OFFSET and
 * LENGTH; progress reports, STATUS -EINPROGRESS, may carry DONE, and a
 * LIST's INO).
 */
struct s3cfs_reply {
	u8 cmd;
	u64 id;			/* REQ_ID */
	u32 mount_id;
	int status;		/* 0 or a negative errno */
	bool has_offset, has_length, has_done, has_ino;
	bool has_flags, has_upload_delay;	/* MOUNT (version 7) */
	u32 flags;		/* MOUNT: S3CFS_MOUNT_WRITEBACK */
	u32 upload_delay;	/* MOUNT: seconds */
	u64 offset, length;
	/* FETCH: the first @done bytes are in the cache; LIST: its log's. */
	u64 done;
	u64 ino;		/* LIST: its log's inode number */
	const char *etag;	/* UPLOAD: the new object's ETag, or NULL */
};

/* upcall.c */
struct sock;
unsigned int s3cfs_daemon_version(void);
struct s3cfs_req *s3cfs_req_alloc(struct s3cfs_sb_info *sbi, u8 cmd);
void s3cfs_req_put(struct s3cfs_req *req);
int s3cfs_req_submit(struct s3cfs_req *req, bool nowait);
void s3cfs_req_abandon(struct s3cfs_req *req);
int s3cfs_req_wait(struct s3cfs_req *req, unsigned long deadline,
		   unsigned long timeout,
		   bool (*ready)(struct s3cfs_req *req, void *arg), void *arg);
void s3cfs_req_complete(struct s3cfs_req *req, int status);
int s3cfs_upcall(struct s3cfs_sb_info *sbi, u8 cmd, const char *path,
		 const char *name, u32 flags);
int s3cfs_upcall_req(struct s3cfs_req *req);
int s3cfs_upcall_reply(const struct s3cfs_reply *r);
int s3cfs_upcall_register(struct sock *sk, u32 portid, u32 version);
void s3cfs_upcall_daemon_gone(u32 portid);
void s3cfs_upcall_init_mount(struct s3cfs_sb_info *sbi);
void s3cfs_upcall_flush(struct s3cfs_sb_info *sbi);
bool s3cfs_daemon_present(void);
bool s3cfs_daemon_is(const struct sock *sk);
struct file *s3cfs_daemon_pin(u32 portid);
void s3cfs_daemon_unpin(struct file *file);
void s3cfs_upcall_umount(struct s3cfs_sb_info *sbi);
void s3cfs_upcall_exit(void);

/* netlink.c */
int s3cfs_netlink_init(void);
void s3cfs_netlink_exit(void);
int s3cfs_nl_send(struct s3cfs_req *req, u32 portid);
int s3cfs_nl_send_mount(struct s3cfs_sb_info *sbi, u64 id, u32 portid);
void s3cfs_nl_send_umount(struct s3cfs_sb_info *sbi, u32 portid);
void s3cfs_nl_send_cancel(struct s3cfs_req *req, u32 portid);

/* fault.c */
bool s3cfs_fault(const char *point);

/* sysfs.c */
int s3cfs_sysfs_init(void);
void s3cfs_sysfs_exit(void);
int s3cfs_sysfs_add(struct s3cfs_sb_info *sbi);
void s3cfs_sysfs_del(struct s3cfs_sb_info *sbi);

#endif /* _S3CFS_H */
