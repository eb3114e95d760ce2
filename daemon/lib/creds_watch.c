// SPDX-License-Identifier: GPL-2.0
/*
 * Refreshing temporary credentials on the event loop.
 *
 * A watched set of credentials has a timer due S3D_CREDS_REFRESH_MARGIN_S
 * (or a tenth of their lifetime, if less) before they expire. It asks the
 * provider that supplied them again; requests go out on a libcurl multi
 * handle of our own that curlm.c runs on the daemon's epoll loop, so
 * nothing blocks. Until the new credentials arrive the old ones keep
 * signing; a failure is retried with doubling back-off.
 *
 * Why not the S3 transfer engine (struct s3d_xfer): IMDSv2 needs a PUT,
 * which the engine cannot send, and a refresh must not wait in the queue
 * behind hundreds of S3 GETs at the in-flight cap, nor share their 10 s
 * connect timeout.
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

struct s3d_creds_stats s3d_creds_stats;

struct s3d_creds_watcher {
	struct s3d_creds *c;
	char *profile;			/* NULL: $AWS_PROFILE or "default" */
	struct s3d_timer timer;		/* next refresh or retry */
	struct creds_profile prof;	/* of the refresh in flight */
	struct creds_job job;
	bool busy;			/* job in flight */
	unsigned int failures;		/* in a row, for the back-off */
};

/* Our multi handle, shared by all watched credentials. */
static struct {
	struct s3d_curlm curl;
	unsigned int users;
} cm;

/**
 * s3d_creds_refresh_ms() - when to refresh credentials
 * @now: the time now
 * @expires: when they expire (not 0)
 *
 * Return: milliseconds from @now: S3D_CREDS_REFRESH_MARGIN_S before
 * @expires, or a tenth of the remaining lifetime before it if that is
 * less; at least S3D_CREDS_REFRESH_MIN_MS.
 */
uint64_t s3d_creds_refresh_ms(time_t now, time_t expires)
{
	int64_t life_ms = ((int64_t)expires - (int64_t)now) * 1000;
	int64_t margin_ms;

	if (life_ms <= S3D_CREDS_REFRESH_MIN_MS)
		return S3D_CREDS_REFRESH_MIN_MS;
	margin_ms = S3D_MIN(life_ms / 10,
			    (int64_t)S3D_CREDS_REFRESH_MARGIN_S * 1000);
	return S3D_MAX(life_ms - margin_ms, (int64_t)S3D_CREDS_REFRESH_MIN_MS);
}

/* ---- our multi handle ---- */

static void refresh_xfer_done(struct s3d_curlm *m, CURL *easy,
			      CURLcode result);

static int cm_get(void)
{
	int err;

	if (cm.users) {
		cm.users++;
		return 0;
	}
	err = s3d_curlm_init(&cm.curl, "credentials refresh",
			     refresh_xfer_done);
	if (err)
		return err;
	cm.users = 1;
	return 0;
}

static void cm_put(void)
{
	if (--cm.users)
		return;
	s3d_curlm_fini(&cm.curl);	/* its sockets are freed later */
}

/* ---- refresh ---- */

static void refresh_fire(struct s3d_timer *t);
static void job_advance(struct s3d_creds_watcher *w, int err);

static void job_stop(struct s3d_creds_watcher *w)
{
	if (!w->busy)
		return;
	if (w->job.h.easy)
		curl_multi_remove_handle(cm.curl.multi, w->job.h.easy);
	creds_job_fini(&w->job);
	creds_profile_free(&w->prof);
	w->busy = false;
}

static void arm_next(struct s3d_creds_watcher *w)
{
	uint64_t ms;

	if (!w->c->expires || !w->c->provider || !w->c->provider->step)
		return;		/* nothing to refresh */
	ms = s3d_creds_refresh_ms(time(NULL), w->c->expires);
	s3d_dbg("credentials from the %s expire in %lld s; refresh in %llu ms",
		w->c->source, (long long)(w->c->expires - time(NULL)),
		(unsigned long long)ms);
	w->timer.fn = refresh_fire;
	s3d_timer_arm(&w->timer, ms);
}

static void refresh_failed(struct s3d_creds_watcher *w, int err)
{
	uint64_t ms = S3D_CREDS_RETRY_FIRST_MS;
	unsigned int i;

	for (i = 0; i < w->failures && ms < S3D_CREDS_RETRY_MAX_MS; i++)
		ms *= 2;
	ms = S3D_MIN(ms, (uint64_t)S3D_CREDS_RETRY_MAX_MS);
	w->failures++;
	s3d_creds_stats.refresh_failures++;
	s3d_warn("refreshing credentials from the %s failed: %s; retrying in %llu ms (the current ones expire in %lld s)",
		 w->c->source, w->job.why[0] ? w->job.why : strerror(-err),
		 (unsigned long long)ms,
		 (long long)(w->c->expires - time(NULL)));
	job_stop(w);
	w->timer.fn = refresh_fire;
	s3d_timer_arm(&w->timer, ms);
}

static void refresh_done(struct s3d_creds_watcher *w)
{
	struct s3d_creds *c = w->c;

	creds_move(c, &w->job.out);
	job_stop(w);
	w->failures = 0;
	s3d_creds_stats.refreshes++;
	s3d_creds_stats.last_refresh = time(NULL);
	s3d_info("credentials refreshed from the %s (key id %s, expire in %lld s)",
		 c->source, c->access_key, (long long)(c->expires - time(NULL)));
	arm_next(w);
}

static void job_advance(struct s3d_creds_watcher *w, int err)
{
	CURLMcode mc;
	CURL *e;

	if (err == 0) {
		refresh_done(w);
		return;
	}
	if (err != CREDS_MORE) {
		refresh_failed(w, err);
		return;
	}
	e = creds_http_easy(&w->job.h);
	if (!e) {
		refresh_failed(w, -ENOMEM);
		return;
	}
	curl_easy_setopt(e, CURLOPT_PRIVATE, w);
	mc = curl_multi_add_handle(cm.curl.multi, e);
	if (mc != CURLM_OK) {
		creds_why(&w->job, "curl_multi_add_handle: %s",
			  curl_multi_strerror(mc));
		refresh_failed(w, -EIO);
	}
}

static void refresh_xfer_done(struct s3d_curlm *m, CURL *easy,
			      CURLcode result)
{
	struct s3d_creds_watcher *w = NULL;

	curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&w);
	curl_multi_remove_handle(m->multi, easy);
	if (!w || !w->busy || w->job.h.easy != easy)
		return;
	creds_http_finish(&w->job.h, result);
	job_advance(w, creds_job_next(&w->job));
}

static void refresh_fire(struct s3d_timer *t)
{
	struct s3d_creds_watcher *w = s3d_container_of(t,
			struct s3d_creds_watcher, timer);
	char why[CREDS_WHY_MAX] = "";
	int err;

	job_stop(w);
	/* Local files only (the profile may have changed): no network here. */
	err = creds_profile_load(&w->prof, w->profile, why, sizeof(why));
	creds_job_init(&w->job, w->c->provider, &w->prof);
	w->busy = true;
	if (err) {
		creds_why(&w->job, "%s", why);
		refresh_failed(w, err);
		return;
	}
	s3d_dbg("refreshing credentials from the %s", w->c->source);
	job_advance(w, creds_job_next(&w->job));
}

/**
 * s3d_creds_watch() - keep temporary credentials fresh from the event loop
 * @c: resolved by s3d_creds_resolve()
 * @profile: the profile they were resolved for (NULL: $AWS_PROFILE or
 *	"default"); copied
 *
 * Needs s3d_engine_init(). Credentials that never expire (environment,
 * shared files) arm nothing, but stay watched: a later s3d_creds_resolve()
 * into @c that brings temporary ones arms the refresh. Calling it again
 * re-arms (and cancels a refresh in flight).
 *
 * Return: 0 or -ENOMEM.
 */
int s3d_creds_watch(struct s3d_creds *c, const char *profile)
{
	struct s3d_creds_watcher *w = c->watcher;
	char *p = NULL;

	if (profile) {
		p = strdup(profile);
		if (!p)
			return -ENOMEM;
	}
	if (!w) {
		w = calloc(1, sizeof(*w));
		if (!w || cm_get()) {
			free(w);
			free(p);
			return -ENOMEM;
		}
		w->c = c;
		s3d_list_init(&w->timer.node);
		c->watcher = w;
	}
	free(w->profile);
	w->profile = p;
	creds_watch_rearm(c);
	return 0;
}

/* @c got new credentials from elsewhere (SIGHUP): start the clock again. */
void creds_watch_rearm(struct s3d_creds *c)
{
	struct s3d_creds_watcher *w = c->watcher;

	job_stop(w);
	s3d_timer_cancel(&w->timer);
	w->failures = 0;
	arm_next(w);
}

/* Stop refreshing @c (its credentials stay). */
void s3d_creds_unwatch(struct s3d_creds *c)
{
	struct s3d_creds_watcher *w = c->watcher;

	if (!w)
		return;
	job_stop(w);
	s3d_timer_cancel(&w->timer);
	free(w->profile);
	free(w);
	c->watcher = NULL;
	cm_put();
}
