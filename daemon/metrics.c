// SPDX-License-Identifier: GPL-2.0
/*
 * The Prometheus endpoint: text exposition format 0.0.4 over HTTP/1.x on
 * --metrics ADDR (off by default; meant for loopback).
 *
 * The listener and its connections are watches on the daemon's one epoll
 * loop, like everything else: accept, read and write are non-blocking, a
 * connection reads one request head (at most S3D_METRICS_REQ_MAX bytes),
 * gets one reply built in memory at once (a snapshot taken on the loop
 * thread, so no counter needs a lock) and is closed. At most
 * S3D_METRICS_CONNS connections are open (more are answered 503), and each
 * is closed S3D_METRICS_TIMEOUT_MS after it was accepted whatever it is
 * doing, so a slow or silent client costs a slot for a while and never
 * holds up the loop.
 *
 * After the reply the write side is shut down and what the client still
 * sends is read and dropped (up to a bound) until it closes: closing with
 * unread bytes would reset the connection and could destroy the reply
 * before the client reads it (an oversized request, say).
 *
 * The numbers come from where they are kept: the transfer engine
 * (s3d_stats, lib/xfer.c), eviction (s3d_evict_stats, per-mount usage,
 * evict.c), the pending kernel requests (ops.c), the kernel requests
 * answered, counted here from netlink.c's reply path, and the module's
 * write-back queue and conflicts per mount, read from its sysfs directory
 * at each scrape (a few small reads per mount).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "evict.h"
#include "lib/base.h"
#include "lib/creds.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/util.h"
#include "lib/xfer.h"
#include "metrics.h"
#include "mpu.h"
#include "op_common.h"
#include "ops.h"
#include "req.h"
#include "tierblk.h"
#include "uapi/s3cachefs.h"

#define PREFIX		"s3cachefsd_"
#define DRAIN_MAX	(64U << 10)	/* bytes dropped after the reply */
#define ACCEPT_PAUSE_MS	1000		/* after EMFILE and the like */
#define ERRNO_NR	256		/* kernel request results counted */

const char *s3d_metrics_addr;
unsigned int s3d_metrics_timeout_ms = S3D_METRICS_TIMEOUT_MS;

/* One client connection. */
struct mconn {
	struct s3d_watch w;	/* first: s3d_loop_unwatch_free() */
	struct s3d_list node;	/* on srv.conns */
	struct s3d_timer timer;	/* s3d_metrics_timeout_ms after accept */
	enum { MC_READ, MC_WRITE, MC_DRAIN } state;
	size_t inlen;
	struct s3d_buf out;
	size_t outoff;
	size_t drained;
	char in[S3D_METRICS_REQ_MAX];
};

static struct {
	int fd;				/* the listener, or -1 */
	int port;
	struct s3d_watch w;
	struct s3d_timer resume;	/* re-arm accept after a pause */
	struct s3d_list conns;
	unsigned int nconns;
} srv = { .fd = -1 };

/* Kernel requests answered, by command and result (errno, 0: success). */
static uint64_t kreqs[S3CFS_CMD_MAX + 1][ERRNO_NR];

/* Mount id -> bucket, learned from successful MOUNT replies. */
struct mbucket {
	struct mbucket *next;
	uint32_t mount_id;
	char bucket[];
};
static struct mbucket *mbuckets;

/* ---- exposition format ---- */

/**
 * s3d_prom_escape() - append @s escaped for the exposition format
 * @b: the output
 * @s: the text
 * @label: a label value (also escapes '"'), else HELP text
 */
void s3d_prom_escape(struct s3d_buf *b, const char *s, bool label)
{
	for (; *s; s++) {
		if (*s == '\\')
			s3d_buf_adds(b, "\\\\");
		else if (*s == '\n')
			s3d_buf_adds(b, "\\n");
		else if (*s == '"' && label)
			s3d_buf_adds(b, "\\\"");
		else
			s3d_buf_addc(b, *s);
	}
}

/* "# HELP" and "# TYPE" lines, once per metric family. */
void s3d_prom_family(struct s3d_buf *b, const char *name, const char *type,
		     const char *help)
{
	s3d_buf_addf(b, "# HELP %s ", name);
	s3d_prom_escape(b, help, false);
	s3d_buf_addf(b, "\n# TYPE %s %s\n", name, type);
}

static void sample_name(struct s3d_buf *b, const char *name,
			const struct s3d_prom_label *l, size_t nl,
			const char *le)
{
	size_t i;

	s3d_buf_adds(b, name);
	if (!nl && !le)
		return;
	s3d_buf_addc(b, '{');
	for (i = 0; i < nl; i++) {
		s3d_buf_addf(b, "%s%s=\"", i ? "," : "", l[i].name);
		s3d_prom_escape(b, l[i].value, true);
		s3d_buf_addc(b, '"');
	}
	if (le)
		s3d_buf_addf(b, "%sle=\"%s\"", nl ? "," : "", le);
	s3d_buf_addc(b, '}');
}

/* One sample of an integer value (counters: exact, whatever their size). */
void s3d_prom_u64(struct s3d_buf *b, const char *name,
		  const struct s3d_prom_label *l, size_t nl, uint64_t v)
{
	sample_name(b, name, l, nl, NULL);
	s3d_buf_addf(b, " %llu\n", (unsigned long long)v);
}

/* The shortest of %.15g and %.17g that reads back as @v. */
void s3d_prom_double(struct s3d_buf *b, const char *name,
		     const struct s3d_prom_label *l, size_t nl, double v)
{
	char num[40];

	snprintf(num, sizeof(num), "%.15g", v);
	if (strtod(num, NULL) != v)
		snprintf(num, sizeof(num), "%.17g", v);
	sample_name(b, name, l, nl, NULL);
	s3d_buf_addf(b, " %s\n", num);
}

/**
 * s3d_prom_histogram() - the samples of one histogram
 * @b: the output
 * @name: the family name (_bucket, _sum, _count are appended)
 * @l: labels other than le
 * @nl: how many
 * @bounds: upper bounds, increasing
 * @counts: observations per bucket, not cumulative; @counts[@nbounds] is
 *	the overflow (above the last bound)
 * @nbounds: number of bounds
 * @sum: sum of the observations
 */
void s3d_prom_histogram(struct s3d_buf *b, const char *name,
			const struct s3d_prom_label *l, size_t nl,
			const double *bounds, const uint64_t *counts,
			size_t nbounds, double sum)
{
	char sname[128], le[32];
	uint64_t acc = 0;
	size_t i;

	snprintf(sname, sizeof(sname), "%s_bucket", name);
	for (i = 0; i <= nbounds; i++) {
		acc += counts[i];
		if (i < nbounds)
			snprintf(le, sizeof(le), "%g", bounds[i]);
		else
			strcpy(le, "+Inf");
		sample_name(b, sname, l, nl, le);
		s3d_buf_addf(b, " %llu\n", (unsigned long long)acc);
	}
	snprintf(sname, sizeof(sname), "%s_sum", name);
	s3d_prom_double(b, sname, l, nl, sum);
	snprintf(sname, sizeof(sname), "%s_count", name);
	s3d_prom_u64(b, sname, l, nl, acc);
}

/* ---- what is measured ---- */

static const char *cmd_label(int cmd)
{
	switch (cmd) {
	case S3CFS_CMD_MOUNT:
		return "MOUNT";
	case S3CFS_CMD_UMOUNT:
		return "UMOUNT";
	case S3CFS_CMD_FETCH:
		return "FETCH";
	case S3CFS_CMD_LOOKUP:
		return "LOOKUP";
	case S3CFS_CMD_LIST:
		return "LIST";
	case S3CFS_CMD_EVICT:
		return "EVICT";
	case S3CFS_CMD_CANCEL:
		return "CANCEL";
	case S3CFS_CMD_UPLOAD:
		return "UPLOAD";
	default:
		return "OTHER";
	}
}

static void forget_bucket(uint32_t mount_id)
{
	struct mbucket **pp, *m;

	for (pp = &mbuckets; (m = *pp); pp = &m->next) {
		if (m->mount_id == mount_id) {
			*pp = m->next;
			free(m);
			return;
		}
	}
}

/**
 * s3d_metrics_kreq() - count a kernel request being answered
 * @r: the request
 * @status: its result, 0 or -errno (never a progress report)
 *
 * Called from the reply path in netlink.c. A successful MOUNT also
 * teaches us its bucket, for the cache usage labels.
 */
void s3d_metrics_kreq(const struct s3d_req *r, int status)
{
	int cmd = r->cmd >= 0 && r->cmd <= S3CFS_CMD_MAX ? r->cmd : 0;
	int e = status < 0 ? -status : 0;
	struct mbucket *m;

	kreqs[cmd][e < ERRNO_NR ? e : ERRNO_NR - 1]++;
	if (r->cmd != S3CFS_CMD_MOUNT || status || !r->bucket)
		return;
	forget_bucket(r->mount_id);
	m = malloc(sizeof(*m) + strlen(r->bucket) + 1);
	if (!m)
		return;
	m->mount_id = r->mount_id;
	strcpy(m->bucket, r->bucket);
	m->next = mbuckets;
	mbuckets = m;
}

static const char *bucket_of(uint32_t mount_id)
{
	const struct mbucket *m;

	for (m = mbuckets; m; m = m->next)
		if (m->mount_id == mount_id)
			return m->bucket;
	return "";
}

/* Resident set size, from /proc/self/statm (pages). */
static uint64_t rss_bytes(void)
{
	unsigned long long size, res = 0;
	FILE *f = fopen("/proc/self/statm", "re");

	if (!f)
		return 0;
	if (fscanf(f, "%llu %llu", &size, &res) != 2)
		res = 0;
	fclose(f);
	return res * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* Seconds since the process started (/proc/uptime minus its start). */
static double uptime_seconds(void)
{
	char buf[1024], *p;
	unsigned long long start = 0;
	double up = 0;
	FILE *f;
	size_t n;
	int i;

	f = fopen("/proc/self/stat", "re");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* Field 22 (starttime); comm (field 2) may hold spaces: skip past ')'. */
	p = strrchr(buf, ')');
	for (i = 2; p && i < 22; i++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu", &start) != 1)
		return 0;
	f = fopen("/proc/uptime", "re");
	if (!f)
		return 0;
	if (fscanf(f, "%lf", &up) != 1)
		up = 0;
	fclose(f);
	up -= (double)start / (double)sysconf(_SC_CLK_TCK);
	/* Both are in hundredths: do not print float noise past them. */
	return up > 0 ? (double)(long long)(up * 100 + 0.5) / 100 : 0;
}

static void render_s3(struct s3d_buf *b)
{
	struct s3d_prom_label l[2];
	const struct s3d_op_stats *st;
	char code[16];
	int op, s;

	s3d_prom_family(b, PREFIX "s3_requests_total", "counter",
			"S3 request attempts by operation and HTTP status (code=\"error\": no HTTP response: connection, TLS or timeout).");
	for (op = 0; op < S3D_OP_NR; op++) {
		st = &s3d_stats.op[op];
		l[0] = (struct s3d_prom_label){ "op", s3d_op_name(op) };
		for (s = 0; s < 600; s++) {
			if (!st->status[s])
				continue;
			snprintf(code, sizeof(code), "%d", s);
			l[1] = (struct s3d_prom_label){ "code", s ? code : "error" };
			s3d_prom_u64(b, PREFIX "s3_requests_total", l, 2,
				     st->status[s]);
		}
	}
	s3d_prom_family(b, PREFIX "s3_request_duration_seconds", "histogram",
			"S3 request attempt latency, from libcurl's total time (queueing and retry back-off excluded).");
	for (op = 0; op < S3D_OP_NR; op++) {
		st = &s3d_stats.op[op];
		l[0] = (struct s3d_prom_label){ "op", s3d_op_name(op) };
		s3d_prom_histogram(b, PREFIX "s3_request_duration_seconds", l,
				   1, s3d_lat_bounds, st->lat, S3D_LAT_NR,
				   (double)st->lat_sum_us / 1e6);
	}
	s3d_prom_family(b, PREFIX "s3_received_bytes_total", "counter",
			"Response body bytes received from S3 (error bodies included).");
	for (op = 0; op < S3D_OP_NR; op++) {
		l[0] = (struct s3d_prom_label){ "op", s3d_op_name(op) };
		s3d_prom_u64(b, PREFIX "s3_received_bytes_total", l, 1,
			     s3d_stats.op[op].bytes_in);
	}
	s3d_prom_family(b, PREFIX "s3_retries_total", "counter",
			"S3 request attempts repeated after a transient failure.");
	for (op = 0; op < S3D_OP_NR; op++) {
		l[0] = (struct s3d_prom_label){ "op", s3d_op_name(op) };
		s3d_prom_u64(b, PREFIX "s3_retries_total", l, 1,
			     s3d_stats.op[op].retries);
	}
	s3d_prom_family(b, PREFIX "s3_failures_total", "counter",
			"S3 requests that failed for good (after their last attempt), 404s included.");
	for (op = 0; op < S3D_OP_NR; op++) {
		l[0] = (struct s3d_prom_label){ "op", s3d_op_name(op) };
		s3d_prom_u64(b, PREFIX "s3_failures_total", l, 1,
			     s3d_stats.op[op].failures);
	}
	s3d_prom_family(b, PREFIX "s3_inflight_requests", "gauge",
			"S3 requests in flight now (at most --max-inflight).");
	s3d_prom_u64(b, PREFIX "s3_inflight_requests", NULL, 0,
		     s3d_engine_inflight());
	s3d_prom_family(b, PREFIX "s3_queued_requests", "gauge",
			"S3 requests waiting for an in-flight slot.");
	s3d_prom_u64(b, PREFIX "s3_queued_requests", NULL, 0,
		     s3d_engine_queued());
}

/* One counter of one value, without labels. */
static void prom_counter(struct s3d_buf *b, const char *name,
			 const char *help, uint64_t v)
{
	s3d_prom_family(b, name, "counter", help);
	s3d_prom_u64(b, name, NULL, 0, v);
}

/* One family of counters with one label, from an array of names. */
static void prom_by(struct s3d_buf *b, const char *name, const char *help,
		    const char *label, const char *const *names,
		    const uint64_t *v, int n, int from)
{
	struct s3d_prom_label l;
	int i;

	s3d_prom_family(b, name, "counter", help);
	for (i = from; i < n; i++) {
		l = (struct s3d_prom_label){ label, names[i] };
		s3d_prom_u64(b, name, &l, 1, v[i]);
	}
}

/*
 * The fleet tier (tier.c): its own counters; its requests are counted
 * apart, so s3_* stay the origin's.
 */
static void render_tier(struct s3d_buf *b)
{
	const struct s3d_tier_stats *t = &s3d_tier_stats;
	const char *bad[S3D_TIER_BAD_NR];
	struct s3d_prom_label l[2];
	const struct s3d_op_stats *st;
	char code[16];
	int i, op;

	for (i = 0; i < S3D_TIER_BAD_NR; i++)
		bad[i] = s3d_tier_bad_name((enum s3d_tier_bad)i);
	s3d_prom_family(b, PREFIX "tier_enabled", "gauge",
			"1 while a fleet tier is configured and not switched off (401/403); read at the first FETCH after a start or reload.");
	s3d_prom_u64(b, PREFIX "tier_enabled", NULL, 0, t->on);
	prom_counter(b, PREFIX "tier_hits_total",
		     "Blocks read from the tier, verified and used.", t->hits);
	prom_counter(b, PREFIX "tier_hit_bytes_total",
		     "Bytes of those blocks.", t->hit_bytes);
	prom_counter(b, PREFIX "tier_misses_total",
		     "Blocks the tier did not have (404).", t->misses);
	prom_counter(b, PREFIX "tier_skipped_total",
		     "Blocks not asked for: the breaker was open.", t->skipped);
	prom_by(b, PREFIX "tier_invalid_total",
		"Blocks from the tier refused (origin sent them and they were put back), by reason.",
		"reason", bad, t->invalid, S3D_TIER_BAD_NR, 1);
	prom_by(b, PREFIX "tier_errors_total",
		"Tier requests that failed (never retried), by reason.",
		"reason", s3d_tier_err_name, t->errors, S3D_TIER_ERR_NR, 0);
	prom_by(b, PREFIX "tier_puts_total",
		"Blocks from origin to put into the tier, by outcome.",
		"outcome", s3d_tier_put_name, t->puts, S3D_TIER_PUT_NR, 0);
	s3d_prom_family(b, PREFIX "tier_put_queue", "gauge",
			"Blocks waiting to be put into the tier.");
	s3d_prom_u64(b, PREFIX "tier_put_queue", NULL, 0, t->queued);
	s3d_prom_family(b, PREFIX "tier_puts_paused", "gauge",
			"1 while puts wait a minute because the tier said it is full (507, QuotaExceeded).");
	s3d_prom_u64(b, PREFIX "tier_puts_paused", NULL, 0, t->puts_paused);
	s3d_prom_family(b, PREFIX "tier_breaker_state", "gauge",
			"The tier's breaker: 0 closed, 1 open (all to origin), 2 half open (probing).");
	s3d_prom_u64(b, PREFIX "tier_breaker_state", NULL, 0, t->breaker);
	prom_counter(b, PREFIX "tier_breaker_opens_total",
		     "Times the tier's breaker opened.", t->breaker_opens);
	s3d_prom_family(b, PREFIX "tier_lease_support", "gauge",
			"What the probe said of the tier's conditional PUTs: 0 not known yet (no leases), 1 honoured (leases on), 2 ignored (no leases).");
	s3d_prom_u64(b, PREFIX "tier_lease_support", NULL, 0, t->lease_support);
	prom_by(b, PREFIX "tier_leases_total",
		"Leases of stripes FETCHes missed, by outcome: won (this node fetches), taken_over (stale by the tier's clock), own (this node's already), lost_tier (another node's; its blocks came from the tier), lost_origin (another node's; waited, then origin), failed (origin at once), unsupported (the tier ignores conditional PUTs), claim_lost (a later stripe's claim found another node's lease).",
		"outcome", s3d_tier_lease_name, t->leases, S3D_TIER_LEASE_NR, 0);
	prom_counter(b, PREFIX "tier_lease_polls_total",
		     "Tier GETs of blocks another node's lease promised.",
		     t->lease_polls);
	s3d_prom_family(b, PREFIX "tier_requests_total", "counter",
			"Tier request attempts by operation and HTTP status (code=\"error\": no HTTP response).");
	for (op = 0; op < S3D_OP_NR; op++) {
		st = &t->req.op[op];
		l[0] = (struct s3d_prom_label){ "op", s3d_op_name(op) };
		for (i = 0; i < 600; i++) {
			if (!st->status[i])
				continue;
			snprintf(code, sizeof(code), "%d", i);
			l[1] = (struct s3d_prom_label){ "code", i ? code : "error" };
			s3d_prom_u64(b, PREFIX "tier_requests_total", l, 2,
				     st->status[i]);
		}
	}
	s3d_prom_family(b, PREFIX "tier_request_duration_seconds", "histogram",
			"Tier request latency, from libcurl's total time.");
	for (op = 0; op < S3D_OP_NR; op++) {
		st = &t->req.op[op];
		l[0] = (struct s3d_prom_label){ "op", s3d_op_name(op) };
		s3d_prom_histogram(b, PREFIX "tier_request_duration_seconds",
				   l, 1, s3d_lat_bounds, st->lat, S3D_LAT_NR,
				   (double)st->lat_sum_us / 1e6);
	}
	prom_counter(b, PREFIX "tier_received_bytes_total",
		     "Response body bytes received from the tier.",
		     t->req.bytes_in);
}

/* Refreshes of temporary credentials (creds_watch.c counts them). */
static void render_creds(struct s3d_buf *b)
{
	static const struct s3d_prom_label ok[] = { { "result", "ok" } };
	static const struct s3d_prom_label failed[] = { { "result", "failed" } };

	s3d_prom_family(b, PREFIX "credential_refreshes_total", "counter",
			"Refreshes of temporary credentials (failed ones are retried).");
	s3d_prom_u64(b, PREFIX "credential_refreshes_total", ok, 1,
		     s3d_creds_stats.refreshes);
	s3d_prom_u64(b, PREFIX "credential_refreshes_total", failed, 1,
		     s3d_creds_stats.refresh_failures);
}

/* The counters of struct s3d_upload_stats. */
static void render_uploads(struct s3d_buf *b)
{
	const struct s3d_upload_stats *u = &s3d_upload_stats;

	prom_counter(b, PREFIX "upload_bytes_total",
		     "Bytes of objects uploaded (results of UPLOAD by kernel_requests_total).",
		     u->bytes);
	prom_counter(b, PREFIX "upload_multipart_total",
		     "Objects uploaded as multipart uploads.", u->multipart);
	prom_counter(b, PREFIX "upload_parts_total",
		     "Parts of multipart uploads put.", u->parts);
	prom_counter(b, PREFIX "upload_aborted_total",
		     "Multipart uploads aborted (a failure, a conflict, a cancel, or left by a dead daemon).",
		     u->aborted);
	prom_counter(b, PREFIX "upload_abort_failures_total",
		     "Multipart uploads that could not be aborted (their parts stay in S3; the journal keeps them for the next mount).",
		     u->abort_failed);
	prom_counter(b, PREFIX "upload_ours_total",
		     "Failed conditions that a HEAD showed to be our own bytes (a lost answer): successes, not conflicts.",
		     u->ours);
	prom_counter(b, PREFIX "upload_again_total",
		     "Failed conditions on an earlier upload of the same file (its writer token) that took effect unknown to the kernel: sent again over it.",
		     u->again);
	prom_counter(b, PREFIX "upload_recovered_total",
		     "Multipart uploads a dead daemon left, aborted at MOUNT from the journal.",
		     u->recovered);
	prom_counter(b, PREFIX "upload_streamed_total",
		     "Uploads whose first parts went up while the file was written (streams used).",
		     u->streamed);
	prom_counter(b, PREFIX "upload_stream_dropped_total",
		     "Streams aborted unused: the file was rewritten, renamed, unlinked, or a part failed.",
		     u->stream_dropped);
}

static void render_kernel(struct s3d_buf *b)
{
	struct s3d_prom_label l[2];
	char ebuf[16];
	const char *en;
	int c, e;

	s3d_prom_family(b, PREFIX "kernel_requests_total", "counter",
			"Kernel requests answered, by command and result (ok, or the errno name).");
	for (c = 0; c <= S3CFS_CMD_MAX; c++) {
		l[0] = (struct s3d_prom_label){ "cmd", cmd_label(c) };
		for (e = 0; e < ERRNO_NR; e++) {
			if (!kreqs[c][e])
				continue;
			en = e ? strerrorname_np(e) : "ok";
			if (!en) {
				snprintf(ebuf, sizeof(ebuf), "E%d", e);
				en = ebuf;
			}
			l[1] = (struct s3d_prom_label){ "result", en };
			s3d_prom_u64(b, PREFIX "kernel_requests_total", l, 2,
				     kreqs[c][e]);
		}
	}
	s3d_prom_family(b, PREFIX "kernel_requests_pending", "gauge",
			"Kernel requests being worked on now.");
	s3d_prom_u64(b, PREFIX "kernel_requests_pending", NULL, 0,
		     s3d_ops_pending());
	prom_counter(b, PREFIX "lookup_whole_objects_total",
		     "Objects a LOOKUP brought whole with its first GET (no FETCH to follow).",
		     s3d_lookup_stats.whole);
	prom_counter(b, PREFIX "lookup_whole_bytes_total",
		     "Bytes of those objects, written to the cache.",
		     s3d_lookup_stats.whole_bytes);
	prom_counter(b, PREFIX "lookup_listings_total",
		     "Directories listed because names new to the cache were looked up in them.",
		     s3d_lookup_stats.listings);
	prom_counter(b, PREFIX "lookup_listings_big_total",
		     "... of them given up: more than lookup_list_pages pages.",
		     s3d_lookup_stats.listings_big);
	prom_counter(b, PREFIX "lookup_listed_total",
		     "LOOKUPs answered by such a listing, with no request of their own.",
		     s3d_lookup_stats.listed);
	prom_counter(b, PREFIX "lookup_indexed_total",
		     "Cache files made at a LOOKUP from the directory's index, with no request to S3.",
		     s3d_lookup_stats.indexed);
	render_uploads(b);
}

struct usage_ctx {
	struct s3d_buf *b;
	bool limit;
};

static void usage_one(void *arg, uint32_t mount_id, const struct s3d_cache *c)
{
	struct usage_ctx *u = arg;
	struct s3d_prom_label l[2];
	uint64_t used, limit;
	char id[16];

	snprintf(id, sizeof(id), "%u", mount_id);
	l[0] = (struct s3d_prom_label){ "mount", id };
	l[1] = (struct s3d_prom_label){ "bucket", bucket_of(mount_id) };
	s3d_cache_usage(c, &used, &limit);
	if (u->limit)
		s3d_prom_u64(u->b, PREFIX "cache_limit_bytes", l, 2, limit);
	else
		s3d_prom_u64(u->b, PREFIX "cache_used_bytes", l, 2, used);
}

/* Mount ids no longer tracked lose their bucket name. */
static void prune_one(void *arg, uint32_t mount_id, const struct s3d_cache *c)
{
	struct mbucket **keep = arg, **pp, *m;

	(void)c;
	for (pp = &mbuckets; (m = *pp); pp = &m->next) {
		if (m->mount_id == mount_id) {
			*pp = m->next;
			m->next = *keep;
			*keep = m;
			return;
		}
	}
}

/* The eviction counters: one family each, no labels. */
struct evict_metric {
	const char *name, *type, *help;
	size_t off;		/* in struct s3d_evict_stats */
};

#define EVICT_METRIC(n, t, f, h) \
	{ PREFIX n, t, h, offsetof(struct s3d_evict_stats, f) }
static const struct evict_metric evict_metrics[] = {
	EVICT_METRIC("evictions_total", "counter", evictions,
		     "Files evicted (the kernel punched them)."),
	EVICT_METRIC("evicted_bytes_total", "counter", bytes,
		     "Bytes freed by evictions."),
	EVICT_METRIC("eviction_busy_total", "counter", busy,
		     "Evictions skipped: the file was being fetched."),
	EVICT_METRIC("eviction_failures_total", "counter", failures,
		     "Evictions that failed for another reason."),
	EVICT_METRIC("eviction_timeouts_total", "counter", timeouts,
		     "EVICTs given up: no answer from the kernel in time."),
	EVICT_METRIC("eviction_acks_lost_total", "counter", lost,
		     "EVICTs given up: the netlink receive queue overflowed."),
	EVICT_METRIC("cache_full_total", "counter", nospace,
		     "Writes of fetched data that found the cache device full."),
	EVICT_METRIC("eviction_passes_total", "counter", passes,
		     "Eviction passes started."),
	EVICT_METRIC("eviction_slice_max_ms", "gauge", slice_ms_max,
		     "The longest the event loop was held by one slice of a pass."),
};

static void render_cache(struct s3d_buf *b)
{
	struct usage_ctx u = { .b = b };
	struct mbucket *keep = NULL, *m;
	size_t i;

	s3d_cache_foreach(prune_one, &keep);
	while ((m = mbuckets)) {
		mbuckets = m->next;
		free(m);
	}
	mbuckets = keep;

	s3d_prom_family(b, PREFIX "cache_used_bytes", "gauge",
			"Bytes allocated to cached files, per mount.");
	s3d_cache_foreach(usage_one, &u);
	s3d_prom_family(b, PREFIX "cache_limit_bytes", "gauge",
			"The mount's cache limit in bytes (0: unlimited).");
	u.limit = true;
	s3d_cache_foreach(usage_one, &u);

	for (i = 0; i < sizeof(evict_metrics) / sizeof(evict_metrics[0]); i++) {
		const struct evict_metric *m = &evict_metrics[i];

		s3d_prom_family(b, m->name, m->type, m->help);
		s3d_prom_u64(b, m->name, NULL, 0,
			     *(const uint64_t *)((const char *)&s3d_evict_stats +
						 m->off));
	}
}

/* ---- the module's per-mount counters (sysfs): write-back, hits ---- */

#define SYSFS_DIR	"/sys/fs/s3cachefs"
#define SYS_MOUNTS_MAX	256	/* mounts reported at most */

struct wb_metric {
	const char *name, *type, *help, *file;
};

static const struct wb_metric wb_metrics[] = {
	{ PREFIX "writeback_queued_files", "gauge",
	  "Files a write-back mount acknowledged and has not uploaded yet.",
	  "wb_queued" },
	{ PREFIX "writeback_queued_bytes", "gauge",
	  "Bytes of those files.", "wb_queued_bytes" },
	{ PREFIX "writeback_oldest_seconds", "gauge",
	  "How long the longest-waiting of those files has waited.",
	  "wb_oldest_s" },
	{ PREFIX "writeback_upload_errors_total", "counter",
	  "Queued uploads that failed (each is tried again later).",
	  "wb_errors" },
	{ PREFIX "conflicts_total", "counter",
	  "Uploads refused because the object changed in S3 meanwhile (our bytes kept in the cache's conflicts area).",
	  "conflicts" },
	/* The cache's hit ratio: only the module sees the hits. */
	{ PREFIX "chunk_hits_total", "counter",
	  "Chunks read from the cache directory without a fetch (page-cache hits not counted).",
	  "chunk_hits" },
	{ PREFIX "chunk_misses_total", "counter",
	  "Chunks a reader found missing in the cache directory and waited for.",
	  "chunk_misses" },
};

/* One decimal number from SYSFS_DIR/@dir/@file. */
static int sys_u64(const char *dir, const char *file, uint64_t *v)
{
	char p[256], buf[32], *end;
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), SYSFS_DIR "/%s/%s", dir, file);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n ? -errno : -EINVAL;
	buf[n] = '\0';
	errno = 0;
	*v = strtoull(buf, &end, 10);
	if (errno || end == buf)
		return -EINVAL;
	return 0;
}

struct sys_mount {
	uint32_t id;
	char dir[32];		/* MAJ:MIN under SYSFS_DIR */
};

/* The module's mounts (none when it is not loaded). */
static size_t sys_mounts(struct sys_mount *out, size_t max)
{
	DIR *d = opendir(SYSFS_DIR);
	struct dirent *de;
	uint64_t id;
	size_t n = 0;

	if (!d)
		return 0;
	while (n < max && (de = readdir(d))) {
		if (de->d_name[0] == '.' || strlen(de->d_name) >= sizeof(out->dir) ||
		    sys_u64(de->d_name, "mount_id", &id))
			continue;
		out[n].id = (uint32_t)id;
		strcpy(out[n].dir, de->d_name);
		n++;
	}
	closedir(d);
	return n;
}

static void render_writeback(struct s3d_buf *b)
{
	struct sys_mount *sm = calloc(SYS_MOUNTS_MAX, sizeof(*sm));
	struct s3d_prom_label l[2];
	size_t n, i, j;
	char id[16];
	uint64_t v;

	if (!sm)
		return;
	n = sys_mounts(sm, SYS_MOUNTS_MAX);
	for (i = 0; i < sizeof(wb_metrics) / sizeof(wb_metrics[0]); i++) {
		const struct wb_metric *m = &wb_metrics[i];

		s3d_prom_family(b, m->name, m->type, m->help);
		for (j = 0; j < n; j++) {
			if (sys_u64(sm[j].dir, m->file, &v))
				continue;
			snprintf(id, sizeof(id), "%u", sm[j].id);
			l[0] = (struct s3d_prom_label){ "mount", id };
			l[1] = (struct s3d_prom_label){ "bucket", bucket_of(sm[j].id) };
			s3d_prom_u64(b, m->name, l, 2, v);
		}
	}
	free(sm);
}

/**
 * s3d_metrics_render() - the whole exposition, as of now
 * @b: appended to
 *
 * Return: 0, or the buffer's error (-ENOMEM).
 */
int s3d_metrics_render(struct s3d_buf *b)
{
	static const struct s3d_prom_label ver[] = {
		{ "version", S3D_VERSION },
	};

	s3d_prom_family(b, PREFIX "build_info", "gauge",
			"Always 1; the daemon's version in a label.");
	s3d_prom_u64(b, PREFIX "build_info", ver, 1, 1);
	s3d_prom_family(b, PREFIX "uptime_seconds", "gauge",
			"Seconds since the daemon started.");
	s3d_prom_double(b, PREFIX "uptime_seconds", NULL, 0, uptime_seconds());
	s3d_prom_family(b, PREFIX "resident_memory_bytes", "gauge",
			"Resident set size of the daemon.");
	s3d_prom_u64(b, PREFIX "resident_memory_bytes", NULL, 0, rss_bytes());
	render_s3(b);
	render_creds(b);
	render_kernel(b);
	render_cache(b);
	render_writeback(b);
	render_tier(b);
	return b->err;
}

/* ---- HTTP ---- */

static void conn_close(struct mconn *c)
{
	s3d_timer_cancel(&c->timer);
	s3d_list_del(&c->node);
	s3d_buf_free(&c->out);
	s3d_loop_unwatch_free(&c->w);
	close(c->w.fd);
	srv.nconns--;
}

/* Read and drop what the client still sends; close at EOF or the bound. */
static void conn_drain(struct mconn *c)
{
	char scratch[4096];
	ssize_t n;

	for (;;) {
		n = recv(c->w.fd, scratch, sizeof(scratch), 0);
		if (n > 0) {
			c->drained += (size_t)n;
			if (c->drained <= DRAIN_MAX)
				continue;
		} else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			return;
		}
		conn_close(c);
		return;
	}
}

static void conn_flush(struct mconn *c)
{
	ssize_t n;

	while (c->outoff < c->out.len) {
		n = send(c->w.fd, c->out.p + c->outoff, c->out.len - c->outoff,
			 MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;		/* EPOLLOUT brings us back */
		if (n <= 0) {
			conn_close(c);
			return;
		}
		c->outoff += (size_t)n;
	}
	shutdown(c->w.fd, SHUT_WR);
	c->state = MC_DRAIN;
	if (s3d_loop_modify(&c->w, EPOLLIN | EPOLLRDHUP)) {
		conn_close(c);
		return;
	}
	conn_drain(c);
}

static void conn_reply(struct mconn *c, int status, const char *reason,
		       const char *extra, const struct s3d_buf *body,
		       bool head_only)
{
	const char *text = body ? s3d_buf_str(body) : reason;
	size_t len = body ? body->len : strlen(reason) + 1;

	s3d_buf_addf(&c->out,
		     "HTTP/1.1 %d %s\r\n"
		     "Content-Type: %s\r\n"
		     "Content-Length: %zu\r\n"
		     "%s"
		     "Connection: close\r\n\r\n",
		     status, reason,
		     body ? "text/plain; version=0.0.4; charset=utf-8" :
			    "text/plain; charset=utf-8",
		     len, extra ?: "");
	if (!head_only) {
		s3d_buf_add(&c->out, text, body ? len : len - 1);
		if (!body)
			s3d_buf_addc(&c->out, '\n');
	}
	if (c->out.err) {
		conn_close(c);
		return;
	}
	c->state = MC_WRITE;
	if (s3d_loop_modify(&c->w, EPOLLOUT)) {
		conn_close(c);
		return;
	}
	conn_flush(c);
}

/* A whole request head is in: answer it. */
static void conn_request(struct mconn *c)
{
	char *line = c->in, *sp1, *sp2, *eol;
	struct s3d_buf body;
	size_t mlen, tlen;
	bool head;

	eol = memchr(line, '\n', c->inlen);
	sp1 = eol ? memchr(line, ' ', (size_t)(eol - line)) : NULL;
	sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1)) : NULL;
	if (!sp2 || eol - sp2 < 9 || strncmp(sp2 + 1, "HTTP/1.", 7)) {
		conn_reply(c, 400, "Bad Request", NULL, NULL, false);
		return;
	}
	mlen = (size_t)(sp1 - line);
	tlen = (size_t)(sp2 - sp1 - 1);
	head = mlen == 4 && !memcmp(line, "HEAD", 4);
	if (!head && !(mlen == 3 && !memcmp(line, "GET", 3))) {
		conn_reply(c, 405, "Method Not Allowed", "Allow: GET, HEAD\r\n",
			   NULL, false);
		return;
	}
	if (tlen < 8 || memcmp(sp1 + 1, "/metrics", 8) ||
	    (tlen > 8 && sp1[9] != '?')) {
		conn_reply(c, 404, "Not Found", NULL, NULL, head);
		return;
	}
	s3d_buf_init(&body, 0);
	if (s3d_metrics_render(&body)) {
		s3d_buf_free(&body);
		conn_reply(c, 500, "Internal Server Error", NULL, NULL, head);
		return;
	}
	conn_reply(c, 200, "OK", NULL, &body, head);
	s3d_buf_free(&body);
}

static void conn_read(struct mconn *c)
{
	ssize_t n;

	while (c->inlen < sizeof(c->in)) {
		n = recv(c->w.fd, c->in + c->inlen, sizeof(c->in) - c->inlen,
			 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {		/* gone before asking anything */
			conn_close(c);
			return;
		}
		c->inlen += (size_t)n;
		if (memmem(c->in, c->inlen, "\r\n\r\n", 4) ||
		    memmem(c->in, c->inlen, "\n\n", 2)) {
			conn_request(c);
			return;
		}
	}
	conn_reply(c, 431, "Request Header Fields Too Large", NULL, NULL,
		   false);
}

static void conn_event(struct s3d_watch *w, uint32_t events)
{
	struct mconn *c = s3d_container_of(w, struct mconn, w);

	(void)events;
	switch (c->state) {
	case MC_READ:
		conn_read(c);
		break;
	case MC_WRITE:
		conn_flush(c);
		break;
	case MC_DRAIN:
		conn_drain(c);
		break;
	}
}

static void conn_timeout(struct s3d_timer *t)
{
	conn_close(s3d_container_of(t, struct mconn, timer));
}

static void conn_new(int fd)
{
	static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\n"
		"Content-Length: 0\r\nConnection: close\r\n\r\n";
	struct mconn *c;

	if (srv.nconns >= S3D_METRICS_CONNS) {
		/* Best effort: the socket buffer is empty, so this fits. */
		if (send(fd, busy, sizeof(busy) - 1,
			 MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
			s3d_dbg("metrics: 503: %s", strerror(errno));
		close(fd);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return;
	}
	s3d_buf_init(&c->out, 0);
	s3d_list_init(&c->timer.node);
	if (s3d_loop_watch(&c->w, fd, EPOLLIN | EPOLLRDHUP, conn_event)) {
		free(c);
		close(fd);
		return;
	}
	s3d_list_add_tail(&c->node, &srv.conns);
	srv.nconns++;
	c->timer.fn = conn_timeout;
	s3d_timer_arm(&c->timer, s3d_metrics_timeout_ms);
}

static void accept_resume(struct s3d_timer *t)
{
	(void)t;
	if (srv.fd >= 0)
		s3d_loop_modify(&srv.w, EPOLLIN);
}

static void on_listen(struct s3d_watch *w, uint32_t events)
{
	int i, fd;

	(void)events;
	for (i = 0; i < 64; i++) {
		fd = accept4(w->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd >= 0) {
			conn_new(fd);
			continue;
		}
		if (errno == EINTR || errno == ECONNABORTED)
			continue;
		if (errno == EAGAIN)
			return;
		/*
		 * Out of descriptors or memory: the pending connection
		 * keeps the listener readable, so stop watching it a while
		 * rather than spin.
		 */
		if (s3d_log_once("metrics-accept"))
			s3d_warn("metrics: accept: %s; pausing the endpoint",
				 strerror(errno));
		s3d_loop_modify(w, 0);
		s3d_timer_arm(&srv.resume, ACCEPT_PAUSE_MS);
		return;
	}
}

static bool port_valid(const char *p)
{
	size_t n = strspn(p, "0123456789");

	return n && n <= 5 && !p[n] && atoi(p) <= 65535;
}

/* "host:port", "[v6]:port" or "port" (loopback) -> host, port. */
static int split_addr(const char *addr, char *host, size_t hlen,
		      const char **port)
{
	const char *colon;
	size_t n;

	if (!strchr(addr, ':')) {
		snprintf(host, hlen, "127.0.0.1");
		*port = addr;
		return port_valid(addr) ? 0 : -EINVAL;
	}
	if (addr[0] == '[') {
		colon = strchr(addr, ']');
		if (!colon || colon[1] != ':')
			return -EINVAL;
		n = (size_t)(colon - addr - 1);
		addr++;
		colon++;
	} else {
		colon = strrchr(addr, ':');
		n = (size_t)(colon - addr);
		if (memchr(addr, ':', n))
			return -EINVAL;		/* bare v6: needs [] */
	}
	if (!n || n >= hlen)
		return -EINVAL;
	memcpy(host, addr, n);
	host[n] = '\0';
	*port = colon + 1;
	return port_valid(*port) ? 0 : -EINVAL;
}

static bool is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr)
			>> 24) == 127;
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a =
			&((const struct sockaddr_in6 *)sa)->sin6_addr;

		return IN6_IS_ADDR_LOOPBACK(a) ||
		       (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
	}
	return false;
}

static int listen_on(const struct addrinfo *ai)
{
	union {
		struct sockaddr sa;
		struct sockaddr_in in;
		struct sockaddr_in6 in6;
	} u;
	socklen_t len = sizeof(u);
	int fd, one = 1;

	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK |
		    SOCK_CLOEXEC, ai->ai_protocol);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) ||
	    listen(fd, S3D_METRICS_CONNS) ||
	    getsockname(fd, &u.sa, &len)) {
		int err = -errno;

		close(fd);
		return err;
	}
	srv.port = ntohs(u.sa.sa_family == AF_INET6 ? u.in6.sin6_port :
						       u.in.sin_port);
	return fd;
}

/**
 * s3d_metrics_start() - serve the metrics on @addr
 * @addr: "host:port", "[v6]:port" or "port" (127.0.0.1); NULL: do nothing.
 *	Port 0 picks a free one (tests; see s3d_metrics_port()).
 *
 * Must be called after s3d_engine_init(). A non-loopback address is allowed
 * (it was asked for explicitly) but warned about: the endpoint has no
 * authentication.
 *
 * Return: 0 or -errno (logged).
 */
int s3d_metrics_start(const char *addr)
{
	struct addrinfo hints = {
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_NUMERICSERV,
	}, *res, *ai;
	const char *port;
	char host[256];
	int rc, fd = -EADDRNOTAVAIL;

	if (!addr)
		return 0;
	if (split_addr(addr, host, sizeof(host), &port)) {
		s3d_err("metrics: bad address '%s': want HOST:PORT, [IPV6]:PORT or PORT",
			addr);
		return -EINVAL;
	}
	rc = getaddrinfo(host, port, &hints, &res);
	if (rc) {
		s3d_err("metrics: %s: %s", addr, gai_strerror(rc));
		return -EINVAL;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		fd = listen_on(ai);
		if (fd >= 0)
			break;
	}
	if (fd < 0) {
		s3d_err("metrics: cannot listen on %s: %s", addr,
			strerror(-fd));
		freeaddrinfo(res);
		return fd;
	}
	if (!is_loopback(ai->ai_addr))
		s3d_warn("metrics: %s is not a loopback address: anyone who can reach it can read the metrics (no authentication)",
			 addr);
	freeaddrinfo(res);

	s3d_list_init(&srv.conns);
	s3d_list_init(&srv.resume.node);
	srv.resume.fn = accept_resume;
	srv.nconns = 0;
	rc = s3d_loop_watch(&srv.w, fd, EPOLLIN, on_listen);
	if (rc) {
		s3d_err("metrics: watching the listener: %s", strerror(-rc));
		close(fd);
		return rc;
	}
	srv.fd = fd;
	s3d_info("metrics: serving http://%s/metrics (port %d)", addr, srv.port);
	return 0;
}

/* The port listened on, or -1 (tests started with port 0). */
int s3d_metrics_port(void)
{
	return srv.fd >= 0 ? srv.port : -1;
}

/* Close the listener and every connection (before s3d_engine_fini()). */
void s3d_metrics_stop(void)
{
	if (srv.fd < 0)
		return;
	while (!s3d_list_empty(&srv.conns))
		conn_close(s3d_container_of(srv.conns.next, struct mconn,
					    node));
	s3d_timer_cancel(&srv.resume);
	s3d_loop_unwatch(&srv.w);
	close(srv.fd);
	srv.fd = -1;
}
