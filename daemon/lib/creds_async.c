// SPDX-License-Identifier: GPL-2.0
/*
 * Resolving credentials on the event loop: the provider chain of creds.c,
 * with the requests of web identity (STS), container credentials and IMDS
 * sent on a libcurl multi handle of our own that curlm.c runs on epoll.
 *
 * The daemon has one thread: a curl_easy_perform() there (a bucket's first
 * MOUNT, a reload) stopped every mount for as long as STS or IMDS took to
 * answer or time out, up to 20 s. Here the chain's local links (the
 * environment, the shared files) still answer at once; a link that asks a
 * server leaves the request on the loop and the caller is called back when
 * the chain is over. Why the loop and not a worker thread: the providers
 * are already state machines over one request at a time (creds_int.h) and
 * the refresh runs them on the loop (creds_watch.c); a thread would need
 * locks around the credentials every signing reads, and its own way to
 * cancel a request that hangs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "creds.h"
#include "creds_int.h"
#include "curlm.h"
#include "log.h"
#include "loop.h"
#include "util.h"

struct s3d_creds_req {
	struct s3d_creds *c;
	struct creds_profile prof;
	struct creds_job job;
	size_t link;			/* creds_chain[] index */
	bool job_live;
	struct s3d_buf said;		/* what each provider said */
	int err;			/* the outcome, once over */
	struct s3d_timer finish;	/* calls back outside libcurl */
	s3d_creds_cb done;
	void *arg;
};

/* Our multi handle: made for the first request, closed after the last. */
static struct {
	struct s3d_curlm curl;
	unsigned int users;
} am;

static void async_xfer_done(struct s3d_curlm *m, CURL *easy,
			    CURLcode result);

static int am_get(void)
{
	int err;

	if (am.users++)
		return 0;
	err = s3d_curlm_init(&am.curl, "credentials", async_xfer_done);
	if (err)
		am.users = 0;
	return err;
}

/* Never from async_xfer_done(): curlm.c still reads the handle after. */
static void am_put(void)
{
	if (--am.users)
		return;
	s3d_curlm_fini(&am.curl);
}

static void req_free(struct s3d_creds_req *r)
{
	if (r->job_live) {
		if (r->job.h.easy)
			curl_multi_remove_handle(am.curl.multi, r->job.h.easy);
		creds_job_fini(&r->job);
	}
	creds_profile_free(&r->prof);
	s3d_buf_free(&r->said);
	s3d_timer_cancel(&r->finish);
	free(r);
}

/* The chain is over: keep what it gave, log what it said. */
static void chain_over(struct s3d_creds_req *r, int err)
{
	r->err = err;
	if (err) {
		s3d_err("no AWS credentials for profile '%s': %s",
			r->prof.name, s3d_buf_str(&r->said));
		return;
	}
	if (r->said.len)
		s3d_dbg("credentials: %s", s3d_buf_str(&r->said));
	creds_move(r->c, &r->job.out);
	if (r->c->watcher)
		creds_watch_rearm(r->c);
}

/*
 * Go on from the current link's answer @err until the chain is over
 * (return 0) or a request is out on the loop (return CREDS_MORE).
 */
static int chain_run(struct s3d_creds_req *r, int err)
{
	CURLMcode mc;
	CURL *e;

	for (;;) {
		if (err == CREDS_MORE) {
			e = creds_http_easy(&r->job.h);
			if (!e) {
				err = -ENOMEM;
				continue;
			}
			curl_easy_setopt(e, CURLOPT_PRIVATE, r);
			mc = curl_multi_add_handle(am.curl.multi, e);
			if (mc == CURLM_OK)
				return CREDS_MORE;
			creds_why(&r->job, "curl_multi_add_handle: %s",
				  curl_multi_strerror(mc));
			err = -EIO;
			continue;
		}
		if (!err) {
			chain_over(r, 0);
			return 0;
		}
		s3d_buf_addf(&r->said, "%s%s: %s", r->said.len ? "; " : "",
			     r->job.p->name,
			     r->job.why[0] ? r->job.why : strerror(-err));
		if (err != -ENOENT || r->job.fatal ||
		    ++r->link >= creds_chain_len) {
			chain_over(r, err);
			return 0;
		}
		creds_job_fini(&r->job);
		creds_job_init(&r->job, creds_chain[r->link], &r->prof);
		err = creds_job_next(&r->job);
	}
}

static void finish_fire(struct s3d_timer *t)
{
	struct s3d_creds_req *r = s3d_container_of(t, struct s3d_creds_req,
						   finish);
	s3d_creds_cb done = r->done;
	void *arg = r->arg;
	int err = r->err;
	char why[CREDS_WHY_MAX * 2];

	snprintf(why, sizeof(why), "%s", err ? s3d_buf_str(&r->said) : "");
	req_free(r);
	am_put();
	done(arg, err, why);
}

static void async_xfer_done(struct s3d_curlm *m, CURL *easy,
			    CURLcode result)
{
	struct s3d_creds_req *r = NULL;

	curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&r);
	curl_multi_remove_handle(m->multi, easy);
	if (!r || r->job.h.easy != easy)
		return;
	creds_http_finish(&r->job.h, result);
	if (chain_run(r, creds_job_next(&r->job)) == CREDS_MORE)
		return;
	/* Call back from the loop, not from inside libcurl's callback. */
	s3d_timer_arm(&r->finish, 0);
}

/**
 * s3d_creds_resolve_async() - run the provider chain without blocking
 * @c: filled on success (previous keys freed; a watch is re-armed);
 *	untouched on failure; must stay put until @done or the cancel
 * @profile: as for s3d_creds_resolve_why()
 * @done: called from the loop when a chain that had to ask a server is
 *	over: 0 or -errno, and on failure what each provider said
 * @arg: for @done
 * @err: set when NULL is returned
 * @why: when NULL is returned with an error, what each provider said
 * @whylen: its size
 *
 * When the chain is over without a network request (keys in the
 * environment or the shared files, or a local error) NULL is returned and
 * @err says how it went, as from s3d_creds_resolve_why(); @done is not
 * called. Otherwise the request is on the loop, bounded by the provider's
 * timeouts (STS: 20 s), and the handle is returned.
 *
 * Return: the pending resolution (for s3d_creds_resolve_cancel()), or NULL.
 */
struct s3d_creds_req *s3d_creds_resolve_async(struct s3d_creds *c,
					      const char *profile,
					      s3d_creds_cb done, void *arg,
					      int *err, char *why,
					      size_t whylen)
{
	char pwhy[CREDS_WHY_MAX] = "";
	struct s3d_creds_req *r;
	int e;

	if (why && whylen)
		why[0] = '\0';
	r = calloc(1, sizeof(*r));
	if (!r || am_get()) {
		free(r);
		*err = -ENOMEM;
		return NULL;
	}
	r->c = c;
	r->done = done;
	r->arg = arg;
	s3d_list_init(&r->finish.node);
	r->finish.fn = finish_fire;
	s3d_buf_init(&r->said, 0);
	e = creds_profile_load(&r->prof, profile, pwhy, sizeof(pwhy));
	if (e) {
		s3d_err("credentials: %s", pwhy[0] ? pwhy : strerror(-e));
		if (why && whylen)
			snprintf(why, whylen, "shared files: %s",
				 pwhy[0] ? pwhy : strerror(-e));
		*err = e;
		goto over;
	}
	creds_job_init(&r->job, creds_chain[0], &r->prof);
	r->job_live = true;
	if (chain_run(r, creds_job_next(&r->job)) == CREDS_MORE)
		return r;
	*err = r->err;
	if (*err && why && whylen)
		snprintf(why, whylen, "%s", s3d_buf_str(&r->said));
over:
	req_free(r);
	am_put();
	return NULL;
}

/* Drop a pending resolution: its callback is not called, @c untouched. */
void s3d_creds_resolve_cancel(struct s3d_creds_req *r)
{
	if (!r)
		return;
	req_free(r);
	am_put();
}
