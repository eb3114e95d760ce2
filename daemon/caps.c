// SPDX-License-Identifier: GPL-2.0
/*
 * Conditional writes, probed once per bucket at its first writable MOUNT,
 * under a name that cannot exist (PREFIX.s3cfs-probe-<random>, a daemon
 * temporary the mount never shows):
 *
 *  1. PUT (empty) with If-Match a made-up ETag: a server that honours the
 *     condition answers 404 NoSuchKey or 412 and creates nothing; one that
 *     ignores it creates the object (CAPS_NONE; deleted at once).
 *  2. PUT with If-None-Match: * (created), then PUT with If-Match its ETag
 *     as S3 quotes it: 200. Ceph RGW 16 refuses the quoted form (412) and
 *     takes the bare one: If-Match is then sent bare (caps->bare_if_match).
 *  3. A CopyObject of it with x-amz-copy-source-if-match a made-up ETag:
 *     412 from S3; RGW 16 copies (caps->copy_ignores; the copy is deleted):
 *     a rename then checks the source's ETag with a HEAD first.
 *  4. A one-part multipart upload completed with If-Match a made-up ETag:
 *     412 from a server that checks conditions on CompleteMultipartUpload;
 *     RGW 16 ignores them and completes (caps->complete_ignores): uploads
 *     up to 5 GiB then go as one conditional PUT instead of in parts.
 *  5. The probe object is deleted (an upload left open is aborted).
 *
 * Anything else (403 for a bucket we may only read, a 5xx) in step 1 says
 * nothing: the MOUNT goes on and the next writable MOUNT probes again; in
 * a later step it leaves that step's answer at what S3 does.
 *
 * Without conditions an upload cannot tell another writer's object from
 * the one it replaces: by default the MOUNT succeeds with a warning, and
 * with require_conditions = 1 it fails with EOPNOTSUPP.
 *
 * The kernel waits for the MOUNT: a probe not answered within
 * CAPS_WAIT_MS lets it go on (as "unknown") and finishes in the
 * background, its result kept for the next writable MOUNT.
 *
 * s3d_caps_probe_create() runs steps 2 and 5 for another user of a bucket
 * that only creates and replaces objects under conditions (the fleet
 * tier's leases, tierlease.c): after the create, the same PUT with
 * If-None-Match: * again must be refused (412) for the server to honour
 * it; then If-Match its ETag, quoted or bare, must be taken. Its requests
 * go as the caller sets them up (timeouts, whose counters); the result is
 * the caller's alone, neither kept here nor logged (the caller logs it,
 * with the reason given). A refusal (a 4xx, or 501) or an answer without
 * an ETag is a verdict: unusable. Only no answer (refused connection,
 * timeout, 5xx, 408, 429) leaves it unknown.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <openssl/rand.h>

#include "caps.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/prio.h"
#include "lib/s3.h"
#include "lib/util.h"
#include "lib/xfer.h"
#include "lib/xml.h"

#define CAPS_WAIT_MS	5000

enum caps_state { CAPS_UNKNOWN, CAPS_CONDITIONAL, CAPS_NONE };

struct caps_bucket {
	struct caps_bucket *next;
	enum caps_state state;
	struct s3d_caps caps;
	char name[];
};

/* The probe's steps (see the top), in order. */
enum probe_step {
	P_ABSENT,	/* PUT If-Match made-up: 404/412 */
	P_CREATE,	/* PUT If-None-Match: * */
	P_AGAIN,	/* ... again: 412 (s3d_caps_probe_create()) */
	P_QUOTED,	/* PUT If-Match "ETag" */
	P_BARE,		/* PUT If-Match ETag (after a 412 to the quoted one) */
	P_COPY,		/* CopyObject, copy-source-if-match made-up: 412 */
	P_COPY_DELETE,	/* ... that copied: delete the copy */
	P_MPU_CREATE,
	P_MPU_PART,
	P_MPU_COMPLETE,	/* If-Match made-up: 412 */
	P_MPU_ABORT,
	P_DELETE,
};

#define MADE_UP_ETAG	"00000000000000000000000000000000"

struct caps_probe {
	struct s3d_xfer x;
	struct s3d_ctx *ctx;
	char *bucket;
	char *key;
	enum probe_step step;
	enum caps_state state;		/* what step 1 found */
	struct s3d_caps caps;
	int fd;				/* one byte, the PUTs' body */
	char etag[S3D_ETAG_MAX + 3];	/* the probe object's, then its part's */
	char if_match[S3D_ETAG_MAX + 3];
	char upload_id[S3D_UPLOAD_ID_MAX + 1];
	char *key2;			/* the copy's key */
	struct s3d_buf src;		/* x-amz-copy-source */
	struct s3d_buf body;		/* the Complete's XML */
	struct s3d_timer wait;	/* the MOUNT's patience */
	void (*done)(void *arg, int err);	/* NULL once called */
	void *arg;
	/* s3d_caps_probe_create(): */
	bool create_only;
	void (*setup)(struct s3d_xfer *x);
	void (*verdict)(void *arg, int verdict, const struct s3d_caps *caps,
			const char *why);
	char why[160];			/* ... why not usable */
	struct s3d_kv h[3];
	struct s3d_kv q[2];
};

static struct caps_bucket *known;
static bool require;

/**
 * s3d_caps_set_require() - fail writable MOUNTs of servers without
 *	conditional writes (require_conditions)
 * @req: true: EOPNOTSUPP; false: a warning
 */
void s3d_caps_set_require(bool req)
{
	require = req;
}

static struct caps_bucket *caps_of(const char *bucket, bool add)
{
	struct caps_bucket *b;

	for (b = known; b; b = b->next)
		if (!strcmp(b->name, bucket))
			return b;
	if (!add)
		return NULL;
	b = calloc(1, sizeof(*b) + strlen(bucket) + 1);
	if (!b)
		return NULL;
	strcpy(b->name, bucket);
	b->next = known;
	known = b;
	return b;
}

/* The MOUNT's answer for a bucket whose server does @state. */
static int caps_verdict(const char *bucket, enum caps_state state)
{
	if (state != CAPS_NONE)
		return 0;
	if (require) {
		s3d_err("s3://%s: the server ignores conditional writes (If-Match): writable mount refused (require_conditions = 1)",
			bucket);
		return -EOPNOTSUPP;
	}
	s3d_warn("s3://%s: the server ignores conditional writes (If-Match, If-None-Match): an upload from this mount may overwrite another writer's object unseen (set require_conditions = 1 to refuse such mounts)",
		 bucket);
	return 0;
}

/* Tell the MOUNT, once. */
static void probe_answer(struct caps_probe *p, int err)
{
	void (*done)(void *arg, int err) = p->done;

	s3d_timer_cancel(&p->wait);
	p->done = NULL;
	if (done)
		done(p->arg, err);
}

/* The probe takes long: the MOUNT goes on; the probe goes on too. */
static void probe_waited(struct s3d_timer *t)
{
	struct caps_probe *p = s3d_container_of(t, struct caps_probe, wait);

	s3d_warn("s3://%s: no answer to the conditional-write probe within %d ms: mounting without knowing",
		 p->bucket, CAPS_WAIT_MS);
	probe_answer(p, 0);
}

static void probe_free(struct caps_probe *p)
{
	s3d_ctx_release(&p->x);
	s3d_ctx_put(p->ctx);
	if (p->fd >= 0)
		close(p->fd);
	s3d_buf_free(&p->body);
	s3d_buf_free(&p->src);
	free(p->bucket);
	free(p->key);
	free(p->key2);
	free(p);
}

static void probe_finish(struct caps_probe *p)
{
	struct caps_bucket *b;
	enum caps_state state = p->state;

	if (p->create_only) {
		s3d_ctx_release(&p->x);
		p->verdict(p->arg, state == CAPS_CONDITIONAL ? 1 :
			   state == CAPS_NONE ? 0 : -EAGAIN, &p->caps, p->why);
		probe_free(p);
		return;
	}
	b = caps_of(p->bucket, true);
	if (b && state != CAPS_UNKNOWN) {
		b->state = state;
		b->caps = p->caps;
	}
	if (state == CAPS_CONDITIONAL)
		s3d_info("s3://%s: the server honours conditional writes%s%s%s",
			 p->bucket,
			 p->caps.bare_if_match ?
			 "; If-Match is sent without quotes (the server refuses quoted ETags)" : "",
			 p->caps.complete_ignores ?
			 "; not on CompleteMultipartUpload: uploads up to 5 GiB go as one PUT" : "",
			 p->caps.copy_ignores ?
			 "; not on CopyObject: a rename checks its source with a HEAD first" : "");
	if (state == CAPS_CONDITIONAL && p->caps.complete_ignores)
		s3d_warn("s3://%s: an upload above 5 GiB (multipart) may overwrite another writer's object unseen",
			 p->bucket);
	s3d_ctx_release(&p->x);
	if (p->done)
		probe_answer(p, caps_verdict(p->bucket, state));
	else if (state == CAPS_NONE)
		caps_verdict(p->bucket, state);	/* the log line */
	probe_free(p);
}

static const struct s3d_xfer_ops probe_ops;

static void probe_next(struct caps_probe *p, enum probe_step step)
{
	static const char *const what[] = {
		[P_ABSENT] = "PUT", [P_CREATE] = "PUT", [P_AGAIN] = "PUT",
		[P_QUOTED] = "PUT",
		[P_BARE] = "PUT", [P_COPY] = "PUT", [P_COPY_DELETE] = "DELETE",
		[P_MPU_CREATE] = "POST",
		[P_MPU_PART] = "PUT", [P_MPU_COMPLETE] = "POST",
		[P_MPU_ABORT] = "DELETE", [P_DELETE] = "DELETE",
	};

	if (step != P_ABSENT)
		s3d_ctx_release(&p->x);
	p->step = step;
	s3d_xfer_init(&p->x, &probe_ops, what[step],
		      step == P_COPY || step == P_COPY_DELETE ? p->key2 : p->key);
	p->x.prio = S3D_PRIO_META;
	p->x.probe = true;	/* a 404 may be the answer hoped for */
	if (p->setup)
		p->setup(&p->x);
	s3d_ctx_submit(p->ctx, &p->x);
}

static int probe_prepare(struct s3d_xfer *x)
{
	struct caps_probe *p = s3d_container_of(x, struct caps_probe, x);
	const char *method = x->what;
	size_t nh = 0, nq = 0;

	switch (p->step) {
	case P_ABSENT:
		p->h[nh++] = (struct s3d_kv){ "If-Match", "\"" MADE_UP_ETAG "\"" };
		break;
	case P_CREATE:
	case P_AGAIN:
		p->h[nh++] = (struct s3d_kv){ "If-None-Match", "*" };
		break;
	case P_QUOTED:
	case P_BARE:
		p->h[nh++] = (struct s3d_kv){ "If-Match", p->if_match };
		break;
	case P_COPY:
		p->h[nh++] = (struct s3d_kv){ "Content-Length", "0" };
		p->h[nh++] = (struct s3d_kv){ "x-amz-copy-source", p->src.p };
		p->h[nh++] = (struct s3d_kv){ "x-amz-copy-source-if-match",
					      "\"" MADE_UP_ETAG "\"" };
		return s3d_s3_build(s3d_ctx_s3(p->ctx), "PUT", p->bucket,
				    p->key2, NULL, 0, p->h, nh, time(NULL),
				    &x->req);
	case P_COPY_DELETE:
		return s3d_s3_build(s3d_ctx_s3(p->ctx), "DELETE", p->bucket,
				    p->key2, NULL, 0, NULL, 0, time(NULL),
				    &x->req);
	case P_MPU_CREATE:
		p->q[nq++] = (struct s3d_kv){ "uploads", NULL };
		break;
	case P_MPU_PART:
		p->q[nq++] = (struct s3d_kv){ "partNumber", "1" };
		p->q[nq++] = (struct s3d_kv){ "uploadId", p->upload_id };
		break;
	case P_MPU_COMPLETE:
		p->q[nq++] = (struct s3d_kv){ "uploadId", p->upload_id };
		p->h[nh++] = (struct s3d_kv){ "If-Match",
			p->caps.bare_if_match ? MADE_UP_ETAG : "\"" MADE_UP_ETAG "\"" };
		x->src = (struct s3d_xfer_src){ .fd = -1, .mem = p->body.p,
						.len = p->body.len };
		break;
	case P_MPU_ABORT:
		p->q[nq++] = (struct s3d_kv){ "uploadId", p->upload_id };
		break;
	case P_DELETE:
		break;
	}
	/* The PUTs put the one byte of @fd, but the first: nothing. */
	if (!strcmp(method, "PUT") && p->step != P_ABSENT)
		x->src = (struct s3d_xfer_src){ .fd = p->fd, .off = 0, .len = 1 };
	return s3d_s3_build(s3d_ctx_s3(p->ctx), method, p->bucket, p->key,
			    nq ? p->q : NULL, nq, nh ? p->h : NULL, nh,
			    time(NULL), &x->req);
}

/* Where the steps after the first go when one fails: clean up, finish. */
static void probe_cleanup(struct caps_probe *p)
{
	probe_next(p, p->upload_id[0] ? P_MPU_ABORT : P_DELETE);
}

/* A DELETE of the probe's @key is over: a failure leaves it to the user. */
static void probe_deleted(struct caps_probe *p, struct s3d_xfer *x, int err,
			  const char *key)
{
	if (err && x->status != 404)
		s3d_err("s3://%s/%s: the probe object could not be deleted (%s): delete it by hand",
			p->bucket, key, strerror(-err));
}

/* A definite answer against the request (not a failure to get one)? */
static bool probe_refused(const struct s3d_xfer *x)
{
	return !x->err && x->cres == CURLE_OK &&
	       ((x->status >= 400 && x->status < 500 && x->status != 408 &&
		 x->status != 429) || x->status == 501);
}

/* s3d_caps_probe_create()'s verdict: unusable, for @what @x answered. */
static void probe_unusable(struct caps_probe *p, struct s3d_xfer *x,
			   const char *what)
{
	struct s3d_s3error e;

	memset(&e, 0, sizeof(e));
	if (x->status >= 300)
		s3d_xml_parse_error(s3d_buf_str(&x->resp), x->resp.len, &e);
	p->state = CAPS_NONE;
	if (x->status >= 200 && x->status < 300)
		snprintf(p->why, sizeof(p->why), "%s", what);
	else
		snprintf(p->why, sizeof(p->why), "%s answered HTTP %ld %s",
			 what, x->status, e.code[0] ? e.code : "-");
}

/*
 * A step of s3d_caps_probe_create(). Nothing is logged here: the caller
 * logs its verdict, once.
 */
static void probe_create_step(struct caps_probe *p, struct s3d_xfer *x)
{
	bool ok = !x->err && x->cres == CURLE_OK && x->status >= 200 &&
		  x->status < 300;
	bool lost = !x->err && x->cres == CURLE_OK &&
		    (x->status == 412 || x->status == 409);

	switch (p->step) {
	case P_CREATE:
		if (ok && x->has_etag && x->etag[0]) {
			snprintf(p->etag, sizeof(p->etag), "%s", x->etag);
			snprintf(p->if_match, sizeof(p->if_match), "%s",
				 x->etag);
			probe_next(p, P_AGAIN);
			return;
		}
		if (ok) {
			/* No ETag: a lease could never be taken over. */
			probe_unusable(p, x, "the tier answers a PUT without an ETag");
			probe_next(p, P_DELETE);
			return;
		}
		if (probe_refused(x))
			probe_unusable(p, x, "a conditional PUT (If-None-Match: *)");
		probe_finish(p);	/* nothing created */
		return;
	case P_AGAIN:
		if (lost) {
			p->state = CAPS_CONDITIONAL;
			probe_next(p, P_QUOTED);
			return;
		}
		if (ok)
			probe_unusable(p, x, "the tier ignores If-None-Match on PUT");
		else if (probe_refused(x))
			probe_unusable(p, x, "a PUT with If-None-Match: * over an object");
		probe_next(p, P_DELETE);
		return;
	case P_QUOTED:
	case P_BARE:
		if (ok) {
			p->caps.bare_if_match = p->step == P_BARE;
		} else if (p->step == P_QUOTED && x->status == 412 && lost &&
			   p->etag[0] == '"') {
			s3d_etag_bare(p->etag, p->if_match,
				      sizeof(p->if_match));
			probe_next(p, P_BARE);
			return;
		} else if (probe_refused(x)) {
			/* Neither form: a stale lease could never be taken. */
			probe_unusable(p, x, "a PUT with If-Match its own ETag");
		} else {
			p->state = CAPS_UNKNOWN;
		}
		probe_next(p, P_DELETE);
		return;
	default:
		if (!ok && !(x->cres == CURLE_OK && x->status == 404))
			s3d_err("s3://%s/%s: the probe object could not be deleted (HTTP %ld): delete it by hand",
				p->bucket, p->key, x->status);
		probe_finish(p);
		return;
	}
}

static int probe_done(struct s3d_xfer *x)
{
	struct caps_probe *p = s3d_container_of(x, struct caps_probe, x);
	struct s3d_s3error e;
	char why[160];
	int err;

	if (p->create_only) {
		probe_create_step(p, x);
		return 0;
	}
	err = s3d_xfer_errno(x, p->bucket);

	memset(&e, 0, sizeof(e));
	if (err)
		s3d_xml_parse_error(s3d_buf_str(&x->resp), x->resp.len, &e);
	switch (p->step) {
	case P_ABSENT:
		if (!err) {
			/* Created in spite of If-Match: remove it again. */
			p->state = CAPS_NONE;
			probe_next(p, P_DELETE);
		} else if (x->status == 412 ||
			   (x->status == 404 && !strcmp(e.code, "NoSuchKey"))) {
			p->state = CAPS_CONDITIONAL;
			probe_next(p, P_CREATE);
		} else {
			s3d_warn("s3://%s: probing conditional writes got HTTP %ld %s: unknown, probed again at the next writable mount",
				 p->bucket, x->status, e.code[0] ? e.code : "-");
			probe_finish(p);
		}
		return 0;
	case P_CREATE:
		if (err || !x->has_etag || !x->etag[0]) {
			probe_cleanup(p);
			return 0;
		}
		snprintf(p->etag, sizeof(p->etag), "%s", x->etag);
		snprintf(p->if_match, sizeof(p->if_match), "%s", x->etag);
		probe_next(p, P_QUOTED);
		return 0;
	case P_AGAIN:	/* s3d_caps_probe_create() only */
		probe_next(p, P_DELETE);
		return 0;
	case P_QUOTED:
		if (x->status == 412 && p->etag[0] == '"') {
			s3d_etag_bare(p->etag, p->if_match, sizeof(p->if_match));
			probe_next(p, P_BARE);
		} else {
			probe_next(p, err ? P_DELETE : P_COPY);
		}
		return 0;
	case P_BARE:
		if (err) {
			/* Neither form matches: an upload could never replace. */
			s3d_err("s3://%s: the server refuses If-Match with the object's own ETag (HTTP %ld): conditional uploads cannot work",
				p->bucket, x->status);
			p->state = CAPS_NONE;
			probe_next(p, P_DELETE);
			return 0;
		}
		p->caps.bare_if_match = true;
		probe_next(p, P_COPY);
		return 0;
	case P_COPY:
		if (!err) {
			p->caps.copy_ignores = true;
			probe_next(p, P_COPY_DELETE);
		} else {
			probe_next(p, P_MPU_CREATE);
		}
		return 0;
	case P_COPY_DELETE:
		probe_deleted(p, x, err, p->key2);
		probe_next(p, P_MPU_CREATE);
		return 0;
	case P_MPU_CREATE:
		if (err || s3d_xml_parse_initiate(s3d_buf_str(&x->resp),
						  x->resp.len, p->upload_id,
						  sizeof(p->upload_id),
						  why, sizeof(why))) {
			p->upload_id[0] = '\0';
			probe_next(p, P_DELETE);
			return 0;
		}
		probe_next(p, P_MPU_PART);
		return 0;
	case P_MPU_PART: {
		struct s3d_part part = { 1, x->etag };

		if (err || !x->has_etag || !x->etag[0] ||
		    s3d_xml_build_complete(&p->body, &part, 1)) {
			probe_cleanup(p);
			return 0;
		}
		probe_next(p, P_MPU_COMPLETE);
		return 0;
	}
	case P_MPU_COMPLETE:
		if (!err) {
			p->caps.complete_ignores = true;
			p->upload_id[0] = '\0';	/* completed: nothing to abort */
		}
		probe_cleanup(p);
		return 0;
	case P_MPU_ABORT:
		p->upload_id[0] = '\0';
		probe_next(p, P_DELETE);
		return 0;
	case P_DELETE:
		probe_deleted(p, x, err, p->key);
		probe_finish(p);
		return 0;
	}
	return 0;
}

static const struct s3d_xfer_ops probe_ops = {
	.prepare = probe_prepare,
	.done = probe_done,
};

/**
 * s3d_caps_of() - what a bucket's server does with conditions
 * @bucket: the bucket
 *
 * Return: its probed behaviour, or defaults (AWS S3's) when not probed.
 */
const struct s3d_caps *s3d_caps_of(const char *bucket)
{
	static const struct s3d_caps defaults;
	struct caps_bucket *b = caps_of(bucket, false);

	return b && b->state == CAPS_CONDITIONAL ? &b->caps : &defaults;
}

/**
 * s3d_caps_if_match() - the If-Match value for @etag on @bucket's server
 * @bucket: the bucket
 * @etag: the ETag as S3 gave it (quoted)
 * @buf: room for the value
 * @n: its size
 *
 * Return: @buf.
 */
const char *s3d_caps_if_match(const char *bucket, const char *etag,
			      char *buf, size_t n)
{
	if (s3d_caps_of(bucket)->bare_if_match)
		s3d_etag_bare(etag, buf, n);
	else
		snprintf(buf, n, "%s", etag);
	return buf;
}

/* A probe of @bucket under @prefix, not started. Return: it, or NULL. */
static struct caps_probe *probe_new(struct s3d_ctx *ctx, const char *bucket,
				    const char *prefix)
{
	unsigned char rnd[8];
	struct caps_probe *p;
	unsigned int i;
	char hex[17];

	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	if (RAND_bytes(rnd, sizeof(rnd)) != 1)
		for (i = 0; i < sizeof(rnd); i++)
			rnd[i] = (unsigned char)random();
	s3d_hex(rnd, sizeof(rnd), hex);
	p->ctx = ctx;
	s3d_ctx_hold(ctx);
	s3d_list_init(&p->wait.node);
	p->wait.fn = probe_waited;
	p->bucket = strdup(bucket);
	if (asprintf(&p->key, "%s.s3cfs-probe-%s", prefix, hex) < 0)
		p->key = NULL;
	s3d_buf_init(&p->body, 0);
	s3d_buf_init(&p->src, 0);
	if (p->key && asprintf(&p->key2, "%s.copy", p->key) < 0)
		p->key2 = NULL;
	if (p->key) {
		s3d_buf_addf(&p->src, "/%s/", bucket);
		s3d_uri_encode(&p->src, p->key, strlen(p->key), false);
		s3d_buf_str(&p->src);
	}
	/* The PUTs' one-byte body: the engine sends PUT bodies from a file. */
	p->fd = memfd_create("s3cfs-probe", MFD_CLOEXEC);
	if (!p->bucket || !p->key || !p->key2 || p->src.err || p->fd < 0 ||
	    write(p->fd, "1", 1) != 1) {
		if (p->fd >= 0)
			close(p->fd);
		s3d_buf_free(&p->src);
		free(p->bucket);
		free(p->key);
		free(p->key2);
		free(p);
		s3d_ctx_put(ctx);
		return NULL;
	}
	return p;
}

/**
 * s3d_caps_check() - may a writable mount of @bucket go ahead?
 * @ctx: the bucket's context (held by the caller until @done; the probe
 *	holds its own while it runs)
 * @bucket: the bucket
 * @prefix: the mount's prefix ("" or ending in "/"): the probe's key
 *	goes under it
 * @done: called with 0 or -EOPNOTSUPP (possibly before this returns)
 * @arg: for @done
 *
 * Return: 0, or -ENOMEM (@done is not called).
 */
int s3d_caps_check(struct s3d_ctx *ctx, const char *bucket,
		   const char *prefix,
		   void (*done)(void *arg, int err), void *arg)
{
	struct caps_bucket *b = caps_of(bucket, false);
	struct caps_probe *p;

	if (b && b->state != CAPS_UNKNOWN) {
		done(arg, caps_verdict(bucket, b->state));
		return 0;
	}
	p = probe_new(ctx, bucket, prefix);
	if (!p)
		return -ENOMEM;
	p->done = done;
	p->arg = arg;
	probe_next(p, P_ABSENT);
	s3d_timer_arm(&p->wait, CAPS_WAIT_MS);
	return 0;
}

/**
 * s3d_caps_probe_create() - does @bucket's server honour If-None-Match: *
 *	on PUT (and If-Match with an object's own ETag)?
 * @ctx: the bucket's context (the probe holds its own while it runs)
 * @bucket: the bucket
 * @prefix: the probe's key goes under it
 * @setup: called for each request before it goes (timeouts, counters),
 *	or NULL
 * @verdict: called once, later, with 1 (honoured; @caps says how If-Match
 *	is written), 0 (ignored or refused: @why says what) or -EAGAIN (no
 *	answer: unknown)
 * @arg: for @verdict
 *
 * Return: 0, or -ENOMEM (@verdict is not called).
 */
int s3d_caps_probe_create(struct s3d_ctx *ctx, const char *bucket,
			  const char *prefix,
			  void (*setup)(struct s3d_xfer *x),
			  void (*verdict)(void *arg, int verdict,
					  const struct s3d_caps *caps,
					  const char *why),
			  void *arg)
{
	struct caps_probe *p = probe_new(ctx, bucket, prefix);

	if (!p)
		return -ENOMEM;
	p->create_only = true;
	p->setup = setup;
	p->verdict = verdict;
	p->arg = arg;
	probe_next(p, P_CREATE);
	return 0;
}

/* Forget what was probed. */
void s3d_caps_fini(void)
{
	while (known) {
		struct caps_bucket *b = known;

		known = b->next;
		free(b);
	}
}
