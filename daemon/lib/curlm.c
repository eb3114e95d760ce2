// SPDX-License-Identifier: GPL-2.0
/*
 * A libcurl multi handle driven by the event loop.
 *
 * libcurl tells us which sockets to wait on (CURLMOPT_SOCKETFUNCTION) and
 * when to call it back (CURLMOPT_TIMERFUNCTION); we put the sockets in the
 * loop's epoll set and the timeout on its timer list, and answer both with
 * curl_multi_socket_action(). Each finished transfer goes to the owner's
 * ->done(). The S3 transfer engine (xfer.c) and the credential refresh
 * (creds_watch.c) each have one, so neither waits behind the other.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "base.h"
#include "curlm.h"
#include "log.h"
#include "loop.h"

/* A libcurl socket: freed only after the current batch of events. */
struct curlm_sock {
	struct s3d_watch w;	/* first: s3d_loop_unwatch_free() */
	struct s3d_curlm *m;
};

/* Hand every finished transfer to the owner. */
static void curlm_check_done(struct s3d_curlm *m)
{
	CURLMsg *msg;
	int left;

	while ((msg = curl_multi_info_read(m->multi, &left)))
		if (msg->msg == CURLMSG_DONE)
			m->done(m, msg->easy_handle, msg->data.result);
}

static void curlm_sock_event(struct s3d_watch *w, uint32_t events)
{
	struct curlm_sock *s = s3d_container_of(w, struct curlm_sock, w);
	struct s3d_curlm *m = s->m;
	int flags = 0, running;

	if (events & EPOLLIN)
		flags |= CURL_CSELECT_IN;
	if (events & EPOLLOUT)
		flags |= CURL_CSELECT_OUT;
	if (events & (EPOLLERR | EPOLLHUP))
		flags |= CURL_CSELECT_ERR;
	curl_multi_socket_action(m->multi, w->fd, flags, &running);
	curlm_check_done(m);
}

static int curlm_sock_cb(CURL *easy, curl_socket_t fd, int what, void *userp,
			 void *socketp)
{
	struct s3d_curlm *m = userp;
	struct curlm_sock *s = socketp;
	uint32_t events = 0;
	int err;

	(void)easy;
	if (what == CURL_POLL_REMOVE) {
		if (s) {
			s3d_loop_unwatch_free(&s->w);
			curl_multi_assign(m->multi, fd, NULL);
		}
		return 0;
	}
	if (what & CURL_POLL_IN)
		events |= EPOLLIN;
	if (what & CURL_POLL_OUT)
		events |= EPOLLOUT;
	if (s) {
		err = s3d_loop_modify(&s->w, events);
		if (err)
			s3d_err("%s: cannot watch socket %d: %s", m->name, fd,
				strerror(-err));
		return err ? -1 : 0;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -1;
	s->m = m;
	err = s3d_loop_watch(&s->w, fd, events, curlm_sock_event);
	if (err) {
		s3d_err("%s: cannot watch socket %d: %s", m->name, fd,
			strerror(-err));
		free(s);
		return -1;
	}
	curl_multi_assign(m->multi, fd, s);
	return 0;
}

static void curlm_timeout(struct s3d_timer *t)
{
	struct s3d_curlm *m = s3d_container_of(t, struct s3d_curlm, timer);
	int running;

	curl_multi_socket_action(m->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	curlm_check_done(m);
}

static int curlm_timer_cb(CURLM *multi, long timeout_ms, void *userp)
{
	struct s3d_curlm *m = userp;

	(void)multi;
	/* Never call into libcurl from here: arm, and act from the loop. */
	if (timeout_ms < 0)
		s3d_timer_cancel(&m->timer);
	else
		s3d_timer_arm(&m->timer, (uint64_t)timeout_ms);
	return 0;
}

/**
 * s3d_curlm_init() - create a multi handle whose transfers run on the loop
 * @m: the handle's state (must stay put until s3d_curlm_fini())
 * @name: for log lines
 * @done: called from the loop for each finished transfer, still in @m
 *	(removing it is the owner's job)
 *
 * Needs s3d_engine_init(). The caller may set more options on @m->multi.
 *
 * Return: 0 or -ENOMEM.
 */
int s3d_curlm_init(struct s3d_curlm *m, const char *name,
		   void (*done)(struct s3d_curlm *m, CURL *easy,
				CURLcode result))
{
	m->name = name;
	m->done = done;
	s3d_list_init(&m->timer.node);
	m->timer.armed = false;
	m->timer.fn = curlm_timeout;
	m->multi = curl_multi_init();
	if (!m->multi)
		return -ENOMEM;
	curl_multi_setopt(m->multi, CURLMOPT_SOCKETFUNCTION, curlm_sock_cb);
	curl_multi_setopt(m->multi, CURLMOPT_SOCKETDATA, m);
	curl_multi_setopt(m->multi, CURLMOPT_TIMERFUNCTION, curlm_timer_cb);
	curl_multi_setopt(m->multi, CURLMOPT_TIMERDATA, m);
	return 0;
}

/* Close @m's connections (their sockets are freed after the batch). */
void s3d_curlm_fini(struct s3d_curlm *m)
{
	if (m->multi) {
		curl_multi_cleanup(m->multi);
		m->multi = NULL;
	}
	s3d_timer_cancel(&m->timer);
}
