// SPDX-License-Identifier: GPL-2.0
/*
 * Streamed uploads (protocol 8). While a file is written from its start,
 * in order, the kernel tells us each time more of its parts are in the
 * lower file for good (an UPLOAD with S3CFS_UP_PART: parts 1..PARTS of
 * LENGTH bytes). They go up into a multipart upload opened at the first
 * (s3d_mpu_open()), while the writer goes on, and the kernel is answered
 * once they are taken on. The close or fsync's UPLOAD names the stream
 * and how many of its parts hold the file's first bytes
 * (s3d_stream_finish()): only the rest is sent then, and the Complete
 * carries that UPLOAD's condition, so a stream changes nothing about
 * conflicts. The upload is created with the writer token (writer.c) of
 * the base version the file's LOCAL tag names then; a close conditional
 * on another does not use the stream.
 *
 * A stream the final UPLOAD cannot use (a part failed, the file was
 * renamed, another layout, other POSIX attributes, another base version,
 * a stream this daemon never saw) is aborted, and the file goes up whole.
 * The upload is created with the attributes of the first parts but the
 * mtime, which changes while the file is written: the object's time is
 * S3's. PARTS 0 aborts one (the file was rewritten, truncated or
 * unlinked); so does the mount's UMOUNT. A daemon that dies leaves the
 * stream's upload in the journal (mpu.c): the next one aborts it at
 * MOUNT, as any other.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "lib/config.h"
#include "lib/log.h"
#include "lib/path.h"
#include "lib/util.h"
#include "caps.h"
#include "op_common.h"
#include "store.h"
#include "stream.h"
#include "writer.h"

struct s3d_stream {
	struct s3d_list link;		/* on streams */
	uint32_t mount_id;
	uint64_t id;
	uint64_t ino;			/* the lower file's */
	uint64_t part;			/* bytes per part */
	char *key;
	bool has_posix;			/* the upload was created with: */
	struct s3cfs_posix posix;	/* ... these (no mtime) */
	char base[S3CFS_ETAG_MAX + 1];	/* ... this base version ("": new) */
	char token[S3D_WRITER_TOKEN_LEN + 1];	/* ... and its writer token */
	struct s3d_mpu *mpu;		/* NULL once it failed */
	int err;			/* ... with this */
};

static struct s3d_list streams = { &streams, &streams };
static unsigned int nstreams;


static struct s3d_stream *stream_find(uint32_t mount_id, uint64_t id)
{
	struct s3d_list *pos;

	for (pos = streams.next; pos != &streams; pos = pos->next) {
		struct s3d_stream *st = s3d_container_of(pos, struct s3d_stream,
							 link);

		if (st->mount_id == mount_id && st->id == id)
			return st;
	}
	return NULL;
}

/* Off the table; its upload, if any, is aborted in the background. */
static void stream_drop(struct s3d_stream *st)
{
	s3d_list_del(&st->link);
	nstreams--;
	if (st->mpu)
		s3d_mpu_cancel(st->mpu);
	free(st->key);
	free(st);
}

/* The upload failed before the file was complete (it is aborted). */
static void stream_failed(void *arg, int err, const char *etag)
{
	struct s3d_stream *st = arg;

	(void)etag;
	s3d_warn("UPLOAD s3://.../%s: stream %" PRIu64 " failed (%s): the file goes up whole at its close",
		 st->key, st->id, strerror(-err));
	st->mpu = NULL;
	st->err = err ?: -EIO;
}

/* A new stream: its upload opened on the kernel's lower file. */
static int stream_open(struct s3d_req *r, struct s3d_mount *m,
		       struct s3d_ctx *ctx, unsigned int parallel,
		       struct s3d_stream **stp)
{
	char base[S3CFS_ETAG_MAX + 1];
	struct s3d_stream *st;
	struct stat sb;
	int fd, err;

	if (s3d_caps_of(m->bucket)->complete_ignores)
		return -EOPNOTSUPP;
	if (nstreams >= S3D_STREAMS_MAX)
		return -EBUSY;
	err = s3d_store_open_file(m->rootfd, r->path, O_RDONLY, &fd);
	if (err)
		return err == -ENOENT || err == -EISDIR ? -EIO : err;
	if (fstat(fd, &sb) || (uint64_t)sb.st_ino != r->ino ||
	    s3d_store_local_base(fd, base)) {
		close(fd);
		return -EIO;
	}
	st = calloc(1, sizeof(*st));
	if (!st) {
		close(fd);
		return -ENOMEM;
	}
	st->mount_id = m->id;
	st->id = r->stream;
	st->ino = r->ino;
	st->part = r->len;
	st->has_posix = r->has_posix;
	st->posix = r->posix;
	strcpy(st->base, base);
	st->key = s3d_key_of(m->prefix, r->path, NULL);
	if (st->key && s3d_writer_token(fd, m->bucket, st->key,
					base[0] ? base : NULL, st->token))
		st->token[0] = '\0';
	if (st->key) {
		struct s3d_mpu_params p = {
			.ctx = ctx, .bucket = m->bucket, .key = st->key,
			.fd = fd, .rootfd = m->rootfd, .part_size = r->len,
			.parallel = parallel,
			.prio = S3D_PRIO_ASYNC,
			.posix = st->has_posix ? &st->posix : NULL,
			.token = st->token,
			.done = stream_failed, .arg = st,
		};

		st->mpu = s3d_mpu_open(&p, &err);
	} else {
		err = -ENOMEM;
	}
	close(fd);
	if (!st->mpu) {
		free(st->key);
		free(st);
		return err;
	}
	s3d_list_add_tail(&st->link, &streams);
	nstreams++;
	s3d_dbg("UPLOAD s3://%s/%s: stream %" PRIu64 " opened, parts of %" PRIu64 " bytes",
		m->bucket, st->key, st->id, st->part);
	*stp = st;
	return 0;
}

/**
 * s3d_stream_part() - an UPLOAD with S3CFS_UP_PART: more parts are written
 * @r: the request (PATH, INO, STREAM, PARTS, LENGTH)
 * @m: its mount (put when answered)
 * @ctx: its bucket's context (put when answered)
 * @parallel: parts in flight at most
 *
 * Answered at once: 0 when the parts are taken on (they go up in the
 * background, behind reads), or why the kernel should stop streaming.
 */
void s3d_stream_part(struct s3d_req *r, struct s3d_mount *m,
		     struct s3d_ctx *ctx, unsigned int parallel)
{
	struct s3d_stream *st = stream_find(m->id, r->stream);
	int err = -EINVAL;

	if (!r->stream || r->parts > S3CFS_STREAM_PARTS_MAX ||
	    (r->flags & (S3CFS_UP_NEW | S3CFS_UP_MATCH)))
		goto out;
	if (!r->parts) {
		/* Abort: rewritten, truncated, unlinked or forgotten. */
		if (st) {
			s3d_dbg("UPLOAD s3://%s/%s: stream %" PRIu64 " aborted by the kernel",
				m->bucket, st->key, st->id);
			s3d_upload_stats.stream_dropped++;
			stream_drop(st);
		}
		err = 0;
		goto out;
	}
	if (r->len < S3D_PART_MIN || r->len > S3D_SINGLE_MAX)
		goto out;
	if (!st) {
		err = stream_open(r, m, ctx, parallel, &st);
		if (err)
			goto out;
	}
	err = -EINVAL;
	if (st->ino != r->ino || st->part != r->len)
		goto out;
	err = st->mpu ? s3d_mpu_ready(st->mpu, r->parts) : st->err;
out:
	if (err)
		s3d_dbg("UPLOAD %s: stream %" PRIu64 ", %u parts: %s", r->path,
			r->stream, r->parts, strerror(-err));
	s3d_op_done(r, m, ctx, err);
}

/*
 * The close's attributes are those the upload was created with, but the
 * mtime: a stream's object has none of its own (its time is S3's, that of
 * the Complete); the kernel breaks a stream at a chmod, chown or utimes.
 */
static bool posix_same(const struct s3d_stream *st,
		       const struct s3cfs_posix *p)
{
	uint32_t f = st->posix.flags;

	if (!p || !st->has_posix)
		return !p == !st->has_posix;
	if ((p->flags & ~S3CFS_POSIX_MTIME) != f)
		return false;
	return (!(f & S3CFS_POSIX_MODE) || p->mode == st->posix.mode) &&
	       (!(f & S3CFS_POSIX_UID) || p->uid == st->posix.uid) &&
	       (!(f & S3CFS_POSIX_GID) || p->gid == st->posix.gid);
}

/*
 * The close's condition is the version the stream's upload was created
 * on (its LOCAL tag's base then): the writer token it carries names it.
 */
static bool base_same(const struct s3d_stream *st, const struct s3d_req *r)
{
	if (r->flags & S3CFS_UP_MATCH)
		return r->etag && st->base[0] && s3d_etag_eq(st->base, r->etag);
	return !st->base[0];
}

/**
 * s3d_stream_finish() - the close or fsync's UPLOAD of a streamed file
 * @m: the mount
 * @r: the UPLOAD (STREAM, PARTS, LENGTH)
 * @key: its key
 * @p: the whole upload's parameters (size, condition, @done)
 * @usable: the server honours a Complete's condition (caps.c)
 *
 * Return: the stream's upload, now carrying @p's size and condition (its
 * end is @p->done), or NULL: no usable stream (one that was there is
 * aborted); the caller uploads the file whole.
 */
struct s3d_mpu *s3d_stream_finish(struct s3d_mount *m, struct s3d_req *r,
				  const char *key,
				  const struct s3d_mpu_params *p, bool usable)
{
	struct s3d_stream *st = stream_find(m->id, r->stream);
	struct s3d_mpu *u;
	const char *why = NULL;

	if (!st) {
		s3d_dbg("UPLOAD s3://%s/%s: stream %" PRIu64 " unknown here: the file goes up whole",
			m->bucket, key, r->stream);
		return NULL;
	}
	if (!st->mpu)
		why = "it failed";
	else if (!usable)
		why = "the server ignores conditions on a Complete";
	else if (!r->parts)
		why = "the kernel dropped it";
	else if (st->ino != r->ino || st->part != r->len)
		why = "another file";
	else if (strcmp(st->key, key))
		why = "renamed";
	else if (!posix_same(st, p->posix))
		why = "other attributes";
	else if (!base_same(st, r))
		why = "another base version";
	else if (s3d_mpu_close(st->mpu, p, r->parts))
		why = "its parts do not fit";
	if (why) {
		s3d_info("UPLOAD s3://%s/%s: stream %" PRIu64 " not used (%s): the file goes up whole",
			 m->bucket, key, st->id, why);
		s3d_upload_stats.stream_dropped++;
		stream_drop(st);
		return NULL;
	}
	u = st->mpu;
	st->mpu = NULL;
	stream_drop(st);
	s3d_upload_stats.streamed++;
	return u;
}

/* UMOUNT: the mount's streams are aborted. */
void s3d_stream_drop_mount(uint32_t mount_id)
{
	struct s3d_list *pos, *next;

	for (pos = streams.next; pos != &streams; pos = next) {
		struct s3d_stream *st = s3d_container_of(pos, struct s3d_stream,
							 link);

		next = pos->next;
		if (st->mount_id == mount_id)
			stream_drop(st);
	}
}
