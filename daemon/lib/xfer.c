// SPDX-License-Identifier: GPL-2.0
/*
 * The S3 transfer engine, on the event loop (loop.c).
 *
 * curl_multi_socket_action() is the only way transfers make progress, so
 * nothing here ever blocks on the network.
 *
 * Transfers (struct s3d_xfer) start at most max_inflight at a time; the
 * rest wait on a queue per priority class (prio.c): metadata first, then
 * chunks readers are blocked on, then readahead, FIFO within a class.
 * Keep-alive comes from the multi handle's connection cache, sized to the
 * same cap. Transient failures (connection errors, timeouts, too slow a
 * transfer, 5xx but 501, 429, a body cut short, the codes of
 * s3d_retry_transient()) are retried by the policy of
 * retry.c: up to retry_attempts attempts, full jitter back-off,
 * Retry-After, no retry starting past retry_max_time (counted from the
 * first attempt or the last progress the operation reported with
 * s3d_xfer_progress()), and a retry budget per S3 context.
 * Each attempt calls ->prepare() again, so signatures are fresh and a
 * ranged GET can resume; a request body (a PUT's file range, a POST's XML)
 * is sent again whole from its start.
 *
 * Nothing is started from inside s3d_xfer_submit(): submissions are queued
 * and started from the loop, so an operation's ->done() never runs while
 * that operation is still in the middle of submitting.
 *
 * Every attempt is counted in s3d_stats by operation: its HTTP status, its
 * duration (libcurl's total time, so queueing and back-off are not in it),
 * the body bytes; retries and final failures too. Plain increments on the
 * loop thread, read by metrics.c on the same thread.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "base.h"
#include "curlm.h"
#include "log.h"
#include "loop.h"
#include "path.h"
#include "prio.h"
#include "retry.h"
#include "s3.h"
#include "util.h"
#include "xfer.h"
#include "xml.h"

#define CONNECT_TIMEOUT_MS	10000
#define ERROR_BODY_MAX		(64U << 10)
#define CURL_BUFFER		(256 << 10)

struct s3d_stats s3d_stats;

/* Where @x is counted: its own counters (a second store), else s3d_stats. */
static struct s3d_stats *stats_of(const struct s3d_xfer *x)
{
	return x->stats ?: &s3d_stats;
}

/* 1 ms .. 60 s: a small HEAD on a LAN to a large GET on a bad day. */
const double s3d_lat_bounds[S3D_LAT_NR] = {
	0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
	0.5, 1, 2.5, 5, 10, 20, 30, 60,
};

static const char *const op_names[S3D_OP_NR] = {
	[S3D_OP_GET] = "GET",
	[S3D_OP_HEAD] = "HEAD",
	[S3D_OP_LIST] = "LIST",
	[S3D_OP_OTHER] = "OTHER",
};

const char *s3d_op_name(int op)
{
	return op >= 0 && op < S3D_OP_NR ? op_names[op] : "OTHER";
}

static int op_of(const char *what)
{
	int i;

	for (i = 0; what && i < S3D_OP_OTHER; i++)
		if (!strcmp(what, op_names[i]))
			return i;
	return S3D_OP_OTHER;
}

static struct {
	struct s3d_curlm curl;	/* the S3 transfers */
	char *ca_bundle;
	unsigned int max_inflight;
	unsigned int stall_s;	/* below min_rate this long: timeout */
	unsigned int min_rate;	/* bytes/s */
	struct s3d_retry_policy retry;
	struct s3d_retry_budget budget;	/* of transfers without a context */
	unsigned int inflight;
	struct s3d_pq queue;	/* s3d_xfer.node: waiting for a slot */
} eng = {
	.stall_s = S3D_STALL_DEFAULT,
	.min_rate = S3D_MIN_RATE_DEFAULT,
	.retry = {
		.attempts = S3D_RETRY_ATTEMPTS_DEFAULT,
		.max_time_s = S3D_RETRY_MAX_TIME_DEFAULT,
		.base_ms = S3D_RETRY_BASE_MS_DEFAULT,
		.max_delay_ms = S3D_RETRY_MAX_DELAY_MS_DEFAULT,
		.budget = S3D_RETRY_BUDGET_DEFAULT,
	},
	.budget = { S3D_RETRY_BUDGET_DEFAULT, S3D_RETRY_BUDGET_DEFAULT },
};

/* ---- transfers ---- */

static void reset_outcome(struct s3d_xfer *x)
{
	x->cres = CURLE_OK;
	x->errbuf[0] = '\0';
	x->status = 0;
	x->etag[0] = '\0';
	x->has_etag = false;
	x->content_length = -1;
	x->range_start = x->range_end = x->range_total = -1;
	x->last_modified = 0;
	memset(&x->posix, 0, sizeof(x->posix));
	if (x->hdrs)
		s3d_buf_reset(x->hdrs);
	x->request_id[0] = '\0';
	x->body_bytes = 0;
	x->err = 0;
	x->throttled = false;
	x->retry_after_ms = -1;
	x->src.pos = 0;
	s3d_buf_reset(&x->resp);
}

/*
 * "Name: value\r\n" -> value (trimmed, copied), if Name matches. Return:
 * the value's length (a NUL in it included), or -1 (another header, or a
 * value that does not fit).
 */
static long header_value(const char *buf, size_t len, const char *name,
			 char *out, size_t outlen)
{
	size_t nl = strlen(name), vl;
	const char *v;

	if (len <= nl || buf[nl] != ':' || strncasecmp(buf, name, nl))
		return -1;
	v = buf + nl + 1;
	vl = len - nl - 1;
	while (vl && (*v == ' ' || *v == '\t')) {
		v++;
		vl--;
	}
	while (vl && (v[vl - 1] == '\r' || v[vl - 1] == '\n' ||
		      v[vl - 1] == ' ' || v[vl - 1] == '\t'))
		vl--;
	if (vl >= outlen)
		return -1;
	memcpy(out, v, vl);
	out[vl] = '\0';
	return (long)vl;
}

/* "Name: value\r\n" appended to @b as "Name\0value\0" (value trimmed). */
static void keep_header(struct s3d_buf *b, const char *buf, size_t len)
{
	const char *colon = memchr(buf, ':', len), *v, *end = buf + len;

	if (!colon || colon == buf)
		return;
	v = colon + 1;
	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	while (end > v && (end[-1] == '\r' || end[-1] == '\n' ||
			   end[-1] == ' ' || end[-1] == '\t'))
		end--;
	s3d_buf_add(b, buf, (size_t)(colon - buf));
	s3d_buf_addc(b, '\0');
	s3d_buf_add(b, v, (size_t)(end - v));
	s3d_buf_addc(b, '\0');
}

/* One of x-amz-meta-mode, -uid, -gid, -mtime: its value, as text. */
static void posix_header(struct s3d_xfer *x, const char *buf, size_t len)
{
	const char *colon = memchr(buf, ':', len);
	char v[S3D_POSIX_VAL_MAX];
	int f;

	if (!colon)
		return;
	f = s3d_posix_field_of(buf, (size_t)(colon - buf));
	if (f < 0)
		return;
	/* Too long to be ours: kept as a value no parser takes. */
	if (header_value(buf, len, s3d_posix_names[f], v, sizeof(v)) < 0)
		strcpy(v, "!");
	strcpy(x->posix.v[f], v);
}

static size_t header_cb(char *buf, size_t size, size_t n, void *ud)
{
	struct s3d_xfer *x = ud;
	size_t len = size * n;
	char v[S3D_ETAG_MAX + 2];
	uint64_t u;
	long vl;

	/* The blank line after the headers: the caller may stop here. */
	if (len <= 2 && (buf[0] == '\r' || buf[0] == '\n')) {
		curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &x->status);
		if (x->status >= 200 && x->ops->headers && !x->ops->headers(x))
			return 0;
		return len;
	}
	/* A new status line (after 100 Continue, say): forget the old. */
	if (len >= 5 && !strncmp(buf, "HTTP/", 5)) {
		x->has_etag = false;
		x->etag[0] = '\0';
		x->content_length = -1;
		x->range_start = x->range_end = x->range_total = -1;
		x->last_modified = 0;
		memset(&x->posix, 0, sizeof(x->posix));
		if (x->hdrs)
			s3d_buf_reset(x->hdrs);
		x->request_id[0] = '\0';
		x->retry_after_ms = -1;
		return len;
	}
	if (x->hdrs)
		keep_header(x->hdrs, buf, len);
	/* Cheap first test: most responses have no user metadata. */
	if (len > 11 && !strncasecmp(buf, "x-amz-meta-", 11)) {
		posix_header(x, buf, len);
		return len;
	}
	vl = header_value(buf, len, "ETag", v, sizeof(v));
	if (vl >= 0) {
		if (!s3d_etag_ok(v, (size_t)vl)) {
			char once[S3D_KEY_MAX + 16];

			/* Never kept, so never sent back nor handed on. */
			snprintf(once, sizeof(once), "etag:%s", x->key);
			if (s3d_log_once(once))
				s3d_warn("%s %s: response ETag '%s' refused: empty or holding control characters",
					 x->what, x->key, v);
		} else if (vl <= S3D_ETAG_MAX) {
			strcpy(x->etag, v);
			x->has_etag = true;
		}
	} else if (header_value(buf, len, "Content-Length", v, sizeof(v)) >= 0) {
		if (!s3d_parse_u64(v, &u) && u <= INT64_MAX)
			x->content_length = (int64_t)u;
	} else if (header_value(buf, len, "Content-Range", v, sizeof(v)) >= 0) {
		unsigned long long a, b;
		uint64_t t;
		int n = 0;

		/* "bytes A-B/T", or a star for T; anything else stays -1. */
		if (sscanf(v, "bytes %llu-%llu/%n", &a, &b, &n) == 2 && n &&
		    a <= b && b <= INT64_MAX) {
			x->range_start = (int64_t)a;
			x->range_end = (int64_t)b;
			if (!strcmp(v + n, "*"))
				x->range_total = -1;
			else if (!s3d_parse_u64(v + n, &t) && t <= INT64_MAX)
				x->range_total = (int64_t)t;
			else
				x->range_start = x->range_end = -1;
		}
	} else if (header_value(buf, len, "Retry-After", v, sizeof(v)) >= 0) {
		x->retry_after_ms = s3d_retry_after_ms(v, time(NULL));
	} else if (header_value(buf, len, "Last-Modified", v, sizeof(v)) >= 0) {
		time_t t = curl_getdate(v, NULL);

		x->last_modified = t == (time_t)-1 ? 0 : t;
	} else {
		header_value(buf, len, "x-amz-request-id", x->request_id,
			     sizeof(x->request_id));
	}
	return len;
}

static size_t write_cb(char *p, size_t size, size_t n, void *ud)
{
	struct s3d_xfer *x = ud;
	size_t len = size * n;

	if (!x->status)
		curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &x->status);
	x->body_bytes += len;
	stats_of(x)->bytes_in += len;
	stats_of(x)->op[x->op].bytes_in += len;
	if (x->status >= 200 && x->status < 300) {
		if (x->ops->body)
			return x->ops->body(x, p, len);
		s3d_buf_add(&x->resp, p, len);
		if (x->resp.err) {
			s3d_err("%s %s: response body over %zu bytes%s: refused",
				x->what, x->key, x->resp.max,
				x->op == S3D_OP_LIST ?
				" (more than 1000 entries of a listing page need)" : "");
			x->err = -EFBIG;
			return 0;
		}
		return len;
	}
	/* Error bodies: keep the start (where Code and RequestId are). */
	if (x->resp.len + len <= ERROR_BODY_MAX)
		s3d_buf_add(&x->resp, p, len);
	return len;
}

/*
 * A PUT's body, from its file range. A read that fails, or a file that
 * ends before the range does (it shrank under us), ends the transfer
 * with @x->err set: not a network error, so not retried.
 */
static size_t read_cb(char *p, size_t size, size_t n, void *ud)
{
	struct s3d_xfer *x = ud;
	uint64_t left = x->src.len - x->src.pos;
	size_t want = (size_t)S3D_MIN((uint64_t)size * n, left);
	ssize_t got;

	if (!want)
		return 0;
	if (x->src.mem) {
		memcpy(p, x->src.mem + x->src.pos, want);
		x->src.pos += want;
		return want;
	}
	do {
		got = pread(x->src.fd, p, want,
			    (off_t)(x->src.off + x->src.pos));
	} while (got < 0 && errno == EINTR);
	if (got <= 0) {
		x->err = got < 0 ? -errno : -EIO;
		s3d_err("%s %s: reading the body at byte %llu of %llu: %s",
			x->what, x->key, (unsigned long long)x->src.pos,
			(unsigned long long)x->src.len,
			got < 0 ? strerror(-x->err) : "the file is shorter");
		return CURL_READFUNC_ABORT;
	}
	x->src.pos += (uint64_t)got;
	return (size_t)got;
}

/* libcurl rewinds a body to send it again (a redirect, an auth retry). */
static int seek_cb(void *ud, curl_off_t offset, int origin)
{
	struct s3d_xfer *x = ud;

	if (origin != SEEK_SET || offset < 0 || (uint64_t)offset > x->src.len)
		return CURL_SEEKFUNC_CANTSEEK;
	x->src.pos = (uint64_t)offset;
	return CURL_SEEKFUNC_OK;
}

static bool has_header(const struct s3d_http_req *r, const char *name)
{
	size_t i, n = strlen(name);

	for (i = 0; i < r->nheaders; i++)
		if (!strncasecmp(r->headers[i], name, n) &&
		    (r->headers[i][n] == ':' || r->headers[i][n] == ';'))
			return true;
	return false;
}

static int add_curl_header(struct s3d_xfer *x, const char *line)
{
	struct curl_slist *l = curl_slist_append(x->hl, line);

	if (!l)
		return -ENOMEM;
	x->hl = l;
	return 0;
}

/*
 * The method and its body. HEAD has none (NOBODY, so libcurl waits for
 * no body either); PUT sends its file range or its bytes in memory
 * (UPLOAD, which is a PUT over HTTP); POST its bytes in memory; DELETE
 * nothing, but its answer may
 * have one (an error), so it is a custom request, not NOBODY.
 */
static int setup_method(struct s3d_xfer *x)
{
	const struct s3d_xfer_src *src = &x->src;
	const char *m = x->req.method;
	CURL *e = x->easy;
	int rc = 0, err;

	if (!strcmp(m, "GET"))
		return 0;
	if (!strcmp(m, "HEAD"))
		return curl_easy_setopt(e, CURLOPT_NOBODY, 1L) ? -EINVAL : 0;
	if (!strcmp(m, "DELETE"))
		return curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, "DELETE") ?
		       -EINVAL : 0;
	if (!strcmp(m, "PUT")) {
		if ((src->mem && src->fd >= 0) ||
		    (!src->mem && src->fd < 0 && src->len) ||
		    src->len > INT64_MAX)
			return -EINVAL;
		rc |= curl_easy_setopt(e, CURLOPT_UPLOAD, 1L);
		rc |= curl_easy_setopt(e, CURLOPT_READFUNCTION, read_cb);
		rc |= curl_easy_setopt(e, CURLOPT_READDATA, x);
		rc |= curl_easy_setopt(e, CURLOPT_SEEKFUNCTION, seek_cb);
		rc |= curl_easy_setopt(e, CURLOPT_SEEKDATA, x);
		rc |= curl_easy_setopt(e, CURLOPT_INFILESIZE_LARGE,
				       (curl_off_t)src->len);
	} else if (!strcmp(m, "POST")) {
		if (src->fd >= 0 || (!src->mem && src->len) ||
		    src->len > INT64_MAX)
			return -EINVAL;
		rc |= curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE,
				       (curl_off_t)src->len);
		rc |= curl_easy_setopt(e, CURLOPT_POSTFIELDS, src->mem ?: "");
		/*
		 * libcurl would label a POST form data, and S3 takes a
		 * CreateMultipartUpload's Content-Type as the object's.
		 */
		if (!has_header(&x->req, "Content-Type")) {
			err = add_curl_header(x, "Content-Type:");
			if (err)
				return err;
		}
	} else {
		return -EINVAL;
	}
	/*
	 * No "Expect: 100-continue" (libcurl adds it to uploads and large
	 * POSTs): a server that ignores it costs each upload libcurl's
	 * 1 s wait, and its one gain, not sending a body that is refused,
	 * is rare for us: a precondition fails once per conflict, and
	 * bodies are a part (a few MiB) or a small object. A caller whose
	 * precondition often fails (a fleet tier's create-only PUT, lost
	 * whenever another node was first) asks for it (@x->expect): a
	 * server that waits for the body sends 100 at once, and a 412 comes
	 * before the body (RGW sends the whole body's worth of 412 without).
	 */
	err = add_curl_header(x, x->expect ? "Expect: 100-continue" :
			      "Expect:");
	return err ?: (rc ? -EINVAL : 0);
}

static int easy_setup(struct s3d_xfer *x)
{
	CURL *e = x->easy;
	size_t i;
	int rc = 0, err;

	for (i = 0; i < x->req.nheaders; i++) {
		err = add_curl_header(x, x->req.headers[i]);
		if (err)
			return err;
	}
	err = setup_method(x);
	if (err)
		return err;
	rc |= curl_easy_setopt(e, CURLOPT_URL, x->req.url);
	rc |= curl_easy_setopt(e, CURLOPT_HTTPHEADER, x->hl);
	rc |= curl_easy_setopt(e, CURLOPT_PRIVATE, x);
	rc |= curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, write_cb);
	rc |= curl_easy_setopt(e, CURLOPT_WRITEDATA, x);
	rc |= curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, header_cb);
	rc |= curl_easy_setopt(e, CURLOPT_HEADERDATA, x);
	rc |= curl_easy_setopt(e, CURLOPT_ERRORBUFFER, x->errbuf);
	rc |= curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	rc |= curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	/* S3 signs the path as sent: never let libcurl squash "/../". */
	rc |= curl_easy_setopt(e, CURLOPT_PATH_AS_IS, 1L);
	rc |= curl_easy_setopt(e, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1);
	rc |= curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
			       (long)(x->connect_ms ?: CONNECT_TIMEOUT_MS));
	rc |= curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT,
			       x->trickle ? 1L : (long)eng.min_rate);
	rc |= curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME,
			       (long)(x->stall_s ?: eng.stall_s) *
			       (x->trickle ? S3D_TRICKLE_STALLS : 1));
	rc |= curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
	rc |= curl_easy_setopt(e, CURLOPT_BUFFERSIZE, (long)CURL_BUFFER);
	rc |= curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
	rc |= curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
	/* A bucket's own CA bundle (config), else the daemon-wide one. */
	if (x->req.ca_bundle || eng.ca_bundle)
		rc |= curl_easy_setopt(e, CURLOPT_CAINFO,
				       x->req.ca_bundle ?: eng.ca_bundle);
	return rc ? -EINVAL : 0;
}

static void xfer_cleanup_attempt(struct s3d_xfer *x)
{
	if (x->easy) {
		curl_multi_remove_handle(eng.curl.multi, x->easy);
		curl_easy_cleanup(x->easy);
		x->easy = NULL;
		eng.inflight--;
	}
	curl_slist_free_all(x->hl);
	x->hl = NULL;
	s3d_http_req_free(&x->req);
}

static void backoff_fire(struct s3d_timer *t)
{
	struct s3d_xfer *x = s3d_container_of(t, struct s3d_xfer, backoff);

	/* Retries go to the front: they are older than anything queued. */
	s3d_pq_add(&eng.queue, &x->node, x->prio, true);
	x->queued = true;
}

static struct s3d_retry_budget *budget_of(struct s3d_xfer *x)
{
	return x->budget ?: &eng.budget;
}

/* A connection error or a timeout costs more of the budget than an answer. */
static unsigned int retry_cost(const struct s3d_xfer *x)
{
	return x->cres != CURLE_OK && x->cres != CURLE_PARTIAL_FILE ?
	       S3D_RETRY_COST_TIMEOUT : S3D_RETRY_COST;
}

/*
 * May @x have another attempt, and after how long? NULL and *@delay if
 * so, else why not.
 */
static const char *retry_plan(struct s3d_xfer *x, unsigned int *delay)
{
	const struct s3d_retry_policy *p = &eng.retry;
	uint64_t now = s3d_now_ms(), d;

	if (x->once)
		return "one attempt only";
	if (x->attempt >= (int)p->attempts)
		return "no attempts left";
	if (!s3d_retry_budget_has(budget_of(x), retry_cost(x)))
		return "retry budget exhausted";
	d = s3d_retry_backoff(p, x->attempt, x->throttled, (uint32_t)random());
	if (x->retry_after_ms >= 0 && (uint64_t)x->retry_after_ms > d)
		d = (uint64_t)x->retry_after_ms;
	if (now + d > x->window_ms + (uint64_t)p->max_time_s * 1000)
		return "retry time used up";
	*delay = (unsigned int)d;
	return NULL;
}

static void schedule_retry(struct s3d_xfer *x, const char *why,
			   unsigned int ms)
{
	unsigned int cost = retry_cost(x);

	s3d_retry_budget_take(budget_of(x), cost);
	x->spent += cost;
	s3d_warn("%s %s: %s; retrying in %u ms (attempt %d of %u)", x->what,
		 x->key, why, ms, x->attempt + 1, eng.retry.attempts);
	stats_of(x)->retries++;
	stats_of(x)->op[x->op].retries++;
	x->backoff.fn = backoff_fire;
	s3d_timer_arm(&x->backoff, ms);
}

static bool curl_transient(CURLcode c)
{
	switch (c) {
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_CONNECT:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
		return true;
	default:
		return false;
	}
}

/* What went wrong with an attempt worth repeating, or NULL. */
static const char *transient(struct s3d_xfer *x, char *buf, size_t len)
{
	if (x->cres != CURLE_OK) {
		if (!curl_transient(x->cres))
			return NULL;
		snprintf(buf, len, "%s%s%s", curl_easy_strerror(x->cres),
			 x->errbuf[0] ? ": " : "", x->errbuf);
		return buf;
	}
	if (x->err)
		return NULL;
	if (x->status >= 400) {
		struct s3d_s3error e;

		s3d_xml_parse_error(s3d_buf_str(&x->resp), x->resp.len, &e);
		if (!s3d_retry_transient(x->status, e.code))
			return NULL;
		x->throttled = s3d_retry_throttled(x->status, e.code);
		snprintf(buf, len, "HTTP %ld %s (request id %s)", x->status,
			 e.code[0] ? e.code : "-",
			 e.request_id[0] ? e.request_id :
			 x->request_id[0] ? x->request_id : "-");
		return buf;
	}
	return NULL;
}

static void xfer_finish(struct s3d_xfer *x)
{
	char why[CURL_ERROR_SIZE + 64];
	unsigned int delay = 0;
	const char *t, *no;

	t = transient(x, why, sizeof(why));
	if (x->throttled && x->ops->throttled)
		x->ops->throttled(x);
	no = retry_plan(x, &delay);
	x->can_retry = !no;
	if (t && !no) {
		schedule_retry(x, t, delay);
		return;
	}
	if (t)
		s3d_warn("%s %s: %s; giving up after %d attempt%s: %s", x->what,
			 x->key, t, x->attempt, x->attempt == 1 ? "" : "s", no);
	if (s3d_xfer_ok(x)) {
		s3d_retry_budget_success(budget_of(x), x->spent);
	} else {
		stats_of(x)->failures++;
		stats_of(x)->op[x->op].failures++;
	}
	if (x->ops->done(x) == S3D_XFER_RETRY && x->can_retry)
		schedule_retry(x, "incomplete response", delay);
	/* else: @x may be gone */
}

/* One attempt is over: its status and duration. */
static void count_attempt(struct s3d_xfer *x)
{
	struct s3d_op_stats *st = &stats_of(x)->op[x->op];
	curl_off_t us = 0;
	size_t i;

	st->status[x->status >= 100 && x->status < 600 ? x->status : 0]++;
	curl_easy_getinfo(x->easy, CURLINFO_TOTAL_TIME_T, &us);
	if (us < 0)
		us = 0;
	for (i = 0; i < S3D_LAT_NR; i++)
		if ((double)us <= s3d_lat_bounds[i] * 1e6)
			break;
	st->lat[i]++;
	st->lat_sum_us += (uint64_t)us;
}

static void xfer_done(struct s3d_curlm *m, CURL *easy, CURLcode result)
{
	struct s3d_xfer *x = NULL;

	(void)m;
	curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&x);
	if (!x)
		return;
	x->cres = result;
	curl_easy_getinfo(x->easy, CURLINFO_RESPONSE_CODE, &x->status);
	count_attempt(x);
	xfer_cleanup_attempt(x);
	if (x->ops->ended)
		x->ops->ended(x);
	xfer_finish(x);
}

static int xfer_start(struct s3d_xfer *x)
{
	CURLMcode mc;
	int err;

	x->attempt++;
	reset_outcome(x);
	s3d_http_req_free(&x->req);
	err = x->ops->prepare(x);
	if (err)
		return err;
	x->easy = curl_easy_init();
	if (!x->easy)
		return -ENOMEM;
	eng.inflight++;
	err = easy_setup(x);
	if (err)
		return err;
	mc = curl_multi_add_handle(eng.curl.multi, x->easy);
	if (mc != CURLM_OK) {
		s3d_err("%s %s: curl_multi_add_handle: %s", x->what, x->key,
			curl_multi_strerror(mc));
		return -EIO;
	}
	stats_of(x)->requests++;
	s3d_dbg("%s %s (attempt %d)", x->req.method, x->req.url, x->attempt);
	return 0;
}

static void pump(void)
{
	while (eng.inflight < eng.max_inflight &&
	       !s3d_pq_empty(&eng.queue)) {
		struct s3d_xfer *x = s3d_container_of(s3d_pq_pop(&eng.queue,
								 NULL),
						      struct s3d_xfer, node);
		int err;

		x->queued = false;
		err = xfer_start(x);
		if (err) {
			s3d_err("%s %s: cannot start the request: %s", x->what,
				x->key, strerror(-err));
			xfer_cleanup_attempt(x);
			if (x->ops->ended)
				x->ops->ended(x);
			x->err = err;
			x->can_retry = false;
			stats_of(x)->failures++;
			stats_of(x)->op[x->op].failures++;
			x->ops->done(x);
		}
	}
}

/**
 * s3d_xfer_init() - prepare a transfer for use
 * @x: the transfer (usually embedded in an operation)
 * @ops: its callbacks
 * @what: verb for logs
 * @key: object key for logs (must outlive @x)
 *
 * Its priority class (@x->prio) is S3D_PRIO_SYNC for a "GET", else
 * S3D_PRIO_META; the caller may change it before submitting.
 */
void s3d_xfer_init(struct s3d_xfer *x, const struct s3d_xfer_ops *ops,
		   const char *what, const char *key)
{
	memset(x, 0, sizeof(*x));
	x->ops = ops;
	x->what = what;
	x->op = op_of(what);
	/* A GET is a FETCH's: its caller says how urgent; the rest is metadata. */
	x->prio = x->op == S3D_OP_GET ? S3D_PRIO_SYNC : S3D_PRIO_META;
	x->key = key;
	/* A listing page holds 1000 entries at most: what they need, no more. */
	s3d_buf_init(&x->resp, x->op == S3D_OP_LIST ? S3D_LIST_PAGE_MAX :
			       S3D_XML_MAX);
	s3d_list_init(&x->node);
	s3d_list_init(&x->backoff.node);
	x->src.fd = -1;
	x->content_length = -1;
	x->range_start = x->range_end = x->range_total = -1;
}

/**
 * s3d_xfer_submit() - queue a transfer (first attempt)
 * @x: initialized with s3d_xfer_init() and not in flight
 *
 * ->done() is called later from the loop, never from in here.
 */
void s3d_xfer_submit(struct s3d_xfer *x)
{
	x->attempt = 0;
	x->spent = 0;
	x->window_ms = s3d_now_ms();
	s3d_pq_add(&eng.queue, &x->node, x->prio, false);
	x->queued = true;
}

/* Abandon @x wherever it is (queued, backing off, in flight); free buffers. */
void s3d_xfer_release(struct s3d_xfer *x)
{
	if (x->queued)
		s3d_pq_del(&eng.queue, &x->node, x->prio);
	x->queued = false;
	s3d_timer_cancel(&x->backoff);
	xfer_cleanup_attempt(x);
	s3d_buf_free(&x->resp);
}

bool s3d_xfer_ok(const struct s3d_xfer *x)
{
	return x->cres == CURLE_OK && !x->err && x->status >= 200 &&
	       x->status < 300;
}

/**
 * s3d_xfer_errno() - the errno for a finished transfer, logged
 * @x: the transfer
 * @bucket: for the log line
 *
 * Logs one line with the operation, the key, the HTTP status and the S3
 * error code and request id (a 404 for a HEAD only at debug level: lookups
 * of names that do not exist are routine).
 *
 * Return: 0 for a 2xx response, else a negative errno.
 */
int s3d_xfer_errno(struct s3d_xfer *x, const char *bucket)
{
	struct s3d_s3error e;
	int err;

	if (x->err)
		return x->err;
	if (x->cres != CURLE_OK) {
		s3d_err("%s s3://%s/%s: %s%s%s", x->what, bucket, x->key,
			curl_easy_strerror(x->cres), x->errbuf[0] ? ": " : "",
			x->errbuf);
		return -EIO;
	}
	if (x->status >= 200 && x->status < 300)
		return 0;
	s3d_xml_parse_error(s3d_buf_str(&x->resp), x->resp.len, &e);
	if (!e.request_id[0])
		snprintf(e.request_id, sizeof(e.request_id), "%s",
			 x->request_id[0] ? x->request_id : "-");
	err = s3d_s3_errno(x->status, e.code);
	/* A HEAD or lookup that finds nothing is a routine negative lookup. */
	s3d_log(x->status == 404 && (x->probe || !strcmp(x->what, "HEAD")) ?
		S3D_LOG_DEBUG : S3D_LOG_ERR,
		"%s s3://%s/%s: HTTP %ld %s%s%s (request id %s)", x->what,
		bucket, x->key, x->status, e.code[0] ? e.code : "-",
		e.message[0] ? ": " : "", e.message, e.request_id);
	return err;
}

/* ---- the loop ---- */

/**
 * s3d_engine_set_stall_timeout() - give up on a transfer that receives no
 *	byte for @seconds (it is retried like any transient error)
 * @seconds: 0 for the default (S3D_STALL_DEFAULT)
 *
 * Applies to transfers started from now on.
 */
void s3d_engine_set_stall_timeout(unsigned int seconds)
{
	eng.stall_s = seconds ?: S3D_STALL_DEFAULT;
}

/**
 * s3d_engine_set_min_rate() - the least a transfer must move: fewer than
 *	@bytes_per_s bytes a second for the stall timeout, and it is dropped
 *	and retried
 * @bytes_per_s: 0 for the default (S3D_MIN_RATE_DEFAULT)
 *
 * Applies to transfers started from now on.
 */
void s3d_engine_set_min_rate(unsigned int bytes_per_s)
{
	eng.min_rate = bytes_per_s ?: S3D_MIN_RATE_DEFAULT;
}

/**
 * s3d_engine_set_retry() - the retry policy from now on
 * @p: the policy; fields left 0 take their defaults (S3D_RETRY_*_DEFAULT)
 *
 * The loop's own budget (of transfers without an S3 context) is resized;
 * contexts size theirs from s3d_engine_retry() when they are made.
 */
void s3d_engine_set_retry(const struct s3d_retry_policy *p)
{
	eng.retry.attempts = p->attempts ?: S3D_RETRY_ATTEMPTS_DEFAULT;
	eng.retry.max_time_s = p->max_time_s ?: S3D_RETRY_MAX_TIME_DEFAULT;
	eng.retry.base_ms = p->base_ms ?: S3D_RETRY_BASE_MS_DEFAULT;
	eng.retry.max_delay_ms = p->max_delay_ms ?:
				  S3D_RETRY_MAX_DELAY_MS_DEFAULT;
	eng.retry.budget = p->budget ?: S3D_RETRY_BUDGET_DEFAULT;
	s3d_retry_budget_init(&eng.budget, eng.retry.budget);
}

const struct s3d_retry_policy *s3d_engine_retry(void)
{
	return &eng.retry;
}

/**
 * s3d_xfer_progress() - @x moved forward (a FETCH wrote a piece): its
 *	retry time (retry_max_time) starts again from now
 * @x: the transfer
 */
void s3d_xfer_progress(struct s3d_xfer *x)
{
	x->window_ms = s3d_now_ms();
}

/**
 * s3d_engine_init() - open the event loop and start the transfer engine on it
 * @max_inflight: most S3 requests in flight at once
 * @ca_bundle: CA certificates file for TLS, or NULL for the system default
 *
 * Return: 0 or -errno (logged).
 */
int s3d_engine_init(unsigned int max_inflight, const char *ca_bundle)
{
	curl_version_info_data *vi;
	CURLcode cc;

	s3d_pq_init(&eng.queue);
	eng.max_inflight = max_inflight ?: 1;
	cc = curl_global_init(CURL_GLOBAL_DEFAULT);
	if (cc) {
		s3d_err("curl_global_init: %s", curl_easy_strerror(cc));
		return -EIO;
	}
	if (s3d_loop_open()) {
		s3d_engine_fini();
		return -EIO;
	}
	vi = curl_version_info(CURLVERSION_NOW);
	if (!vi->ssl_version || !strstr(vi->ssl_version, "OpenSSL"))
		s3d_warn("libcurl %s uses %s, not OpenSSL", vi->version,
			 vi->ssl_version ?: "no TLS library");
	if (ca_bundle) {
		eng.ca_bundle = strdup(ca_bundle);
		if (!eng.ca_bundle)
			goto nomem;
	}
	if (s3d_curlm_init(&eng.curl, "S3 transfers", xfer_done))
		goto nomem;
	s3d_loop_set_turn(pump);
	curl_multi_setopt(eng.curl.multi, CURLMOPT_MAX_TOTAL_CONNECTIONS,
			  (long)eng.max_inflight);
	/* Keep as many idle connections as we may use at once. */
	curl_multi_setopt(eng.curl.multi, CURLMOPT_MAXCONNECTS,
			  (long)eng.max_inflight);
	return 0;
nomem:
	s3d_err("transfer engine: out of memory");
	s3d_engine_fini();
	return -ENOMEM;
}

unsigned int s3d_engine_inflight(void)
{
	return eng.inflight;
}

/* Transfers waiting for a slot (not those backing off before a retry). */
unsigned int s3d_engine_queued(void)
{
	return s3d_pq_count(&eng.queue, -1);
}

void s3d_engine_fini(void)
{
	s3d_curlm_fini(&eng.curl);
	s3d_loop_close();
	free(eng.ca_bundle);
	eng.ca_bundle = NULL;
	curl_global_cleanup();
}

