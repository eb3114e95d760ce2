// SPDX-License-Identifier: GPL-2.0
/*
 * The configuration file: parsing, FILE:LINE errors, command-line
 * overrides, per-bucket S3 contexts and their cap on requests in flight,
 * reload; refresh of the temporary credentials of those contexts (against
 * fake_metadata.py); and s3cachefsd --check-config on good and bad files.
 * Runs in tests/host (fixtures in config/).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include <curl/curl.h>

#include "ctx.h"
#include "lib/base.h"
#include "lib/config.h"
#include "lib/creds.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/util.h"
#include "lib/xfer.h"
#include "ops.h"
#include "tap.h"

static struct s3d_conf *load(const char *file, bool must, int *err,
			     struct s3d_buf *errs)
{
	struct s3d_conf *c;

	s3d_buf_reset(errs);
	*err = s3d_conf_load(file, must, &c, errs);
	return c;
}

static void test_good(void)
{
	struct s3d_buf errs;
	struct s3d_conf *c;
	const struct s3d_conf_bucket *b;
	struct s3d_conf_s3 set;
	struct s3d_cache_policy pol;
	struct s3d_mount_defaults md;
	int err;

	s3d_buf_init(&errs, 0);
	c = load("config/good.conf", true, &err, &errs);
	is_int(err, 0, "good.conf loads");
	is_str(s3d_buf_str(&errs), "", "good.conf: no messages");
	if (!c)
		return;
	is_str(c->global.endpoint, "http://127.0.0.1:9000", "[global] endpoint");
	is_int(c->max_inflight, 32, "[global] max_inflight");
	is_int(c->cache.limit, 10ULL << 30, "[global] cache_limit 10G");
	is_int(c->cache.min_free_pct, 5, "[global] min_free 5%%");
	is_int(c->log_level, S3D_LOG_WARN, "[global] log_level warn");
	is_str(c->metrics, "127.0.0.1:9464", "[global] metrics");
	is_int(c->stall_timeout, 90, "[global] stall_timeout");

	b = s3d_conf_bucket(c, "alpha-data");
	ok(b && b->line == 13, "[bucket alpha-data] found at line 13");
	ok(b && b->max_concurrency == 2 && b->s3.path_style == 1 &&
	   b->s3.anonymous == 1, "alpha-data: path, anonymous, max_concurrency 2");
	ok(s3d_conf_bucket(c, "beta-data") != NULL, "[bucket beta-data] found");
	ok(!s3d_conf_bucket(c, "gamma-data"), "no section for gamma-data");

	s3d_conf_settings(c, "alpha-data", &set);
	is_str(set.endpoint, "http://127.0.0.1:9000",
	       "alpha-data inherits [global]'s endpoint");
	ok(set.path_style == 1 && set.anonymous == 1,
	   "alpha-data keeps its own addressing and anonymous");
	s3d_conf_settings(c, "beta-data", &set);
	ok(set.endpoint && !strcmp(set.endpoint, "https://s3.eu-west-1.amazonaws.com") &&
	   !strcmp(set.region, "eu-west-1") && set.path_style == 0 &&
	   !strcmp(set.profile, "dev") && !strcmp(set.ca_bundle, "/dev/null"),
	   "beta-data: its endpoint, region, addressing, profile, ca_bundle");
	s3d_conf_settings(c, "gamma-data", &set);
	ok(!strcmp(set.endpoint, "http://127.0.0.1:9000") && !set.profile &&
	   set.path_style == -1 && set.anonymous == -1,
	   "a bucket without a section: [global]'s settings");

	s3d_conf_cache_policy(c, "alpha-data", &pol);
	ok(pol.limit == 1ULL << 30 && pol.min_free_pct == 5,
	   "alpha-data: its cache_limit, [global]'s min_free");
	s3d_conf_cache_policy(c, "beta-data", &pol);
	ok(pol.limit == 10ULL << 30 && pol.min_free == 2ULL << 30 &&
	   !pol.min_free_pct, "beta-data: [global]'s cache_limit, its min_free");
	s3d_conf_mount_defaults(c, "alpha-data", &md);
	ok(md.writeback == -1 && md.upload_delay == 10,
	   "alpha-data: writeback not set, [global]'s upload_delay");
	s3d_conf_mount_defaults(c, "beta-data", &md);
	ok(md.writeback == 1 && md.upload_delay == 30,
	   "beta-data: its writeback and upload_delay");
	s3d_conf_free(c);
	s3d_buf_free(&errs);
}

/* A configuration from @text (a file written for it), or NULL. */
static struct s3d_conf *load_text(const char *text, struct s3d_buf *errs)
{
	char path[] = "/tmp/test_config.XXXXXX";
	struct s3d_conf *c;
	int fd = mkstemp(path), err;

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	close(fd);
	c = load(path, true, &err, errs);
	unlink(path);
	return err ? NULL : c;
}

/* Does a client for @bucket of @c set up (s3d_conf_s3_client())? */
static int client_of(const struct s3d_conf *c, const char *bucket)
{
	struct s3d_s3 s3;
	int err;

	memset(&s3, 0, sizeof(s3));
	err = s3d_conf_s3_client(c, bucket, &s3);
	if (!err)
		s3d_s3_fini(&s3);
	return err;
}

/*
 * Plain http: requests are signed UNSIGNED-PAYLOAD, so anyone on the path
 * can change what is read. An http:// endpoint is refused unless its
 * section (or [global], or --allow-http) says allow_http = true.
 */
static void test_allow_http(void)
{
	struct s3d_conf cli, *c;
	struct s3d_buf errs;
	struct s3d_conf_s3 set;

	s3d_buf_init(&errs, 0);
	c = load_text("[global]\nendpoint = http://127.0.0.1:9\n"
		      "[bucket open-data]\nallow_http = yes\n"
		      "[bucket tls-data]\nendpoint = https://127.0.0.1:9\n"
		      "[bucket own-data]\nendpoint = http://10.0.0.9:80\nallow_http = true\n", &errs);
	if (!c) {
		ok(0, "allow_http: the file loads");
		printf("#   %s\n", s3d_buf_str(&errs));
		return;
	}
	s3d_conf_settings(c, NULL, &set);
	is_int(set.allow_http, -1, "allow_http: not set in [global]");
	is_int(client_of(c, NULL), -EPERM, "allow_http: [global]'s http:// endpoint is refused without it");
	is_int(client_of(c, "other-data"), -EPERM, "allow_http: ... and so is a bucket without a section");
	is_int(client_of(c, "open-data"), 0, "allow_http: a section that allows it gets its http:// client");
	is_int(client_of(c, "tls-data"), 0, "allow_http: https needs nothing");
	is_int(client_of(c, "own-data"), 0, "allow_http: a section's own http:// endpoint, allowed");
	s3d_conf_init(&cli);
	cli.global.allow_http = 1;		/* --allow-http */
	is_int(s3d_conf_override(c, &cli), 0, "allow_http: --allow-http laid over");
	is_int(client_of(c, NULL), 0, "allow_http: --allow-http allows [global]'s");
	is_int(client_of(c, "other-data"), 0, "allow_http: ... and a bucket without a section");
	s3d_conf_free(c);

	c = load_text("[global]\nendpoint = http://127.0.0.1:9\nallow_http = true\n"
		      "[bucket strict-data]\nallow_http = false\n", &errs);
	ok(c && client_of(c, NULL) == 0 && client_of(c, "strict-data") == -EPERM,
	   "allow_http: a section's false wins over [global]'s true");
	s3d_conf_free(c);
	c = load_text("[global]\nallow_http = sometimes\n", &errs);
	ok(!c && strstr(s3d_buf_str(&errs), ":2: allow_http 'sometimes': want true or false"),
	   "allow_http: a bad value is a FILE:LINE error");
	s3d_conf_free(c);
	s3d_buf_free(&errs);
}

static void test_override(void)
{
	struct s3d_conf cli, *c;
	struct s3d_buf errs;
	struct s3d_conf_s3 set;
	struct s3d_cache_policy pol;
	int err;

	s3d_buf_init(&errs, 0);
	c = load("config/good.conf", true, &err, &errs);
	if (!c) {
		ok(0, "good.conf loads for the override test");
		return;
	}
	s3d_conf_init(&cli);
	cli.global.endpoint = "http://10.0.0.1:7480";
	cli.global.path_style = 1;
	cli.max_inflight = 100;
	cli.has_cache_limit = true;
	cli.cache.limit = 5ULL << 30;
	cli.log_level = S3D_LOG_DEBUG;
	cli.stall_timeout = 300;
	is_int(s3d_conf_override(c, &cli), 0, "override");
	is_str(c->global.endpoint, "http://10.0.0.1:7480",
	       "--endpoint overrides [global] endpoint");
	is_int(c->max_inflight, 100, "--max-inflight overrides max_inflight");
	is_int(c->log_level, S3D_LOG_DEBUG, "-v overrides log_level");
	is_int(c->stall_timeout, 300, "--stall-timeout overrides stall_timeout");
	is_str(c->metrics, "127.0.0.1:9464", "metrics not given: the file's");
	s3d_conf_settings(c, "gamma-data", &set);
	ok(!strcmp(set.endpoint, "http://10.0.0.1:7480") && set.path_style == 1,
	   "a bucket without a section gets the command line's settings");
	s3d_conf_settings(c, "beta-data", &set);
	ok(!strcmp(set.endpoint, "https://s3.eu-west-1.amazonaws.com") &&
	   set.path_style == 0, "a bucket section still wins over the command line");
	s3d_conf_cache_policy(c, "beta-data", &pol);
	is_int(pol.limit, 5ULL << 30, "--cache-limit overrides [global]'s");
	s3d_conf_cache_policy(c, "alpha-data", &pol);
	is_int(pol.limit, 1ULL << 30, "but not a bucket section's");
	s3d_conf_free(c);
	s3d_buf_free(&errs);
}

static const struct {
	unsigned int line;
	const char *what;
} bad_lines[] = {
	{ 1, "'endpoint' outside a section" },
	{ 3, "unknown key 'bogus'" },
	{ 4, "region 'US EAST'" },
	{ 5, "max_inflight '0': want 1..4096" },
	{ 6, "duplicate key 'region' (first set on line 4)" },
	{ 7, "log_level 'loud'" },
	{ 8, "metrics 'nohost'" },
	{ 9, "'max_concurrency' is not allowed in [global]" },
	{ 10, "duplicate section [global] (first on line 2)" },
	{ 11, "unknown section [frob]" },
	{ 12, "[bucket ab]: not a valid bucket name" },
	{ 14, "cache_limit '10Q': want a size" },
	{ 15, "'max_inflight' is not allowed in this [bucket] section" },
	{ 16, "addressing 'sideways': want virtual-host or path" },
	{ 17, "expected NAME = VALUE" },
	{ 18, "anonymous 'maybe'" },
	{ 19, "endpoint 'ftp://host'" },
	{ 20, "ca_bundle 'relative/path': want an absolute path" },
	{ 21, "min_free '100%'" },
	{ 22, "'profile' has no value" },
	{ 23, "duplicate section [bucket gamma-data] (first on line 13)" },
	{ 24, "bad section heading" },
	{ 26, "'stall_timeout' is not allowed in this [bucket] section" },
	{ 27, "writeback 'maybe': want true or false" },
	{ 28, "upload_delay '3601': want seconds, 0..3600" },
};

static void test_stall_timeout(void)
{
	static const char *const bad[] = { "0", "3601", "-5", "30s", "", "1e3" };
	unsigned int v = 7;
	size_t i;

	ok(!s3d_conf_parse_stall_timeout("1", &v) && v == 1,
	   "stall_timeout 1: the least");
	ok(!s3d_conf_parse_stall_timeout("3600", &v) && v == 3600,
	   "stall_timeout 3600: the most");
	for (i = 0; i < S3D_ARRAY_SIZE(bad); i++) {
		v = 7;
		ok(s3d_conf_parse_stall_timeout(bad[i], &v) == -EINVAL &&
		   v == 7, "stall_timeout '%s' refused, nothing set", bad[i]);
	}
}

/* A tunable whose 0 is a value ("HEAD only"), not "not set". */
static void test_lookup_get_max(void)
{
	struct s3d_conf file, cli;
	unsigned int v = 7;

	s3d_conf_init(&file);
	s3d_conf_init(&cli);
	is_int(s3d_conf_tune(&file, S3D_TUNE_LOOKUP_GET_MAX),
	       S3D_LOOKUP_GET_MAX_DEFAULT, "lookup_get_max: not set: 256 KiB");
	ok(!s3d_conf_parse_tune(S3D_TUNE_LOOKUP_GET_MAX, "8388608", &v) &&
	   v == 8388608, "lookup_get_max 8388608: the most");
	ok(s3d_conf_parse_tune(S3D_TUNE_LOOKUP_GET_MAX, "8388609", &v) == -EINVAL &&
	   v == 8388608, "lookup_get_max 8388609: refused");
	file.tune[S3D_TUNE_LOOKUP_GET_MAX] = 65536;
	file.tune_set[S3D_TUNE_LOOKUP_GET_MAX] = true;
	ok(!s3d_conf_parse_tune(S3D_TUNE_LOOKUP_GET_MAX, "0",
				&cli.tune[S3D_TUNE_LOOKUP_GET_MAX]),
	   "lookup_get_max 0: accepted");
	cli.tune_set[S3D_TUNE_LOOKUP_GET_MAX] = true;
	is_int(s3d_conf_override(&file, &cli), 0, "override");
	is_int(s3d_conf_tune(&file, S3D_TUNE_LOOKUP_GET_MAX), 0,
	       "--lookup-get-max 0 overrides the file's 65536: 0, not the default");
}

static unsigned int count_lines(const char *s)
{
	unsigned int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void test_bad(void)
{
	struct s3d_buf errs;
	struct s3d_conf *c;
	char want[256];
	size_t i;
	int err;

	s3d_buf_init(&errs, 0);
	c = load("config/bad.conf", true, &err, &errs);
	ok(!c && err == -EINVAL, "bad.conf refused (-EINVAL)");
	for (i = 0; i < S3D_ARRAY_SIZE(bad_lines); i++) {
		const char *p;

		snprintf(want, sizeof(want), "config/bad.conf:%u: %s",
			 bad_lines[i].line, bad_lines[i].what);
		p = strstr(s3d_buf_str(&errs), want);
		ok(p && (p == errs.p || p[-1] == '\n'), "reported: %s", want);
	}
	is_int(count_lines(s3d_buf_str(&errs)), S3D_ARRAY_SIZE(bad_lines),
	       "one message per bad line, no more");

	c = load("config/missing.conf", true, &err, &errs);
	ok(!c && err == -ENOENT, "a missing explicit file is an error");
	is_str(s3d_buf_str(&errs), "config/missing.conf: No such file or directory\n",
	       "... and says so");
	c = load("config/missing.conf", false, &err, &errs);
	ok(c && !err && !c->file && !c->buckets && !c->global.endpoint,
	   "a missing default file is an empty configuration");
	s3d_conf_free(c);
	s3d_buf_free(&errs);
}

/* ---- contexts and their cap ---- */

static int dones;

static int dummy_prepare(struct s3d_xfer *x)
{
	(void)x;
	return -EIO;
}

static int dummy_done(struct s3d_xfer *x)
{
	(void)x;
	dones++;
	return 0;
}

static const struct s3d_xfer_ops dummy_ops = {
	.prepare = dummy_prepare,
	.done = dummy_done,
};

/* The engine's queue holds @x: it was admitted (not started: no loop run). */
static bool admitted(const struct s3d_xfer *x)
{
	return x->queued && x->gate_slot && !x->gate_waiting;
}

static void test_gate(struct s3d_ctx *ctx)
{
	struct s3d_xfer x[4];
	size_t i;

	for (i = 0; i < 4; i++) {
		s3d_xfer_init(&x[i], &dummy_ops, "GET", "k");
		s3d_ctx_submit(ctx, &x[i]);
	}
	is_int(s3d_ctx_inflight(ctx), 2, "cap 2: two of four admitted");
	ok(admitted(&x[0]) && admitted(&x[1]), "the first two, in order");
	ok(x[2].gate_waiting && x[3].gate_waiting && !x[2].queued && !x[3].queued,
	   "the other two wait, outside the engine");

	s3d_ctx_release(&x[0]);
	ok(admitted(&x[2]) && x[3].gate_waiting,
	   "releasing one admits the longest waiting (FIFO)");
	is_int(s3d_ctx_inflight(ctx), 2, "still two in flight");

	/* The end of an attempt, as the engine reports it. */
	s3d_list_del(&x[1].node);
	x[1].queued = false;
	dones = 0;
	x[1].ops->done(&x[1]);
	is_int(dones, 1, "done() goes through to the caller's");
	ok(admitted(&x[3]), "a finished request hands its slot on");
	ok(x[1].ops == &dummy_ops && !x[1].gate, "and leaves the admission");
	for (i = 0; i < 4; i++)
		s3d_ctx_release(&x[i]);
	is_int(s3d_ctx_inflight(ctx), 0, "all released: no slot held");
}

static void test_contexts(void)
{
	struct s3d_conf *c, *c2, *bad;
	struct s3d_ctx *a, *a2, *b, *g, *other, *a3;
	struct s3d_buf errs;
	int err;

	setenv("AWS_SHARED_CREDENTIALS_FILE", "config/credentials", 1);
	unsetenv("AWS_ACCESS_KEY_ID");
	unsetenv("AWS_SECRET_ACCESS_KEY");
	unsetenv("AWS_PROFILE");
	s3d_buf_init(&errs, 0);
	c = load("config/good.conf", true, &err, &errs);
	c2 = load("config/reload.conf", true, &err, &errs);
	if (!c || !c2 || s3d_engine_init(4, NULL)) {
		ok(0, "setting up the context tests");
		return;
	}
	is_int(s3d_ops_init(c), 0, "ops start with good.conf ([global] credentials load)");

	a = s3d_ctx_get("alpha-data", &err);
	a2 = s3d_ctx_get("alpha-data", &err);
	b = s3d_ctx_get("beta-data", &err);
	g = s3d_ctx_get(NULL, &err);
	other = s3d_ctx_get("gamma-data", &err);
	ok(a && a == a2, "one context per bucket section, shared");
	ok(a && b && g && a != b && a != g && b != g,
	   "distinct contexts for distinct sections");
	ok(other == g, "a bucket without a section uses the [global] context");
	if (!a || !b || !g)
		return;
	ok(s3d_ctx_s3(a)->path_style && s3d_ctx_s3(a)->anonymous &&
	   !strcmp(s3d_ctx_s3(a)->authority, "127.0.0.1:9000"),
	   "alpha-data: path style, anonymous, [global]'s endpoint");
	ok(!s3d_ctx_s3(b)->path_style &&
	   !strcmp(s3d_ctx_s3(b)->authority, "s3.eu-west-1.amazonaws.com") &&
	   !strcmp(s3d_ctx_s3(b)->region, "eu-west-1") &&
	   !strcmp(s3d_ctx_s3(b)->ca_bundle, "/dev/null"),
	   "beta-data: its endpoint, region, addressing and CA bundle");
	is_str(s3d_ctx_s3(b)->creds.access_key, "AKIDDEV",
	       "beta-data: credentials of its profile 'dev'");
	is_str(s3d_ctx_s3(g)->creds.access_key, "AKIDDEFAULT",
	       "[global]: the default chain (profile 'default')");

	test_gate(a);

	/* Reload: a new table for new requests; old contexts live on. */
	is_int(s3d_ops_set_conf(c2), 0, "reload with reload.conf");
	a3 = s3d_ctx_get("alpha-data", &err);
	ok(a3 && a3 != a, "after a reload new requests get a new context");
	ok(a3 && !strcmp(s3d_ctx_s3(a3)->authority, "127.0.0.1:9001"),
	   "... with the new settings");
	ok(!strcmp(s3d_ctx_s3(a)->authority, "127.0.0.1:9000"),
	   "a context held by a request in flight is intact");
	s3d_ctx_put(a3);

	/* A file with errors is never applied (main keeps the old one). */
	bad = load("config/bad.conf", true, &err, &errs);
	ok(!bad && err == -EINVAL, "reload of a bad file: refused");
	a3 = s3d_ctx_get("alpha-data", &err);
	ok(a3 && !strcmp(s3d_ctx_s3(a3)->authority, "127.0.0.1:9001"),
	   "... and the configuration in force is unchanged");
	s3d_ctx_put(a3);

	/* A valid file whose [global] credentials do not load: kept too. */
	bad = load("config/noglobal.conf", true, &err, &errs);
	ok(bad != NULL, "noglobal.conf parses");
	if (bad) {
		ok(s3d_ops_set_conf(bad) < 0,
		   "reload whose [global] credentials fail: refused");
		a3 = s3d_ctx_get("alpha-data", &err);
		ok(a3 && !strcmp(s3d_ctx_s3(a3)->authority, "127.0.0.1:9001"),
		   "... and the old configuration stays in force");
		s3d_ctx_put(a3);
	}

	s3d_ctx_put(a);
	s3d_ctx_put(a2);
	s3d_ctx_put(b);
	s3d_ctx_put(g);
	s3d_ctx_put(other);
	s3d_ops_fini();
	s3d_engine_fini();
	s3d_conf_free(bad);
	s3d_conf_free(c);
	s3d_conf_free(c2);
	s3d_buf_free(&errs);
}

/* ---- credentials of the contexts: refreshed on the loop ---- */

static pid_t fake_pid;
static char fake_base[64];

/* fake_metadata.py on a loopback port; 0 or -1 (not started). */
static int fake_start(void)
{
	char line[32] = "";
	int fds[2];
	FILE *f;

	if (pipe(fds))
		return -1;
	fake_pid = fork();
	if (fake_pid < 0)
		return -1;
	if (!fake_pid) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execlp("python3", "python3", "fake_metadata.py", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	if (!f || !fgets(line, sizeof(line), f) || atoi(line) <= 0) {
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	snprintf(fake_base, sizeof(fake_base), "http://127.0.0.1:%d",
		 atoi(line));
	return 0;
}

static void fake_stop(void)
{
	kill(fake_pid, SIGTERM);
	waitpid(fake_pid, NULL, 0);
}

static size_t sink(char *p, size_t size, size_t n, void *ud)
{
	s3d_buf_add(ud, p, size * n);
	return size * n;
}

/* GET @path of the fake; the body, or "" on failure (caller frees @b). */
static const char *fake_get(const char *path, struct s3d_buf *b)
{
	CURL *e = curl_easy_init();
	char url[256];
	long status = 0;

	s3d_buf_init(b, 0);
	snprintf(url, sizeof(url), "%s%s", fake_base, path);
	curl_easy_setopt(e, CURLOPT_URL, url);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, sink);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, b);
	curl_easy_setopt(e, CURLOPT_NOPROXY, "*");
	if (curl_easy_perform(e) == CURLE_OK)
		curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(e);
	if (status != 200)
		s3d_buf_reset(b);
	return s3d_buf_str(b);
}

/* Requests the container endpoint has had (from /_stats), or -1. */
static long container_requests(void)
{
	struct s3d_buf b;
	const char *p = strstr(fake_get("/_stats", &b), "\"container\": ");
	long n = p ? atol(p + 13) : p == NULL && b.len ? 0 : -1;

	s3d_buf_free(&b);
	return n;
}

struct key_wait {
	struct s3d_ctx *a, *b;
	char *a0, *b0;
	bool timeout;
};

static struct key_wait kw;
static struct s3d_timer kw_deadline;

static void kw_fire(struct s3d_timer *t)
{
	(void)t;
	kw.timeout = true;
}

static bool keys_changed(void *arg)
{
	(void)arg;
	return kw.timeout ||
	       (strcmp(s3d_ctx_s3(kw.a)->creds.access_key, kw.a0) &&
		strcmp(s3d_ctx_s3(kw.b)->creds.access_key, kw.b0));
}

static bool until_deadline(void *arg)
{
	(void)arg;
	return kw.timeout;
}

static bool key_prefix(const char *s, const char *p)
{
	return s && !strncmp(s, p, strlen(p));
}

/*
 * Contexts made from the configuration (at start, on demand, after a
 * reload) whose credentials expire are refreshed on the loop; the others
 * are not watched; a context freed is no longer refreshed.
 */
static void test_refresh(void)
{
	struct s3d_ctx *g, *w, *st, *pub, *g2;
	struct s3d_conf *c, *c2;
	struct s3d_buf errs, b;
	char url[128];
	uint64_t t0, elapsed;
	long before;
	int err;

	if (fake_start()) {
		ok(0, "refresh: fake_metadata.py starts");
		return;
	}
	fake_get("/_ctl?reset=1&lifetime=3", &b);
	s3d_buf_free(&b);
	setenv("AWS_SHARED_CREDENTIALS_FILE", "config/credentials-dev", 1);
	snprintf(url, sizeof(url), "%s/container/creds", fake_base);
	setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", url, 1);
	setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", "container-secret", 1);
	s3d_buf_init(&errs, 0);
	c = load("config/refresh.conf", true, &err, &errs);
	c2 = load("config/refresh.conf", true, &err, &errs);
	if (!c || !c2 || s3d_engine_init(4, NULL)) {
		ok(0, "refresh: setting up");
		goto out;
	}
	is_int(s3d_ops_init(c), 0, "refresh: ops start ([global] from the container endpoint)");
	g = s3d_ctx_get(NULL, &err);
	w = s3d_ctx_get("watched-data", &err);	/* made now, on demand */
	st = s3d_ctx_get("static-data", &err);
	pub = s3d_ctx_get("public-data", &err);
	if (!g || !w || !st || !pub) {
		ok(0, "refresh: the four contexts");
		goto out_ops;
	}
	/* A context made on demand asks the container endpoint on the loop. */
	ok(!s3d_ctx_s3(w)->creds.access_key,
	   "refresh: watched-data's credentials are not waited for in s3d_ctx_get()");
	is_int(s3d_ctx_wait(w), 0, "refresh: ... they arrive from the loop");
	ok(key_prefix(s3d_ctx_s3(g)->creds.access_key, "ASIACONTAINER") &&
	   key_prefix(s3d_ctx_s3(w)->creds.access_key, "ASIACONTAINER"),
	   "refresh: [global] and watched-data: container credentials (%s, %s)",
	   s3d_ctx_s3(g)->creds.access_key, s3d_ctx_s3(w)->creds.access_key);
	ok(s3d_ctx_s3(g)->creds.watcher && s3d_ctx_s3(w)->creds.watcher,
	   "refresh: both watched (at start and on demand)");
	is_str(s3d_ctx_s3(st)->creds.access_key, "AKIDDEV",
	       "refresh: static-data: its profile's static keys");
	ok(!s3d_ctx_s3(st)->creds.watcher && !s3d_ctx_s3(pub)->creds.watcher &&
	   !s3d_ctx_s3(pub)->creds.access_key,
	   "refresh: static and anonymous credentials are not watched");

	kw.a = g;
	kw.b = w;
	kw.a0 = strdup(s3d_ctx_s3(g)->creds.access_key);
	kw.b0 = strdup(s3d_ctx_s3(w)->creds.access_key);
	kw.timeout = false;
	s3d_creds_stats = (struct s3d_creds_stats){ 0 };
	s3d_list_init(&kw_deadline.node);
	kw_deadline.fn = kw_fire;
	t0 = s3d_now_ms();
	s3d_timer_arm(&kw_deadline, 15000);
	s3d_loop_run(keys_changed, NULL);
	elapsed = s3d_now_ms() - t0;
	s3d_timer_cancel(&kw_deadline);
	ok(!kw.timeout, "refresh: both contexts got new credentials from the loop (%llu ms)",
	   (unsigned long long)elapsed);
	ok(elapsed >= 1500, "refresh: when due (about 2.7 s into a 3 s lifetime), not at once");
	ok(key_prefix(s3d_ctx_s3(g)->creds.access_key, "ASIACONTAINER") &&
	   s3d_ctx_s3(g)->creds.expires > time(NULL),
	   "refresh: new key id %s, not yet expired",
	   s3d_ctx_s3(g)->creds.access_key);
	ok(s3d_creds_stats.refreshes >= 2, "refresh: counted (%llu)",
	   (unsigned long long)s3d_creds_stats.refreshes);
	is_str(s3d_ctx_s3(st)->creds.access_key, "AKIDDEV",
	       "refresh: static keys untouched");
	free(kw.a0);
	free(kw.b0);

	/*
	 * SIGHUP while the container endpoint hangs: not waited for; the new
	 * table's contexts sign with the keys from before until fresh ones
	 * come, and are watched too.
	 */
	fake_get("/_ctl?hang=container", &b);
	s3d_buf_free(&b);
	t0 = s3d_now_ms();
	is_int(s3d_ops_set_conf(c2), 0, "refresh: reload");
	g2 = s3d_ctx_get(NULL, &err);
	elapsed = s3d_now_ms() - t0;
	ok(elapsed < 1000, "refresh: a reload does not wait for a hung endpoint (%llu ms)",
	   (unsigned long long)elapsed);
	ok(g2 && g2 != g && s3d_ctx_s3(g2)->creds.watcher,
	   "refresh: the reloaded [global] context is watched");
	ok(g2 && s3d_ctx_s3(g2)->creds.access_key &&
	   !strcmp(s3d_ctx_s3(g2)->creds.access_key,
		   s3d_ctx_s3(g)->creds.access_key),
	   "refresh: ... and signs with the keys from before the reload meanwhile");
	kw.a0 = g2 ? strdup(s3d_ctx_s3(g2)->creds.access_key ?: "") : NULL;
	fake_get("/_ctl?reset=1", &b);		/* the endpoint answers again */
	s3d_buf_free(&b);
	err = g2 ? s3d_ctx_wait(g2) : -1;
	ok(!err && kw.a0 &&
	   key_prefix(s3d_ctx_s3(g2)->creds.access_key, "ASIACONTAINER") &&
	   strcmp(s3d_ctx_s3(g2)->creds.access_key, kw.a0),
	   "refresh: ... then with fresh ones (%s)",
	   g2 ? s3d_ctx_s3(g2)->creds.access_key : "-");
	free(kw.a0);
	s3d_ctx_put(g2);

	/* The old contexts go; then the new ones: nothing is refreshed. */
	s3d_ctx_put(g);
	s3d_ctx_put(w);
	s3d_ctx_put(st);
	s3d_ctx_put(pub);
	s3d_ops_fini();
	/*
	 * A request already on the wire when its context went still reaches
	 * the endpoint: let those land first (the count went 1, then 2).
	 */
	kw.timeout = false;
	s3d_timer_arm(&kw_deadline, 500);
	s3d_loop_run(until_deadline, NULL);
	before = container_requests();
	kw.timeout = false;
	s3d_timer_arm(&kw_deadline, 3500);
	s3d_loop_run(until_deadline, NULL);
	ok(before > 0 && container_requests() == before,
	   "refresh: freed contexts are no longer refreshed (%ld requests, then %ld)",
	   before, container_requests());
	goto out_loop;
out_ops:
	s3d_ops_fini();
out_loop:
	s3d_engine_fini();
out:
	s3d_conf_free(c);
	s3d_conf_free(c2);
	s3d_buf_free(&errs);
	fake_stop();
	unsetenv("AWS_CONTAINER_CREDENTIALS_FULL_URI");
	unsetenv("AWS_CONTAINER_AUTHORIZATION_TOKEN");
	unsetenv("AWS_SHARED_CREDENTIALS_FILE");
}

/* ---- the daemon's --check-config ---- */

static int run(const char *cmd, struct s3d_buf *out)
{
	char buf[4096];
	size_t n;
	FILE *f = popen(cmd, "r");
	int st;

	s3d_buf_reset(out);
	if (!f)
		return -1;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		s3d_buf_add(out, buf, n);
	st = pclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_check_config(void)
{
	struct s3d_buf out;
	const char *d = "../../daemon/s3cachefsd";
	char cmd[512];

	s3d_buf_init(&out, 0);
	snprintf(cmd, sizeof(cmd), "%s --check-config --config config/good.conf 2>&1", d);
	is_int(run(cmd, &out), 0, "--check-config good.conf: exit 0");
	is_str(s3d_buf_str(&out), "config/good.conf: OK\n", "... says OK");

	snprintf(cmd, sizeof(cmd), "%s --check-config --config config/bad.conf 2>&1 >/dev/null", d);
	is_int(run(cmd, &out), 2, "--check-config bad.conf: exit 2");
	ok(strstr(s3d_buf_str(&out), "config/bad.conf:3: unknown key 'bogus'\n") &&
	   strstr(s3d_buf_str(&out), "config/bad.conf:24: bad section heading"),
	   "... FILE:LINE messages on stderr");
	is_int(count_lines(s3d_buf_str(&out)), S3D_ARRAY_SIZE(bad_lines),
	       "... one per bad line");

	snprintf(cmd, sizeof(cmd), "%s --check-config --config ../../daemon/s3cachefsd.conf.example 2>&1", d);
	is_int(run(cmd, &out), 0, "the shipped s3cachefsd.conf.example is valid");
	/* ... and so is every setting it shows, uncommented (bar ca_bundle). */
	snprintf(cmd, sizeof(cmd), "sed 's/^#\\([a-z_]* =\\)/\\1/; s/^#\\[bucket/[bucket/; /ca_bundle =/d' ../../daemon/s3cachefsd.conf.example >config/example.tmp && %s --check-config --config config/example.tmp 2>&1; rc=$?; rm -f config/example.tmp; exit $rc", d);
	is_int(run(cmd, &out), 0, "... and with its settings uncommented");
	is_str(s3d_buf_str(&out), "config/example.tmp: OK\n", "... says OK");

	snprintf(cmd, sizeof(cmd), "S3CACHEFSD_CONFIG=config/bad.conf %s --check-config 2>&1", d);
	is_int(run(cmd, &out), 2, "$S3CACHEFSD_CONFIG names the file");

	snprintf(cmd, sizeof(cmd), "%s --check-config --config config/missing.conf 2>&1", d);
	is_int(run(cmd, &out), 2, "--check-config of a missing file: exit 2");
	is_str(s3d_buf_str(&out), "config/missing.conf: No such file or directory\n",
	       "... saying so");

	/* The daemon itself refuses to start on a bad file, before anything. */
	snprintf(cmd, sizeof(cmd), "%s --config config/bad.conf 2>&1", d);
	is_int(run(cmd, &out), 2, "s3cachefsd with bad.conf: exit 2");
	ok(strstr(s3d_buf_str(&out), "config/bad.conf:1: ") != NULL,
	   "... with the FILE:LINE messages");
	s3d_buf_free(&out);
}

int main(void)
{
	s3d_log_level = getenv("S3D_TEST_VERBOSE") ? S3D_LOG_DEBUG : S3D_LOG_ERR;
	/* Nothing here may wait for a real 169.254.169.254 or read ~/.aws. */
	setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
	setenv("AWS_CONFIG_FILE", "/nonexistent", 1);
	unsetenv("AWS_PROFILE");
	test_good();
	test_override();
	test_allow_http();
	test_bad();
	test_stall_timeout();
	test_lookup_get_max();
	test_contexts();
	test_refresh();
	test_check_config();
	return tap_done();
}
