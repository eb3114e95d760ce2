// SPDX-License-Identifier: GPL-2.0
/*
 * The event loop.
 *
 * One epoll set holds everything the process waits on: the netlink socket,
 * the signalfd, the metrics listener, and every socket libcurl opens
 * (curlm.c puts them there). libcurl's timeouts and the retry back-offs
 * are timers on a list sorted by due time whose head bounds the
 * epoll_wait() timeout. Each turn first calls the turn hook (the transfer
 * engine starts queued transfers there), then waits, then runs the
 * callbacks of the ready descriptors and the timers that are due.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>

#include "base.h"
#include "log.h"
#include "loop.h"
#include "util.h"

static struct {
	int epfd;
	void (*turn)(void);	/* called at the start of every turn */
	struct s3d_list timers;	/* s3d_timer.node: armed, by due time */
	struct s3d_list dead;	/* s3d_watch.node: freed after the batch */
	bool stop;
} loop = {
	.epfd = -1,
	.timers = { &loop.timers, &loop.timers },
	.dead = { &loop.dead, &loop.dead },
};

/**
 * s3d_loop_open() - create the epoll set (once; later calls do nothing)
 *
 * Return: 0 or -errno (logged).
 */
int s3d_loop_open(void)
{
	if (loop.epfd >= 0)
		return 0;
	s3d_list_init(&loop.timers);
	s3d_list_init(&loop.dead);
	loop.stop = false;
	loop.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (loop.epfd < 0) {
		s3d_err("epoll_create1: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

/* Set the function called at the start of every turn (NULL: none). */
void s3d_loop_set_turn(void (*fn)(void))
{
	loop.turn = fn;
}

/* ---- timers ---- */

void s3d_timer_arm(struct s3d_timer *t, uint64_t delay_ms)
{
	struct s3d_list *pos;

	s3d_timer_cancel(t);
	t->due_ms = s3d_now_ms() + delay_ms;
	for (pos = loop.timers.next; pos != &loop.timers; pos = pos->next) {
		struct s3d_timer *o = s3d_container_of(pos, struct s3d_timer, node);

		if (o->due_ms > t->due_ms)
			break;
	}
	s3d_list_add_before(&t->node, pos);
	t->armed = true;
}

void s3d_timer_cancel(struct s3d_timer *t)
{
	if (!t->armed)
		return;
	s3d_list_del(&t->node);
	t->armed = false;
}

static int timers_timeout(void)
{
	struct s3d_timer *t;
	uint64_t now;

	if (s3d_list_empty(&loop.timers))
		return -1;
	t = s3d_container_of(loop.timers.next, struct s3d_timer, node);
	now = s3d_now_ms();
	if (t->due_ms <= now)
		return 0;
	return (int)S3D_MIN(t->due_ms - now, (uint64_t)60000);
}

static void timers_run(void)
{
	uint64_t now = s3d_now_ms();

	while (!s3d_list_empty(&loop.timers)) {
		struct s3d_timer *t = s3d_container_of(loop.timers.next,
						       struct s3d_timer, node);

		if (t->due_ms > now)
			break;
		s3d_timer_cancel(t);
		t->fn(t);
	}
}

/* ---- fd watches ---- */

/**
 * s3d_loop_watch() - wait for events on @fd in the loop
 * @w: caller-owned watch (must stay valid until s3d_loop_unwatch())
 * @fd: the descriptor
 * @events: EPOLLIN etc.
 * @cb: called from the loop with the events that occurred
 *
 * Return: 0 or -errno from epoll_ctl().
 */
int s3d_loop_watch(struct s3d_watch *w, int fd, uint32_t events,
		   void (*cb)(struct s3d_watch *w, uint32_t events))
{
	struct epoll_event ev = { .events = events, .data.ptr = w };

	w->fd = fd;
	w->cb = cb;
	w->dead = false;
	s3d_list_init(&w->node);
	if (epoll_ctl(loop.epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		return -errno;
	return 0;
}

/* Events for @w already returned by this epoll_wait() batch are dropped. */
void s3d_loop_unwatch(struct s3d_watch *w)
{
	if (w->dead)
		return;
	epoll_ctl(loop.epfd, EPOLL_CTL_DEL, w->fd, NULL);
	w->dead = true;
}

/**
 * s3d_loop_unwatch_free() - unwatch @w and free() it after this batch
 * @w: the first member of a malloc()ed object
 *
 * For watches whose owner goes away from inside a callback: the current
 * epoll_wait() batch may still hold a pointer to @w, so the memory is
 * released only once the batch is over. The caller closes the fd.
 */
void s3d_loop_unwatch_free(struct s3d_watch *w)
{
	s3d_loop_unwatch(w);
	s3d_list_add_tail(&w->node, &loop.dead);
}

/* Change the events @w waits for. Return: 0 or -errno. */
int s3d_loop_modify(struct s3d_watch *w, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = w };

	if (epoll_ctl(loop.epfd, EPOLL_CTL_MOD, w->fd, &ev) < 0)
		return -errno;
	return 0;
}

static void reap_dead(void)
{
	while (!s3d_list_empty(&loop.dead)) {
		struct s3d_watch *w = s3d_container_of(loop.dead.next,
						       struct s3d_watch, node);

		s3d_list_del(&w->node);
		free(w);	/* the start of its object */
	}
}

void s3d_loop_close(void)
{
	reap_dead();
	if (loop.epfd >= 0)
		close(loop.epfd);
	loop.epfd = -1;
	loop.turn = NULL;
}

/* Make s3d_loop_run() return after the current iteration. */
void s3d_loop_stop(void)
{
	loop.stop = true;
}

/**
 * s3d_loop_run() - run the loop
 * @until: if not NULL, return once it says true (checked every iteration)
 * @arg: its argument
 *
 * Return: 0 when stopped, or -errno if epoll_wait() failed.
 */
int s3d_loop_run(bool (*until)(void *arg), void *arg)
{
	struct epoll_event evs[64];
	int n, i;

	loop.stop = false;
	while (!loop.stop) {
		if (loop.turn)
			loop.turn();
		if (until && until(arg))
			break;
		n = epoll_wait(loop.epfd, evs, S3D_ARRAY_SIZE(evs),
			       timers_timeout());
		if (n < 0) {
			if (errno == EINTR)
				continue;
			s3d_err("epoll_wait: %s", strerror(errno));
			return -errno;
		}
		for (i = 0; i < n; i++) {
			struct s3d_watch *w = evs[i].data.ptr;

			if (!w->dead)
				w->cb(w, evs[i].events);
		}
		reap_dead();
		timers_run();
	}
	return 0;
}
