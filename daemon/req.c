// SPDX-License-Identifier: GPL-2.0
/*
 * A request's life: s3d_req_begin() counts it, s3d_req_join() makes a
 * request the kernel re-sent ride on the same work already under way,
 * s3d_req_progress() tells the kernel it still runs (and a timer does so
 * while bytes move), s3d_req_finish() answers it and its riders once.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/base.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/util.h"
#include "req.h"
#include "uapi/s3cachefs.h"

static struct s3d_list active = { &active, &active };	/* s3d_req.active */
static unsigned int pending;
static struct s3d_timer progress_timer;

/* Tell the kernel @r (and every request riding on it) is still going. */
void s3d_req_progress(struct s3d_req *r)
{
	uint64_t now = s3d_now_ms();
	struct s3d_req *x;

	for (x = r; x; x = x == r ? r->riders : x->rider_next) {
		x->reported_ms = now;
		x->done = r->done;
		if (x->progress && !x->cancelled)
			x->progress(x);
	}
}

/* A LIST's log: @done bytes of the log @ino, for @r and its riders. */
void s3d_req_set_log(struct s3d_req *r, uint64_t done, uint64_t ino)
{
	struct s3d_req *x;

	for (x = r; x; x = x == r ? r->riders : x->rider_next) {
		x->done = done;
		x->ino = ino;
	}
}

static void progress_tick(struct s3d_timer *t)
{
	uint64_t now = s3d_now_ms();
	struct s3d_list *pos;

	for (pos = active.next; pos != &active; pos = pos->next) {
		struct s3d_req *a = s3d_container_of(pos, struct s3d_req, active);

		/*
		 * Only while bytes move, while S3 works on it without
		 * sending any (a copy answers at its end), or while it waits
		 * for a slot (the daemon's own queue, not S3's fault): a
		 * transfer that is stuck, or backing off, must not keep the
		 * kernel waiting past fetch_timeout; the retry policy bounds
		 * it below that.
		 */
		if (now - a->reported_ms >= S3D_PROGRESS_MS &&
		    (a->moved || a->server_busy || !a->started)) {
			a->moved = false;
			s3d_req_progress(a);
		}
	}
	if (!s3d_list_empty(&active))
		s3d_timer_arm(t, S3D_PROGRESS_TICK_MS);
}

void s3d_req_free(struct s3d_req *r)
{
	if (!r)
		return;
	free(r->path);
	free(r->name);
	free(r->etag);
	free(r->path2);
	free(r->reply_etag);
	free(r->bucket);
	free(r->prefix);
	free(r->cache_dir);
	free(r);
}

/*
 * Answer @r, and every request riding on it, with @status; a request the
 * kernel gave up (s3d_req_cancel()) is freed unanswered.
 */
void s3d_req_finish(struct s3d_req *r, int status)
{
	struct s3d_req *rider = r->riders;

	if (r->active.next)
		s3d_list_del(&r->active);
	pending--;
	s3d_dbg("request %llu (cmd %d) done: %d%s", (unsigned long long)r->id,
		r->cmd, status, r->cancelled ? " (cancelled: no reply)" : "");
	if (r->cancelled)
		s3d_req_free(r);
	else
		r->reply(r, status);
	while (rider) {
		struct s3d_req *next = rider->rider_next;

		pending--;
		rider->reply(rider, status);
		rider = next;
	}
}

static bool same_req(const struct s3d_req *a, const struct s3d_req *b)
{
	if (a->cmd != b->cmd || a->mount_id != b->mount_id ||
	    !s3d_str_eq(a->path, b->path))
		return false;
	/*
	 * Each names a snapshot of a file the kernel holds, or answers with
	 * an ETag of its own: never shared.
	 */
	if (a->cmd == S3CFS_CMD_UPLOAD || a->cmd == S3CFS_CMD_RENAME ||
	    a->cmd == S3CFS_CMD_SETMETA)
		return false;
	/* One the index answers is not one S3 answers (S3CFS_LOOKUP_INDEX). */
	if (a->cmd == S3CFS_CMD_LOOKUP)
		return s3d_str_eq(a->name, b->name) && a->flags == b->flags;
	/* A marker with other attributes is another marker. */
	if (a->cmd == S3CFS_CMD_MKDIR)
		return s3d_str_eq(a->name, b->name) &&
		       a->has_posix == b->has_posix &&
		       !memcmp(&a->posix, &b->posix, sizeof(a->posix));
	if (a->cmd == S3CFS_CMD_DELETE)
		return s3d_str_eq(a->name, b->name) && a->flags == b->flags;
	if (a->cmd == S3CFS_CMD_FETCH)
		return a->off == b->off && a->len == b->len &&
		       s3d_str_eq(a->etag, b->etag);
	return true;
}

/*
 * The kernel re-sends a request whose wait timed out (or after a daemon
 * restart) under a new id. If the same work is already under way, answer
 * the newcomer with it instead of starting over: a 10k-entry listing on a
 * slow server must not restart (and slow itself down) with every retry.
 */
bool s3d_req_join(struct s3d_req *r)
{
	struct s3d_list *pos;

	for (pos = active.next; pos != &active; pos = pos->next) {
		struct s3d_req *a = s3d_container_of(pos, struct s3d_req, active);

		if (!same_req(a, r))
			continue;
		s3d_dbg("request %llu joins request %llu (same work in progress)",
			(unsigned long long)r->id, (unsigned long long)a->id);
		r->rider_next = a->riders;
		a->riders = r;
		return true;
	}
	s3d_list_add_tail(&r->active, &active);
	if (!progress_timer.armed)
		s3d_timer_arm(&progress_timer, S3D_PROGRESS_TICK_MS);
	return false;
}

/**
 * s3d_req_cancel() - the kernel gave request @id of mount @mount_id up
 * @mount_id: its mount
 * @id: its id
 *
 * A request riding on another's work is dropped at once; the work goes on
 * for the others. A request with riders is only marked: its work goes on
 * and it is freed unanswered at the end. One alone is marked and its work
 * stopped, where the operation can (@cancel; a LIST can), else left to
 * end unanswered.
 *
 * Return: true if such a request was pending.
 */
bool s3d_req_cancel(uint32_t mount_id, uint64_t id)
{
	struct s3d_list *pos;

	for (pos = active.next; pos != &active; pos = pos->next) {
		struct s3d_req *a = s3d_container_of(pos, struct s3d_req, active);
		struct s3d_req **pp;

		if (a->mount_id != mount_id)
			continue;
		if (a->id == id) {
			a->cancelled = true;
			s3d_info("request %llu (cmd %d) cancelled by the kernel%s",
				 (unsigned long long)id, a->cmd,
				 a->riders ? "; its work goes on for others" :
				 a->cancel ? "; stopping it" : "");
			if (!a->riders && a->cancel)
				a->cancel(a->cancel_arg);
			return true;
		}
		for (pp = &a->riders; *pp; pp = &(*pp)->rider_next) {
			struct s3d_req *x = *pp;

			if (x->id != id)
				continue;
			*pp = x->rider_next;
			pending--;
			s3d_info("request %llu (cmd %d) cancelled by the kernel; it rode on request %llu, which goes on",
				 (unsigned long long)id, x->cmd,
				 (unsigned long long)a->id);
			s3d_req_free(x);
			/* The last one that wanted it gone too: stop. */
			if (a->cancelled && !a->riders && a->cancel)
				a->cancel(a->cancel_arg);
			return true;
		}
	}
	return false;
}

/* Requests handed in and not yet answered. */
unsigned int s3d_req_pending(void)
{
	return pending;
}

void s3d_req_init(void)
{
	s3d_list_init(&progress_timer.node);
	progress_timer.fn = progress_tick;
}

void s3d_req_fini(void)
{
	s3d_timer_cancel(&progress_timer);
}

/* @r is handed in: count it until its reply. */
void s3d_req_begin(struct s3d_req *r)
{
	pending++;
	r->reported_ms = s3d_now_ms();
}

/* @r is a notification (no reply): done with it. */
void s3d_req_drop(struct s3d_req *r)
{
	pending--;
	s3d_req_free(r);
}
