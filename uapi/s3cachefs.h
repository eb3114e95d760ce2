/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * s3cachefs: the protocol between the kernel module (s3cachefs.ko) and the
 * fill daemon (s3cachefsd), and the on-disk format of the cache directory.
 * Both sides include this one header; there is no second copy.
 *
 * Changelog (bump S3CFS_GENL_VERSION when a change is not backwards
 * compatible; grow by adding commands and attributes at the end):
 *   1 - REGISTER, MOUNT, UMOUNT, FETCH, LOOKUP, LIST, EVICT.
 *   2 - FETCH progress reports may carry DONE: the chunks written so far
 *       count as cached at once, before the whole FETCH is answered. The
 *       kernel accepts REGISTER of versions S3CFS_GENL_VERSION_MIN..
 *       S3CFS_GENL_VERSION; a daemon registered as version 1 never sends
 *       DONE (a kernel of version 1 refuses unknown attributes).
 *   2 - (no bump: both directions stay compatible) FETCH carries
 *       S3CFS_A_PRIORITY: whether a reader is blocked on the range or it is
 *       readahead. Kernel -> daemon only; a daemon that does not know it
 *       ignores it (libnl skips attributes above its policy), a kernel that
 *       does not send it gets every FETCH treated as S3CFS_PRIO_SYNC.
 *   2 - (no bump) CANCEL, kernel -> daemon notification: nobody waits for a
 *       LIST any more. A daemon that does not know it drops it (unknown
 *       command) and finishes the LIST as before; a kernel that does not
 *       send it leaves every LIST running to its end.
 *   3 - writes: UPLOAD (kernel -> daemon), attributes SIZE, FLAGS, INO, and
 *       ETAG in UPLOAD's answer; MOUNT carries FLAGS (S3CFS_MOUNT_WRITABLE).
 *       A writable mount needs a daemon registered as version 3 or later;
 *       read-only mounts work with daemons of version 1 and 2 as before.
 *       An UPLOAD whose waiter gives up is CANCELled like a LIST.
 *   4 - objects opened for writing: the kernel makes an object's cache file
 *       LOCAL in place (tag S3CFS_META_VERSION_LOCAL with the object's ETag
 *       as its base) while it holds flock(LOCK_SH) on it. A daemon of
 *       version 4 replaces, removes and writes fetched chunks into a cache
 *       file only under flock(LOCK_EX | LOCK_NB), having read its tag
 *       under the lock, and answers a FETCH of a LOCAL file -EAGAIN. The
 *       kernel opens objects for writing only with a daemon of version 4;
 *       with version 3, files created on the mount are writable as before.
 *       Namespace changes: MKDIR, DELETE and RENAME (kernel -> daemon),
 *       attribute PATH2, ETAG in RENAME's answer; the kernel sends them
 *       only to a daemon of version 4 (EPERM before).
 *   5 - POSIX attributes (the s3fs-fuse convention of x-amz-meta-mode,
 *       -uid, -gid, -mtime): attribute POSIX in UPLOAD and MKDIR (the
 *       headers to send; a daemon of version 3 or 4 ignores it and sends
 *       none), SETMETA (kernel -> daemon, sent only to version 5), MOUNT
 *       flag S3CFS_MOUNT_POSIX (the daemon records what a LOOKUP's HEAD
 *       says in S3CFS_XATTR_POSIX). A mount with posix_meta needs a daemon
 *       of version 5.
 *   6 - streamed listings: a LIST progress report may carry DONE and INO.
 *       INO is the inode number of the listing's log (S3CFS_LISTING_DIR),
 *       DONE the bytes of whole records written to it so far: a readdir
 *       returns those entries while later pages are on their way. The
 *       LIST's answer (STATUS 0) carries them too when the log is whole;
 *       a readdir that read a log its answer does not vouch for fails
 *       with EIO. The daemon sends them only to a kernel of version 6
 *       (older ones refuse DONE on a LIST); a kernel that gets none waits
 *       for the answer and reads the lower directory, as before.
 *       Also (no new version: older daemons ignore it, older modules
 *       do not send it): PRIORITY on UPLOAD, ASYNC for a write-back
 *       mount's queued upload.
 *
 *   7 - a bucket's mount defaults: the answer (STATUS 0) to a MOUNT with
 *       S3CFS_MOUNT_WRITABLE may carry FLAGS (S3CFS_MOUNT_WRITEBACK) and
 *       UPLOAD_DELAY, the daemon's configuration of the bucket: the
 *       kernel applies them where the mount's own options do not say
 *       (writeback, nowriteback, upload_delay=). The daemon sends them only
 *       to a kernel of version 7 (older ones refuse both in an answer).
 *   8 - streamed uploads: an UPLOAD with S3CFS_UP_PART says the first PARTS
 *       parts (LENGTH bytes each) of a file being written from its start
 *       are in its lower file and will not change; the daemon puts them
 *       into a multipart upload it opens for the stream STREAM, while the
 *       writer goes on. The close or fsync's UPLOAD may name the STREAM
 *       and how many of its PARTS hold the file's first bytes: the daemon
 *       sends only the rest, and completes that upload on the UPLOAD's
 *       condition. The kernel sends them only to a daemon of version 8
 *       (older ones would ignore both attributes and upload the file
 *       whole, but would take an S3CFS_UP_PART for a whole upload).
 *   9 - directory indexes: a MOUNT may carry S3CFS_MOUNT_INDEX (a
 *       read-only mount without posix_meta), asking that listings leave
 *       an index of the directory (S3CFS_XATTR_INDEX) instead of a lower
 *       file per object; a daemon that does so says S3CFS_MOUNT_INDEX in
 *       the MOUNT's answer. Listing log records then carry METALEN bytes
 *       of metadata, and INO 0 for an object with no lower file. LOOKUP
 *       may carry FLAGS S3CFS_LOOKUP_INDEX: the directory's index is
 *       fresh; the daemon makes the lower file from it, or answers
 *       -ENOENT for a name it does not hold, without asking S3.
 *   9 - (no bump) EVICT and every answer are taken only from the socket
 *       that registered (not from another socket of the same port id,
 *       nor from another root process: it uses S3CFS_IOC_EVICT).
 *  10 - the cache directory is tied to its mount: MOUNT carries
 *       S3CFS_A_TOKEN, random bytes the kernel wrote in S3CFS_XATTR_TOKEN
 *       on the cache root when it mounted it (and that only a process
 *       with CAP_SYS_ADMIN can set). The daemon opens CACHE_DIR without
 *       following a symlink and serves the mount only if the directory
 *       it opened carries the same token: else it answers the MOUNT
 *       -ESTALE (-ELOOP: a symlink on the way), at the first MOUNT and at
 *       every announcement after REGISTER, and answers that mount's
 *       requests -EIO. A daemon of version 9 or older ignores TOKEN.
 *  11 - a directory's POSIX attributes: SETMETA may carry FLAGS
 *       S3CFS_SETMETA_DIR and no ETAG: PATH is a directory, whose marker
 *       object ("PATH/") takes POSIX (copied onto itself, or put where
 *       there is none). The kernel sends it only to a daemon of version
 *       11 (older ones refuse a SETMETA without ETAG: chmod/chown of a
 *       directory stays EPERM).
 *
 * ioctls (on files of a mount; not netlink): S3CFS_IOC_SYNC, then
 * S3CFS_IOC_STATE, then S3CFS_IOC_EVICT (a module without one answers
 * ENOTTY); then @cached in S3CFS_IOC_STATE's answer, with
 * S3CFS_STATE_CACHED (an older module leaves both zero).
 * S3CFS_IOC_SYNC needs the file's owner or CAP_SYS_ADMIN.
 *
 * Cache format changelog (S3CFS_FORMAT_VERSION is still 1: every change
 * keeps older caches working):
 *   - S3CFS_XATTR_SIZE: the object's size, set on every lower file the
 *     daemon creates; the kernel no longer takes the size from the lower
 *     i_size, which a crash while finishing the last piece leaves rounded
 *     up. A file without it (an older cache) is sized by its i_size, and
 *     the daemon gives it the xattr when S3 agrees or renews it.
 *   - S3CFS_LOST_FOUND at the cache root is the lower filesystem's.
 *   - S3CFS_XATTR_META: size, mtime and ETag in one compact binary value
 *     that fits in an ext4 inode of 256 bytes with room to spare (the three
 *     text xattrs spilled into an external 4 KiB block per listed file,
 *     which eviction could never free). Files that carry the three older
 *     xattrs instead are read as before and rewritten in the compact form
 *     when the daemon next meets them (LOOKUP, LIST).
 *   - The lower mtime of a file or directory is when the daemon last found
 *     it as it is in S3: it made it (LOOKUP, LIST), wrote fetched data
 *     into it, or a LOOKUP checked it (the daemon then sets the mtime to
 *     the time). The kernel trusts such an entry for meta_ttl from then
 *     without a LOOKUP, whether or not its dentry stayed in memory, and
 *     keeps the mtime across an EVICT's punch. (S3 has no time of its own
 *     for these: a file's times come from S3CFS_XATTR_META.) An older
 *     daemon leaves it at the last change: entries are trusted no longer
 *     than meta_ttl after it, and the kernel asks again as before.
 *   - S3CFS_PENDING_DIR (write-back mounts): hard links to LOCAL files
 *     whose content a close or fsync acknowledged, with
 *     S3CFS_XATTR_PENDING on them. A daemon leaves .s3cachefs/ alone;
 *     a module without write-back ignores them (the files stay LOCAL).
 *   - S3CFS_XATTR_CONFLICT on the copies kept in S3CFS_CONFLICTS_DIR:
 *     the path each was written at (copies kept before it have none).
 *   - The cache directory is private: the kernel makes its root 0700,
 *     owned by root, at every mount, and files and directories are made
 *     0600 and 0700. A directory that is neither empty nor carries
 *     S3CFS_FORMAT_FILE is refused, never claimed. S3CFS_XATTR_TOKEN on
 *     the root ties it to the mount (protocol 10).
 *
 * Transport: one generic netlink family, S3CFS_GENL_NAME, in the initial
 * network namespace only. The daemon REGISTERs (needs CAP_SYS_ADMIN); from
 * then on the kernel unicasts requests to the registering socket. Every
 * request carries S3CFS_A_REQ_ID (u64, unique while pending) and
 * S3CFS_A_MOUNT_ID. The daemon answers each request with a message of the
 * same command carrying the same REQ_ID and MOUNT_ID (FETCH replies also echo
 * OFFSET and LENGTH) plus S3CFS_A_STATUS: 0 or a negative errno. A reply
 * that does not match a pending request is refused with -ENOENT/-EINVAL.
 * UMOUNT is a notification and gets no reply. A reply with STATUS
 * -EINPROGRESS is a progress report: the request stays pending and its
 * waiters' timeout restarts (send one every few seconds during a long LIST
 * or a slow FETCH). A FETCH progress report may carry S3CFS_A_DONE: the
 * first DONE bytes of the range are written (whole chunks, or up to EOF), so
 * a reader waiting for one of those chunks goes on at once; a LIST progress
 * report DONE and INO (version 6: the listing's log). A MOUNT with
 * REQ_ID 0 is an announcement of a live mount after REGISTER; its answer is
 * only logged.
 *
 * When the registered socket closes, pending requests stay queued; a daemon
 * that registers again first receives a MOUNT for every live mount, then
 * every pending request again (so the daemon must treat requests as
 * idempotent). Readers wait at most the mount's fetch timeout.
 */
#ifndef _UAPI_LINUX_S3CACHEFS_H
#define _UAPI_LINUX_S3CACHEFS_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define S3CFS_GENL_NAME		"s3cachefs"
#define S3CFS_GENL_VERSION	11
#define S3CFS_GENL_VERSION_MIN	1	/* oldest daemon protocol accepted */

/**
 * enum s3cfs_cmd - generic netlink commands
 * @S3CFS_CMD_UNSPEC: never used
 * @S3CFS_CMD_REGISTER: daemon -> kernel. Attrs: VERSION. The sender's socket
 *	becomes the one daemon socket. Answered by a netlink ack.
 * @S3CFS_CMD_MOUNT: kernel -> daemon, a new (or, after REGISTER, a live)
 *	mount. Attrs: REQ_ID, MOUNT_ID, BUCKET, PREFIX, CACHE_DIR, CHUNK_SIZE,
 *	TOKEN (version 10). The daemon opens CACHE_DIR without following
 *	symlinks, checks that it carries TOKEN, checks or writes the format
 *	marker and replies STATUS (-EXDEV: the cache belongs to another
 *	bucket/prefix; -ESTALE: not the directory the kernel mounted; -ELOOP:
 *	a symlink in CACHE_DIR; -ENOTEMPTY: neither empty nor a cache).
 * @S3CFS_CMD_UMOUNT: kernel -> daemon notification. Attrs: MOUNT_ID.
 * @S3CFS_CMD_FETCH: kernel -> daemon. Attrs: REQ_ID, MOUNT_ID, PATH, OFFSET,
 *	LENGTH, ETAG, PRIORITY (optional). Fill [OFFSET, OFFSET + LENGTH) of
 *	the lower file PATH
 *	(chunk aligned; LENGTH may run past EOF, the daemon clamps it) with
 *	the bytes of the object version ETAG, as whole chunks. -ESTALE: the
 *	object changed; the daemon has already replaced the lower file with
 *	one carrying the new metadata (see "cache directory" below).
 * @S3CFS_CMD_LOOKUP: kernel -> daemon. Attrs: REQ_ID, MOUNT_ID, PATH (the
 *	parent directory), NAME. Make the lower entry PATH/NAME match S3: a
 *	file for an object, a directory for a common prefix, nothing (and
 *	-ENOENT) if neither exists.
 * @S3CFS_CMD_LIST: kernel -> daemon. Attrs: REQ_ID, MOUNT_ID, PATH. Make the
 *	lower directory PATH hold exactly the listing of its prefix, then set
 *	S3CFS_XATTR_LISTED on it.
 * @S3CFS_CMD_EVICT: daemon -> kernel. Attrs: MOUNT_ID, PATH, OFFSET, LENGTH
 *	(chunk aligned; LENGTH may run past EOF). The kernel punches the range
 *	out of the lower file and forgets it was cached. Chunks being fetched
 *	are not evicted: then the answer (netlink ack) is -EBUSY and nothing
 *	is punched; so it is for a LOCAL file (written here, see the cache
 *	format). Only the kernel punches holes, so a reader never finds a
 *	chunk gone between checking it and reading it.
 * @S3CFS_CMD_CANCEL: kernel -> daemon notification. Attrs: REQ_ID,
 *	MOUNT_ID. The request REQ_ID (a LIST, or an UPLOAD) was given
 *	up: its last waiter was killed (an interrupted ls) or timed out.
 *	The kernel has forgotten it; the daemon may stop the work (no
 *	reply is expected, one is refused with -ENOENT). Work that another
 *	pending request shares goes on for that one.
 * @S3CFS_CMD_UPLOAD: kernel -> daemon (version 3). Attrs: REQ_ID, MOUNT_ID,
 *	PATH, INO, SIZE, FLAGS, ETAG (with S3CFS_UP_MATCH). Put the first
 *	SIZE bytes of the lower file PATH (whose inode number must be INO,
 *	else -ESTALE) as the object, on the condition FLAGS name. Answer 0
 *	with ETAG, the new object's ETag; -EEXIST: S3CFS_UP_NEW and the key
 *	exists; -ESTALE: S3CFS_UP_MATCH and the object is another version;
 *	-ENOENT: S3CFS_UP_MATCH and the key is gone; -EFBIG: larger than one
 *	PutObject takes; -EACCES, -EIO. The lower file is the kernel's
 *	(S3CFS_META_LOCAL): the daemon only reads it. With STREAM and PARTS
 *	(version 8), the first PARTS parts of LENGTH bytes each may come
 *	from that stream's upload (see S3CFS_UP_PART); a stream the daemon
 *	cannot use (unknown, failed, another key or layout) is aborted and
 *	the file goes up whole. With S3CFS_UP_PART (version 8; no
 *	condition flag): PATH, INO, STREAM, PARTS, LENGTH; SIZE is PARTS *
 *	LENGTH. The parts up to PARTS are written for good: put those not
 *	sent yet into the stream's multipart upload (opened at the stream's
 *	first). Answer 0 once they are taken on, not sent; -EBUSY (too many
 *	streams), -EOPNOTSUPP (the server ignores conditions on a Complete),
 *	-EINVAL, or the upload's failure: the kernel stops the stream. PARTS
 *	0 aborts the stream (answer 0 also when it is unknown).
 * @S3CFS_CMD_MKDIR: kernel -> daemon (version 4). Attrs: REQ_ID,
 *	MOUNT_ID, PATH (the parent), NAME. Put the directory's marker object
 *	"KEY/" (If-None-Match: *) and make the lower directory, empty and
 *	listed. Answer 0, -EEXIST (the marker exists), -EACCES, -EIO.
 * @S3CFS_CMD_DELETE: kernel -> daemon (version 4). Attrs: REQ_ID,
 *	MOUNT_ID, PATH (the parent), NAME, FLAGS (S3CFS_DEL_*). A file:
 *	DeleteObject KEY (the kernel removes the lower file). A directory
 *	(S3CFS_DEL_DIR): -ENOTEMPTY if S3 lists anything under "KEY/" but its
 *	marker, or the lower directory holds a LOCAL file; else DeleteObject
 *	"KEY/" and empty the lower directory (the kernel removes it). Answer
 *	0 (also when nothing was there), -ENOTEMPTY, -EACCES, -EIO.
 * @S3CFS_CMD_RENAME: kernel -> daemon (version 4). Attrs: REQ_ID,
 *	MOUNT_ID, PATH (source), PATH2 (destination), ETAG (the source's),
 *	SIZE. CopyObject with x-amz-copy-source-if-match: ETAG, then
 *	DeleteObject of the source (the kernel renames the lower file).
 *	Answer 0 with ETAG, the destination's; -ESTALE: the source is another
 *	version or gone; -EXDEV: larger than one CopyObject takes (5 GiB); -EIO
 *	(a failed delete leaves both keys), -EACCES.
 * @S3CFS_CMD_SETMETA: kernel -> daemon (version 5). Attrs: REQ_ID,
 *	MOUNT_ID, PATH, ETAG, SIZE, POSIX. Give the object new POSIX
 *	attributes: CopyObject of the key onto itself with
 *	x-amz-metadata-directive: REPLACE, x-amz-copy-source-if-match: ETAG
 *	and the x-amz-meta-* headers of POSIX (as s3fs-fuse's chmod does).
 *	The daemon does not touch the lower file. Answer 0 with ETAG, the
 *	object's ETag after the copy (it can differ: a multipart object
 *	copied whole gets a plain one); -ESTALE: the object is another
 *	version or gone; -EXDEV: larger than one CopyObject takes; -EACCES,
 *	-EIO. With FLAGS S3CFS_SETMETA_DIR (version 11), no ETAG: PATH is a
 *	directory and its marker "PATH/" takes the attributes, copied onto
 *	itself on the ETag a HEAD finds, or put (If-None-Match: *) where
 *	there is none; answer 0 with the marker's ETag.
 * @__S3CFS_CMD_MAX: number of commands
 */
enum s3cfs_cmd {
	S3CFS_CMD_UNSPEC,
	S3CFS_CMD_REGISTER,
	S3CFS_CMD_MOUNT,
	S3CFS_CMD_UMOUNT,
	S3CFS_CMD_FETCH,
	S3CFS_CMD_LOOKUP,
	S3CFS_CMD_LIST,
	S3CFS_CMD_EVICT,
	S3CFS_CMD_CANCEL,
	S3CFS_CMD_UPLOAD,
	S3CFS_CMD_MKDIR,
	S3CFS_CMD_DELETE,
	S3CFS_CMD_RENAME,
	S3CFS_CMD_SETMETA,
	__S3CFS_CMD_MAX,
};
#define S3CFS_CMD_MAX (__S3CFS_CMD_MAX - 1)

/**
 * enum s3cfs_attr - generic netlink attributes
 * @S3CFS_A_UNSPEC: never used
 * @S3CFS_A_VERSION: u32, protocol version (REGISTER)
 * @S3CFS_A_REQ_ID: u64, request id (kernel allocated)
 * @S3CFS_A_STATUS: s32, 0 or a negative errno (replies)
 * @S3CFS_A_MOUNT_ID: u32, the mount the request is for
 * @S3CFS_A_BUCKET: string, bucket name
 * @S3CFS_A_PREFIX: string, key prefix; empty or ending in '/'
 * @S3CFS_A_CACHE_DIR: string, absolute path of the cache root
 * @S3CFS_A_CHUNK_SIZE: u32, chunk size in bytes (power of two)
 * @S3CFS_A_PATH: string, path relative to the cache root, no leading '/';
 *	"" is the root. Key = PREFIX + PATH.
 * @S3CFS_A_NAME: string, one path component (LOOKUP)
 * @S3CFS_A_OFFSET: u64, byte offset (FETCH)
 * @S3CFS_A_LENGTH: u64, byte length (FETCH)
 * @S3CFS_A_ETAG: string, ETag of the cached object version (FETCH); the
 *	condition (UPLOAD); the source's (RENAME); the new object's (UPLOAD
 *	and RENAME answers)
 * @S3CFS_A_PAD: padding for 64-bit attributes
 * @S3CFS_A_DONE: u64, FETCH progress report (version 2): bytes of the range,
 *	from OFFSET, written to the cache so far; LIST progress report
 *	(version 6): bytes of the listing's log written so far
 * @S3CFS_A_PRIORITY: u32, FETCH and UPLOAD: enum s3cfs_prio; absent means
 *	S3CFS_PRIO_SYNC. The daemon serves metadata (LOOKUP, LIST) first,
 *	then SYNC fetches and uploads, then ASYNC ones (daemon/README.md,
 *	"Priorities"); an UPLOAD is ASYNC when nobody waits for it (a
 *	write-back mount's queue)
 * @S3CFS_A_SIZE: u64, UPLOAD: bytes to upload; RENAME: the source's size
 * @S3CFS_A_FLAGS: u32, UPLOAD: S3CFS_UP_*; LOOKUP: S3CFS_LOOKUP_*; MOUNT and its answer (version
 *	7): S3CFS_MOUNT_*; DELETE: S3CFS_DEL_*; SETMETA (version 11):
 *	S3CFS_SETMETA_*
 * @S3CFS_A_INO: u64, UPLOAD: inode number of the lower file; LIST
 *	progress report (version 6): inode number of the listing's log
 * @S3CFS_A_PATH2: string, RENAME: the destination, as PATH
 * @S3CFS_A_POSIX: binary struct s3cfs_posix (host byte order), UPLOAD,
 *	MKDIR, SETMETA: the POSIX attributes to store with the object
 * @S3CFS_A_UPLOAD_DELAY: u32, MOUNT's answer (version 7): seconds a
 *	write-back upload waits after the file's last close, at most
 *	S3CFS_UPLOAD_DELAY_MAX
 * @S3CFS_A_STREAM: u64, UPLOAD (version 8): a streamed upload's id, unique
 *	on the mount while the module is loaded
 * @S3CFS_A_PARTS: u32, UPLOAD (version 8): parts of the stream, at most
 *	S3CFS_STREAM_PARTS_MAX
 * @S3CFS_A_TOKEN: binary, S3CFS_TOKEN_LEN bytes, MOUNT (version 10): the
 *	value of S3CFS_XATTR_TOKEN on the cache root the kernel mounted
 * @__S3CFS_A_MAX: number of attributes
 */
enum s3cfs_attr {
	S3CFS_A_UNSPEC,
	S3CFS_A_VERSION,
	S3CFS_A_REQ_ID,
	S3CFS_A_STATUS,
	S3CFS_A_MOUNT_ID,
	S3CFS_A_BUCKET,
	S3CFS_A_PREFIX,
	S3CFS_A_CACHE_DIR,
	S3CFS_A_CHUNK_SIZE,
	S3CFS_A_PATH,
	S3CFS_A_NAME,
	S3CFS_A_OFFSET,
	S3CFS_A_LENGTH,
	S3CFS_A_ETAG,
	S3CFS_A_PAD,
	S3CFS_A_DONE,
	S3CFS_A_PRIORITY,
	S3CFS_A_SIZE,
	S3CFS_A_FLAGS,
	S3CFS_A_INO,
	S3CFS_A_PATH2,
	S3CFS_A_POSIX,
	S3CFS_A_UPLOAD_DELAY,
	S3CFS_A_STREAM,
	S3CFS_A_PARTS,
	S3CFS_A_TOKEN,
	__S3CFS_A_MAX,
};
#define S3CFS_A_MAX (__S3CFS_A_MAX - 1)

/**
 * enum s3cfs_prio - how urgent a FETCH is (S3CFS_A_PRIORITY)
 * @S3CFS_PRIO_SYNC: a reader is blocked on (the start of) the range: a
 *	->read_folio, a synchronous readahead window's first pages, a
 *	readahead worker whose folios a reader may be waiting on
 * @S3CFS_PRIO_ASYNC: readahead or prefetch ahead of the reader
 *	(the asynchronous readahead window, posix_fadvise(WILLNEED))
 */
enum s3cfs_prio {
	S3CFS_PRIO_SYNC,
	S3CFS_PRIO_ASYNC,
};

/* UPLOAD flags: the condition of the put (exactly one). */
/* SETMETA flags (S3CFS_A_FLAGS, version 11) */
#define S3CFS_SETMETA_DIR	0x01	/* PATH is a directory: its marker */

#define S3CFS_UP_NEW		0x01	/* If-None-Match: *, the key must not exist */
#define S3CFS_UP_MATCH		0x02	/* If-Match: ETAG, the object must be ETAG */
/* ... or none: parts of a stream are written (version 8). */
#define S3CFS_UP_PART		0x04
/* Parts a stream may have: the rest of a 5 TiB object fits S3's 10000. */
#define S3CFS_STREAM_PARTS_MAX	1000

/* DELETE flags. */
#define S3CFS_DEL_DIR		0x01	/* a directory: only if empty */

/* MOUNT flags. */
#define S3CFS_MOUNT_WRITABLE	0x01	/* the mount may create LOCAL files */
#define S3CFS_MOUNT_POSIX	0x02	/* record x-amz-meta-* (S3CFS_XATTR_POSIX) */
/* Only in MOUNT's answer: the bucket's writable mounts are write-back. */
#define S3CFS_MOUNT_WRITEBACK	0x04
/* Listings leave an index, not a lower file per object (version 9). */
#define S3CFS_MOUNT_INDEX	0x08

/* LOOKUP flags (version 9): the directory's index is fresh, answer from it. */
#define S3CFS_LOOKUP_INDEX	0x01
#define S3CFS_UPLOAD_DELAY_MAX	3600	/* s */

/**
 * struct s3cfs_posix - POSIX attributes of an object (S3CFS_A_POSIX)
 * @flags: which of the others are set (S3CFS_POSIX_*)
 * @mode: st_mode with its type bits (S_IFREG, S_IFLNK or S_IFDIR), as
 *	s3fs-fuse's x-amz-meta-mode (decimal)
 * @uid: x-amz-meta-uid
 * @gid: x-amz-meta-gid
 * @mtime_nsec: nanoseconds of @mtime
 * @mtime: x-amz-meta-mtime, seconds since the epoch ("SEC" or "SEC.NSEC")
 */
struct s3cfs_posix {
	__u32 flags;
	__u32 mode;
	__u32 uid;
	__u32 gid;
	__u32 mtime_nsec;
	__u32 pad;
	__s64 mtime;
};

#define S3CFS_POSIX_MODE	0x01
#define S3CFS_POSIX_UID		0x02
#define S3CFS_POSIX_GID		0x04
#define S3CFS_POSIX_MTIME	0x08
#define S3CFS_POSIX_ALL		0x0f

/* Limits, checked by both sides. Lengths exclude the terminating NUL. */
#define S3CFS_BUCKET_MAX	63
#define S3CFS_PREFIX_MAX	1024	/* an S3 key is at most 1024 bytes */
#define S3CFS_PATH_MAX		4095
#define S3CFS_ETAG_MAX		255
#define S3CFS_CHUNK_MIN		(64U << 10)
#define S3CFS_CHUNK_MAX		(64U << 20)
#define S3CFS_CHUNK_DEFAULT	(1U << 20)

/*
 * The cache directory (lower filesystem, ext4 or xfs).
 *
 * Key PREFIX + "a/b/c.bin" lives at <cache>/a/b/c.bin, a sparse file whose
 * size (i_size) is the object's size, or more: the last piece of an object
 * is written rounded up to 4 KiB and truncated back, and a crash between
 * the two leaves it longer. The object's size is in S3CFS_XATTR_META (or,
 * in an older cache, S3CFS_XATTR_SIZE), set before the file is linked. A chunk [n * CHUNK, (n + 1) * CHUNK) clamped
 * to that size is present iff its whole range is data (SEEK_DATA/SEEK_HOLE).
 *
 * A lower file's data always belongs to the ETag stored on it: the daemon
 * never changes the ETag of an existing file in place. A changed
 * object gets a new lower file, created with O_TMPFILE, sized, tagged, and
 * renamed over the old name (names beginning with S3CFS_HIDDEN_PREFIX are
 * the daemon's and never shown). Only the kernel punches holes in files
 * (S3CFS_CMD_EVICT). The kernel sets a lower file's atime when the file is
 * opened (at most once a minute): the daemon's LRU clock for eviction.
 */
/*
 * Files: the object's metadata in one value, set before the file has a name
 * and never changed (a changed object gets a new file). Little endian:
 *   [0]      S3CFS_META_VERSION (a copy of an object) or
 *            S3CFS_META_VERSION_LOCAL (a file written here, see below)
 *   [1]      flags: S3CFS_META_MD5 = the ETag is '"', 32 lowercase hex
 *            digits, a tail of at most S3CFS_META_TAIL_MAX bytes (a
 *            multipart "-N"), '"'; the digits are stored as 16 bytes
 *            followed by the tail. Otherwise the raw ETag follows.
 *            S3CFS_META_LOCAL (version 2 only): see below.
 *   [2..9]   size, u64 bytes
 *   [10..17] mtime (Last-Modified), s64 seconds since the epoch
 *   [18..]   ETag as above, at most S3CFS_ETAG_MAX bytes, no NUL
 * A reader refuses another version or a value shorter than its header (the
 * file is then renewed by the daemon, and sized by its i_size meanwhile).
 *
 * Version 2, flag S3CFS_META_LOCAL: the file holds bytes written on this
 * node that S3 may not have. Its content is all of its data (holes are
 * zeros), its size the kernel's; the ETag, if any, is the object version
 * the next upload must replace (none: the key must not exist). Only the
 * kernel writes, truncates or renames such a file; the daemon never
 * replaces, removes, prunes or evicts it, and reads it only for UPLOAD.
 * A successful upload turns it back into version 1 with the new ETag. An
 * older reader refuses version 2, so it never serves local bytes as an
 * object's.
 */
#define S3CFS_XATTR_META	"trusted.s3cachefs.meta"
#define S3CFS_META_VERSION	1
#define S3CFS_META_VERSION_LOCAL 2
#define S3CFS_META_MD5		0x01
#define S3CFS_META_LOCAL	0x02
#define S3CFS_META_OFF_SIZE	2
#define S3CFS_META_OFF_MTIME	10
#define S3CFS_META_OFF_ETAG	18
#define S3CFS_META_TAIL_MAX	16
#define S3CFS_META_MAX		(S3CFS_META_OFF_ETAG + S3CFS_ETAG_MAX)
/*
 * The older form (caches written before S3CFS_XATTR_META), read when a file
 * has no S3CFS_XATTR_META:
 */
/* Files: the raw ETag, as S3 sent it (quotes included). */
#define S3CFS_XATTR_ETAG	"trusted.s3cachefs.etag"
/* Files: Last-Modified, decimal seconds since the epoch. */
#define S3CFS_XATTR_MTIME	"trusted.s3cachefs.mtime"
/*
 * Files: the object's size, decimal bytes; set with the ETag, before the
 * file has a name, and never changed. Files of older caches lack it: their
 * size is their i_size, until the daemon next meets them (LOOKUP, LIST) and
 * adds it (i_size equal to S3's size) or renews the file (not equal).
 */
#define S3CFS_XATTR_SIZE	"trusted.s3cachefs.size"
/*
 * Files, on mounts with posix_meta (S3CFS_MOUNT_POSIX): the object's
 * x-amz-meta-mode, -uid, -gid and -mtime as a HEAD found them, or as the
 * kernel uploaded or set them. 24 bytes, little endian:
 *   [0]      S3CFS_POSIX_VERSION
 *   [1]      S3CFS_POSIX_* flags: which fields the object has (none: it
 *            has no such headers; the mount's defaults apply)
 *   [2..3]   0
 *   [4..7]   mode   [8..11] uid   [12..15] gid
 *   [16..23] mtime, s64 seconds; the nanoseconds are not kept
 * The daemon sets it on a file it makes at LOOKUP (before the link) and
 * on an existing file of the same ETag whose HEAD it checked (in place: a
 * chmod elsewhere keeps the ETag). A file without it has not been HEADed:
 * on a posix_meta mount the kernel asks LOOKUP about it before use.
 */
#define S3CFS_XATTR_POSIX	"trusted.s3cachefs.posix"
#define S3CFS_POSIX_VERSION	1
#define S3CFS_POSIX_XATTR_LEN	24
/* Directories: decimal seconds (CLOCK_REALTIME) of the last full listing. */
#define S3CFS_XATTR_LISTED	"trusted.s3cachefs.listed"
/*
 * Write-back mounts: a LOCAL file whose content a close or fsync
 * acknowledged has a hard link .s3cachefs/pending/<its inode number>
 * (S3CFS_PENDING_DIR) and this xattr: its path(s) relative to the mount
 * root, NUL-separated (two for a rename in progress). The link is removed
 * once the upload is done, or before the file changes again.
 */
#define S3CFS_XATTR_PENDING	"trusted.s3cachefs.pending"
/*
 * ioctl on any file or directory of a mount: upload what the mount's
 * write-back queue holds now and wait (s3cachectl sync). 0 once nothing
 * is queued (always on a mount without writeback), EIO if an upload
 * failed meanwhile (it stays queued), EINTR if killed. EPERM unless the
 * caller owns the file it is made on or has CAP_SYS_ADMIN: it starts
 * every queued upload of the mount, everyone's.
 */
#define S3CFS_IOC_SYNC		_IO(0xb3, 1)
/*
 * ioctl on a regular file of a mount: where its content stands against
 * S3 (s3cachectl status). No flag: a copy of an object, or not cached.
 */
struct s3cfs_ioc_state {
	__u32 flags;		/* S3CFS_STATE_* */
	__u32 tries;		/* write-back: failed uploads in a row */
	__u64 queued_ms;	/* write-back: how long it has owed an upload */
	__u64 cached;		/* S3CFS_STATE_CACHED: bytes of it in the cache */
	__u64 spare;		/* zero */
};

#define S3CFS_STATE_LOCAL	0x1	/* written here, not in S3 as it is */
#define S3CFS_STATE_DIRTY	0x2	/* changed since its last upload or acknowledgment */
#define S3CFS_STATE_QUEUED	0x4	/* acknowledged (write-back), recorded for upload */
#define S3CFS_STATE_UPLOADING	0x8	/* an upload of it is under way */
#define S3CFS_STATE_CACHED	0x10	/* @cached is set */
#define S3CFS_IOC_STATE		_IOR(0xb3, 2, struct s3cfs_ioc_state)
/*
 * ioctl on any file or directory of a mount, CAP_SYS_ADMIN (s3cachectl
 * evict): punch [offset, offset + length) of the file at @path (relative
 * to the mount's root, no leading '/') out of the cache, as the daemon's
 * EVICT does: by its cache file, looked up in the cache directory, not
 * through the mount. @offset chunk aligned; @length chunk aligned or
 * reaching the end of the file. Errors as EVICT's: EBUSY (a fetch in
 * flight in the range, or the file is written here), EINVAL, ENOENT.
 * Netlink EVICT is the registered daemon's only.
 */
struct s3cfs_ioc_evict {
	__u64 offset;
	__u64 length;
	char path[S3CFS_PATH_MAX + 1];	/* NUL-terminated */
};

#define S3CFS_IOC_EVICT		_IOW(0xb3, 3, struct s3cfs_ioc_evict)
/*
 * A copy kept under .s3cachefs/conflicts/ (its upload met a change made
 * in S3 meanwhile): the path it was written at, relative to the mount.
 */
#define S3CFS_XATTR_CONFLICT	"trusted.s3cachefs.conflict"
#define S3CFS_CONFLICTS_DIR	".s3cachefs/conflicts"
#define S3CFS_PENDING_DIR	".s3cachefs/pending"
#define S3CFS_META_DIR		".s3cachefs"	/* at the cache root: format marker, daemon state */
#define S3CFS_FORMAT_FILE	".s3cachefs/format"	/* "version=1\nbucket=B\nprefix=P\n" */
#define S3CFS_FORMAT_VERSION	1
#define S3CFS_HIDDEN_PREFIX	".s3cfs"	/* daemon temporaries, hidden */
/*
 * The cache root (protocol 10): random bytes the kernel writes at every
 * mount and sends with MOUNT (S3CFS_A_TOKEN). The daemon serves a mount
 * only from a root that carries them: a directory swapped in for the
 * cache (a symlink above it, a rename) does not, and an unprivileged user
 * cannot set a trusted.* xattr.
 */
#define S3CFS_XATTR_TOKEN	"trusted.s3cachefs.token"
#define S3CFS_TOKEN_LEN		16

/*
 * The log of a listing in progress (protocol 6): at the cache root,
 * S3CFS_LISTING_DIR "/<decimal inode number of the lower directory>",
 * made afresh when a LIST of that directory begins and unlinked when it
 * ends. Records of every name the finished listing leaves in the lower
 * directory, in the order they were applied (the objects and prefixes of
 * each page, then the names the listing kept that S3 did not list), each
 * S3CFS_LIST_REC_ALIGN aligned: a header, then @namelen bytes of name (no
 * NUL, no '/'), then @metalen bytes (see the index below; 0 without),
 * then zeros to the alignment. @type is DT_REG or DT_DIR, @ino the lower
 * entry's inode number. Readers read up to the DONE of the
 * last progress report only.
 */
#define S3CFS_LISTING_DIR	".s3cachefs/lists"
#define S3CFS_LIST_REC_ALIGN	8
struct s3cfs_list_rec {
	__u64 ino;
	__u16 namelen;
	__u8 type;
	__u8 metalen;
	__u8 pad[4];
};
/*
 * A directory's index (version 9, S3CFS_MOUNT_INDEX): the log of its last
 * listing, kept when the listing ends. Its records (as above; METALEN
 * bytes of S3CFS_XATTR_META follow the name, INO 0 for an object with no
 * lower file: it is made at its first LOOKUP, from the record; an object
 * whose value would not fit in 255 bytes gets its lower file) are the
 * directory's entries: a file for each object and a directory for each
 * common prefix, then the names the listing kept that S3 did not list.
 * After the records, for the daemon's lookups: COUNT pairs of __u32
 * (the low half of the name's 64-bit FNV-1a, record offset), sorted, then struct
 * s3cfs_index_tail. S3CFS_XATTR_INDEX on the lower directory, set once
 * the file is written, removed when a listing of the directory begins,
 * says "<listing's seconds> <index inode number>
 * <bytes of records>". A listing that leaves no index removes
 * S3CFS_XATTR_LISTED from the directory, whose lower directory then does
 * not hold every object. Indexes are cleared at each MOUNT (the xattr
 * then names no file: the daemon answers a LOOKUP with INDEX from S3).
 */
#define S3CFS_XATTR_INDEX	"trusted.s3cachefs.index"
#define S3CFS_INDEX_MAGIC	0x3178646e69336373ULL	/* "sc3indx1", little endian */
struct s3cfs_index_tail {
	__u64 records;
	__u64 count;
	__u64 magic;
};
/*
 * At the cache root, the lower filesystem's own: a cache directory that is
 * the root of an ext4 (or repaired xfs) has it. Never shown, looked up,
 * created, listed into, pruned or evicted from, wherever the cache is (so an
 * object of exactly this name at the top of the prefix is not served).
 */
#define S3CFS_LOST_FOUND	"lost+found"

#endif /* _UAPI_LINUX_S3CACHEFS_H */
