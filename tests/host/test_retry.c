// SPDX-License-Identifier: GPL-2.0
/*
 * The retry policy (retry.c): full-jitter back-off and its cap, the longer
 * base of throttling answers, Retry-After, the retry budget, and which
 * answers are throttling, and which are worth another attempt.
 */
#include <stdlib.h>
#include <string.h>

#include "lib/base.h"
#include "lib/config.h"
#include "lib/retry.h"
#include "lib/xfer.h"
#include "tap.h"

static const struct s3d_retry_policy pol = {
	.attempts = S3D_RETRY_ATTEMPTS_DEFAULT,
	.max_time_s = S3D_RETRY_MAX_TIME_DEFAULT,
	.base_ms = S3D_RETRY_BASE_MS_DEFAULT,
	.max_delay_ms = S3D_RETRY_MAX_DELAY_MS_DEFAULT,
	.budget = S3D_RETRY_BUDGET_DEFAULT,
};

static void test_backoff(void)
{
	unsigned int a;
	int i;

	is_int(s3d_retry_backoff(&pol, 1, false, 0), 0, "backoff: full jitter reaches 0");
	is_int(s3d_retry_backoff(&pol, 1, false, ~0U), ~0U % 201,
	       "backoff: attempt 1 within [0, base]");
	for (a = 1; a <= 3; a++) {
		unsigned int max = 0;

		for (i = 0; i < 20000; i++)
			max = S3D_MAX(max, s3d_retry_backoff(&pol, a, false, (uint32_t)random()));
		ok(max <= 200U << (a - 1) && max > (200U << (a - 1)) * 9 / 10,
		   "backoff: attempt %u spans [0, %u] (max seen %u)", a, 200U << (a - 1), max);
	}
	ok(s3d_retry_backoff(&pol, 30, false, ~0U) <= 10000, "backoff: capped at max_delay_ms");
	ok(s3d_retry_backoff(&pol, 1000, true, ~0U) <= 10000, "backoff: no overflow for huge attempts");
	is_int(s3d_retry_backoff(&pol, 2, true, 1999), 1999, "backoff: throttled base is 5x (attempt 2: [0, 2000])");
	is_int(s3d_retry_backoff(&pol, 2, false, 1999), 1999 % 401, "backoff: unthrottled attempt 2: [0, 400]");
}

static void test_budget(void)
{
	struct s3d_retry_budget b;
	int n = 0;

	s3d_retry_budget_init(&b, 500);
	while (s3d_retry_budget_take(&b, S3D_RETRY_COST))
		n++;
	is_int(n, 100, "budget: 500 tokens are 100 retries");
	ok(!s3d_retry_budget_has(&b, S3D_RETRY_COST), "budget: empty: no retry");
	s3d_retry_budget_success(&b, 0);
	is_int(b.tokens, 1, "budget: a success without retries gives 1 back");
	s3d_retry_budget_success(&b, 10);
	is_int(b.tokens, 11, "budget: a success gives back what its retries took");
	s3d_retry_budget_init(&b, 20);
	s3d_retry_budget_success(&b, 10);
	is_int(b.tokens, 20, "budget: never above capacity");
	ok(s3d_retry_budget_take(&b, S3D_RETRY_COST_TIMEOUT) &&
	   s3d_retry_budget_take(&b, S3D_RETRY_COST_TIMEOUT) &&
	   !s3d_retry_budget_take(&b, 1) && b.tokens == 0,
	   "budget: timeouts cost 10");
}

static void test_retry_after(void)
{
	time_t now = 1700000000;

	is_int(s3d_retry_after_ms("3", now), 3000, "Retry-After: seconds");
	is_int(s3d_retry_after_ms("0", now), 0, "Retry-After: 0");
	is_int(s3d_retry_after_ms("Tue, 14 Nov 2023 22:13:25 GMT", now), 5000,
	       "Retry-After: an HTTP date");
	is_int(s3d_retry_after_ms("Tue, 14 Nov 2023 22:13:15 GMT", now), 0,
	       "Retry-After: a date past is 0");
	is_int(s3d_retry_after_ms("soon", now), -1, "Retry-After: garbage is -1");
	is_int(s3d_retry_after_ms("999999999", now), 86400000, "Retry-After: at most a day");
}

static void test_throttled(void)
{
	ok(s3d_retry_throttled(503, "SlowDown"), "throttled: 503 SlowDown");
	ok(s3d_retry_throttled(503, ""), "throttled: 503 without a body");
	ok(s3d_retry_throttled(429, NULL), "throttled: 429");
	ok(s3d_retry_throttled(400, "ThrottlingException"), "throttled: a throttling code");
	ok(!s3d_retry_throttled(500, "InternalError"), "throttled: 500 is not");
	ok(!s3d_retry_throttled(502, ""), "throttled: 502 is not");
}

static void test_transient(void)
{
	ok(s3d_retry_transient(500, "InternalError"), "transient: 500");
	ok(s3d_retry_transient(502, ""), "transient: 502 without a body");
	ok(s3d_retry_transient(503, "SlowDown"), "transient: 503 SlowDown");
	ok(s3d_retry_transient(429, NULL), "transient: 429");
	ok(!s3d_retry_transient(501, "NotImplemented"), "transient: 501 NotImplemented is not");
	ok(!s3d_retry_transient(501, NULL), "transient: 501 without a body is not");
	ok(s3d_retry_transient(409, "ConditionalRequestConflict"),
	   "transient: 409 ConditionalRequestConflict (a concurrent conditional write)");
	ok(!s3d_retry_transient(409, "BucketAlreadyExists"), "transient: another 409 is not");
	ok(s3d_retry_transient(400, "RequestTimeout"), "transient: 400 RequestTimeout (slow upload body)");
	ok(s3d_retry_transient(200, "InternalError"),
	   "transient: an InternalError inside a 200 (CompleteMultipartUpload)");
	ok(!s3d_retry_transient(200, "InvalidPart"), "transient: an InvalidPart inside a 200 is not");
	ok(!s3d_retry_transient(412, "PreconditionFailed"), "transient: 412 is not");
	ok(!s3d_retry_transient(404, "NoSuchUpload"), "transient: 404 NoSuchUpload is not");
	ok(!s3d_retry_transient(400, "EntityTooSmall"), "transient: 400 EntityTooSmall is not");
	ok(!s3d_retry_transient(403, "AccessDenied"), "transient: 403 is not");
}

static void test_config(void)
{
	unsigned int v = 7;

	is_int(s3d_conf_parse_tune(S3D_TUNE_RETRY_ATTEMPTS, "10", &v), 0, "tune: retry_attempts 10");
	ok(s3d_conf_parse_tune(S3D_TUNE_RETRY_ATTEMPTS, "0", &v) == -EINVAL && v == 10,
	   "tune: retry_attempts 0 refused");
	ok(s3d_conf_parse_tune(S3D_TUNE_RETRY_MAX_TIME, "3601", &v) == -EINVAL,
	   "tune: retry_max_time above 3600 refused");
	ok(S3D_RETRY_MAX_TIME_DEFAULT + S3D_STALL_DEFAULT < 60,
	   "default bound (retry_max_time + stall_timeout = %u s) below the kernel's fetch_timeout (60 s)",
	   S3D_RETRY_MAX_TIME_DEFAULT + S3D_STALL_DEFAULT);
}

int main(void)
{
	srandom(1);
	test_backoff();
	test_budget();
	test_retry_after();
	test_throttled();
	test_transient();
	test_config();
	return tap_done();
}
