// SPDX-License-Identifier: GPL-2.0
/*
 * A walk of every regular file under a cache root (for the usage count a
 * mount starts with), done from the event loop a slice at a time.
 *
 * MOUNT is sent for every live mount each time the daemon registers, and
 * a cache may hold millions of files: walked in one go, the loop would not
 * answer any other request (another mount's FETCH or LOOKUP) until the
 * kernel's timeouts ran out. A slice takes at most WALK_SLICE entries or
 * WALK_SLICE_MS, then a timer continues the walk after the loop has had
 * its turn. An explicit stack of open directories replaces recursion, so
 * a walk can stop anywhere. The tree may change meanwhile: entries that
 * vanish are skipped, and the caller's own updates (a stat after a FETCH)
 * are simply overwritten by a later stat of the same file, which is as
 * fresh.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/loop.h"
#include "lib/util.h"
#include "walk.h"
#include "uapi/s3cachefs.h"

#define WALK_SLICE	1024	/* entries per slice at most */
#define WALK_SLICE_MS	5	/* and this long at most */
#define WALK_DEPTH	512	/* deeper directories are not entered */

unsigned int s3d_walk_delay_us;

struct frame {
	DIR *d;
	char *rel;		/* "" for the root */
};

struct s3d_walk {
	struct s3d_timer timer;	/* first member: the timer's callback */
	struct frame *stack;
	size_t depth;		/* frames in use */
	int (*file)(void *arg, const char *path, const struct stat *st);
	void (*done)(void *arg, int err);
	void *arg;
};

static int push(struct s3d_walk *w, int dirfd, const char *name,
		const char *rel)
{
	int fd = openat(dirfd, name,
			O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct frame *f;

	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
	f = &w->stack[w->depth];
	f->d = fdopendir(fd);
	f->rel = strdup(rel);
	if (!f->d || !f->rel) {
		if (f->d)
			closedir(f->d);
		else
			close(fd);
		free(f->rel);
		return -ENOMEM;
	}
	w->depth++;
	return 0;
}

static void pop(struct s3d_walk *w)
{
	struct frame *f = &w->stack[--w->depth];

	closedir(f->d);
	free(f->rel);
}

/* One entry of the top directory; 1 when that directory is done. */
static int step(struct s3d_walk *w)
{
	struct frame *f = &w->stack[w->depth - 1];
	struct dirent *de;
	struct stat st;
	char *path;
	int err = 0;

	errno = 0;
	de = readdir(f->d);
	if (!de)
		return errno ? -errno : 1;
	if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
		return 0;
	if (!*f->rel && (!strcmp(de->d_name, S3CFS_META_DIR) ||
			 !strcmp(de->d_name, S3CFS_LOST_FOUND)))
		return 0;
	if (fstatat(dirfd(f->d), de->d_name, &st, AT_SYMLINK_NOFOLLOW))
		return 0;	/* gone meanwhile */
	if (asprintf(&path, "%s%s%s", f->rel, *f->rel ? "/" : "",
		     de->d_name) < 0)
		return -ENOMEM;
	if (S_ISREG(st.st_mode))
		err = w->file(w->arg, path, &st);
	else if (S_ISDIR(st.st_mode) && w->depth < WALK_DEPTH)
		err = push(w, dirfd(f->d), de->d_name, path);
	free(path);
	return err;
}

static void walk_free(struct s3d_walk *w)
{
	while (w->depth)
		pop(w);
	free(w->stack);
	free(w);
}

static void slice(struct s3d_timer *t)
{
	struct s3d_walk *w = (struct s3d_walk *)t;
	uint64_t end = s3d_now_ms() + WALK_SLICE_MS;
	void (*done)(void *arg, int err) = w->done;
	void *arg = w->arg;
	unsigned int n;
	int err = 0;

	for (n = 0; w->depth && n < WALK_SLICE; n++) {
		if (s3d_walk_delay_us)
			usleep(s3d_walk_delay_us);
		err = step(w);
		if (err == 1) {
			pop(w);
			err = 0;
		}
		if (err || s3d_now_ms() >= end)
			break;
	}
	if (!err && w->depth) {
		/* Not 0: a timer due now would run again before any I/O. */
		s3d_timer_arm(&w->timer, 1);
		return;
	}
	walk_free(w);
	done(arg, err);
}

/**
 * s3d_walk_start() - walk the regular files under @rootfd
 * @rootfd: the cache root (not closed; may be O_PATH)
 * @file: called for each regular file with its path relative to the root
 *	and its stat (.s3cachefs and lost+found at the root are left out);
 *	a -errno return ends the walk with that error
 * @done: called once at the end, from the loop, with 0 or the -errno that
 *	ended the walk (not called after s3d_walk_cancel())
 * @arg: for the callbacks
 *
 * The first slice runs from the loop, as every other.
 *
 * Return: the walk, or NULL (-errno in errno; no callback is made).
 */
struct s3d_walk *s3d_walk_start(int rootfd,
				int (*file)(void *arg, const char *path,
					    const struct stat *st),
				void (*done)(void *arg, int err), void *arg)
{
	struct s3d_walk *w = calloc(1, sizeof(*w));
	int err;

	if (!w) {
		errno = ENOMEM;
		return NULL;
	}
	w->stack = calloc(WALK_DEPTH, sizeof(*w->stack));
	w->timer.fn = slice;
	w->file = file;
	w->done = done;
	w->arg = arg;
	err = w->stack ? push(w, rootfd, ".", "") : -ENOMEM;
	if (!err && !w->depth)
		err = -ENOENT;
	if (err) {
		walk_free(w);
		errno = -err;
		return NULL;
	}
	s3d_timer_arm(&w->timer, 0);
	return w;
}

/* Stop @w; its callbacks are not called again. */
void s3d_walk_cancel(struct s3d_walk *w)
{
	if (!w)
		return;
	s3d_timer_cancel(&w->timer);
	walk_free(w);
}
