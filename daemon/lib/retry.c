// SPDX-License-Identifier: GPL-2.0
/*
 * The retry policy of S3 requests, as the AWS SDKs' "standard" mode has
 * it, as pure functions (xfer.c applies them; tests/host/test_retry.c
 * checks them):
 *
 *  - back-off: exponential with full jitter and a cap, a random delay in
 *    [0, min(cap, base * 2^(attempt - 1))]; throttling answers (503
 *    SlowDown, 429, the *Throttl* codes) start from a base five times as
 *    long, so that seconds of SlowDown are waited out, not raced through;
 *  - Retry-After (seconds or an HTTP date), when a server sends it, is a
 *    floor for the delay;
 *  - a retry budget per S3 context, a token bucket: a retry takes
 *    S3D_RETRY_COST tokens (S3D_RETRY_COST_TIMEOUT after a connection
 *    error or timeout), a request that succeeds puts back what its retries
 *    took, or 1 if it needed none. An empty bucket means no retries at all,
 *    so a dead endpoint sees each request once, not ten times.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "base.h"
#include "retry.h"
#include "util.h"

/**
 * s3d_retry_backoff() - the delay before the next attempt
 * @p: the policy
 * @attempt: the attempt that just failed (1-based)
 * @throttled: it was a throttling answer
 * @rnd: a random number (the jitter)
 *
 * Return: milliseconds, in [0, min(cap, base << (attempt - 1))].
 */
unsigned int s3d_retry_backoff(const struct s3d_retry_policy *p, int attempt,
			       bool throttled, uint32_t rnd)
{
	uint64_t ceil = (uint64_t)p->base_ms * (throttled ? 5 : 1);
	int i;

	for (i = 1; i < attempt && ceil < p->max_delay_ms; i++)
		ceil <<= 1;
	ceil = S3D_MIN(ceil, (uint64_t)p->max_delay_ms);
	return (unsigned int)(rnd % (ceil + 1));
}

/* A budget starts full. */
void s3d_retry_budget_init(struct s3d_retry_budget *b, unsigned int capacity)
{
	b->capacity = capacity;
	b->tokens = capacity;
}

/* Whether @cost tokens are there (nothing taken). */
bool s3d_retry_budget_has(const struct s3d_retry_budget *b, unsigned int cost)
{
	return b->tokens >= cost;
}

/* Take @cost tokens for a retry; false (nothing taken) if there are not. */
bool s3d_retry_budget_take(struct s3d_retry_budget *b, unsigned int cost)
{
	if (b->tokens < cost)
		return false;
	b->tokens -= cost;
	return true;
}

/* A request succeeded after taking @spent tokens: put them back (or 1). */
void s3d_retry_budget_success(struct s3d_retry_budget *b, unsigned int spent)
{
	b->tokens = S3D_MIN((uint64_t)b->tokens + (spent ?: 1),
			    (uint64_t)b->capacity);
}

/**
 * s3d_retry_after_ms() - a Retry-After header's value
 * @v: delta-seconds or an HTTP date
 * @now: the time now
 *
 * Return: milliseconds from now (0 for a date in the past), or -1 if @v is
 * neither.
 */
long s3d_retry_after_ms(const char *v, time_t now)
{
	uint64_t s;
	time_t t;

	if (!s3d_parse_u64(v, &s))
		return s > 86400 ? 86400000L : (long)s * 1000;
	t = curl_getdate(v, NULL);
	if (t == (time_t)-1)
		return -1;
	return t > now ? (long)(t - now) * 1000 : 0;
}

/**
 * s3d_retry_throttled() - is this answer S3 telling us to slow down?
 * @status: the HTTP status
 * @code: the S3 error code, or "" / NULL
 *
 * Return: true for 429, 503 (S3's SlowDown) and the throttling codes.
 */
bool s3d_retry_throttled(long status, const char *code)
{
	static const char *const codes[] = {
		"SlowDown", "Throttling", "ThrottlingException",
		"ThrottledException", "RequestThrottled", "RequestThrottledException",
		"TooManyRequestsException", "RequestLimitExceeded",
		"ProvisionedThroughputExceededException", "BandwidthLimitExceeded",
		"EC2ThrottledException", "PriorRequestNotComplete",
	};
	size_t i;

	if (status == 429 || status == 503)
		return true;
	for (i = 0; code && i < S3D_ARRAY_SIZE(codes); i++)
		if (!strcmp(code, codes[i]))
			return true;
	return false;
}

/**
 * s3d_retry_transient() - is this S3 answer worth another attempt?
 * @status: the HTTP status (200 for an error S3 put in a 200's body)
 * @code: the S3 error code, or "" / NULL
 *
 * 5xx but 501 (NotImplemented: the server lacks the feature, asking again
 * will not grow it), 429, the throttling codes, and the codes S3 sends
 * for a request that may well succeed next time: InternalError (also
 * inside a CompleteMultipartUpload's 200), RequestTimeout (a 400: the
 * server gave up reading a slow upload body) and
 * ConditionalRequestConflict (a 409: another conditional write of the
 * key was in progress; not a conflict with our precondition).
 *
 * Return: true to retry (budget and attempts permitting).
 */
bool s3d_retry_transient(long status, const char *code)
{
	static const char *const codes[] = {
		"InternalError", "ServiceUnavailable", "RequestTimeout",
		"ConditionalRequestConflict",
	};
	size_t i;

	if (code && !strcmp(code, "NotImplemented"))
		return false;
	if ((status >= 500 && status != 501) || s3d_retry_throttled(status, code))
		return true;
	for (i = 0; code && i < S3D_ARRAY_SIZE(codes); i++)
		if (!strcmp(code, codes[i]))
			return true;
	return false;
}
