// SPDX-License-Identifier: GPL-2.0
/*
 * Credentials: the provider chain and its order, the shared files
 * (profiles, [profile x] in the config file, malformed files), the STS,
 * container and IMDSv2 providers against tests/host/fake_metadata.py on a
 * loopback port, reply parsing and expiry, the refresh timing rule, and
 * refreshes driven through the event loop.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include <json-c/json.h>

#include "lib/base.h"
#include "lib/creds.h"
#include "lib/log.h"
#include "lib/loop.h"
#include "lib/util.h"
#include "lib/xfer.h"
#include "tap.h"

static char dir[] = "/tmp/s3d-test-creds-XXXXXX";
static char file[4200], config[4200], webtok[4200], badtok[4200];
static char conttok[4200], broken1[4200], broken2[4200];
static char token[2001];
static char base[64];
static pid_t fake_pid;

#define ROLE_ARN	"arn:aws:iam::123456789012:role/s3cachefs"

static void put_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f)) {
		perror(path);
		exit(1);
	}
}

static void write_files(void)
{
	FILE *f;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		exit(1);
	}
	snprintf(file, sizeof(file), "%s/credentials", dir);
	snprintf(config, sizeof(config), "%s/config", dir);
	snprintf(webtok, sizeof(webtok), "%s/web-token", dir);
	snprintf(badtok, sizeof(badtok), "%s/bad-token", dir);
	snprintf(conttok, sizeof(conttok), "%s/container-token", dir);
	snprintf(broken1, sizeof(broken1), "%s/broken1", dir);
	snprintf(broken2, sizeof(broken2), "%s/broken2", dir);
	f = fopen(file, "w");
	memset(token, 'T', sizeof(token) - 1);
	token[0] = 'F';
	token[sizeof(token) - 2] = '=';
	fprintf(f,
		"# written by the AWS CLI\n"
		"[default]\n"
		"aws_access_key_id = AKIDDEFAULT\n"
		"aws_secret_access_key=secret/with+chars=\n"
		"\n"
		"; another comment\n"
		"[prod]\r\n"
		"  aws_access_key_id =  AKIDPROD  \r\n"
		"aws_secret_access_key = prodsecret\r\n"
		"aws_session_token = %s\r\n"
		"region = eu-west-1\n"
		"[half]\n"
		"aws_access_key_id = AKIDHALF\n"
		"[both]\n"
		"aws_access_key_id = AKIDBOTHCRED\n"
		"aws_secret_access_key = bothcred\n",
		token);
	fclose(f);
	put_file(config,
		 "[default]\n"
		 "region = us-east-1\n"
		 "[profile cfg]\n"
		 "aws_access_key_id = AKIDCONFIG\n"
		 "aws_secret_access_key = configsecret\n"
		 "s3 =\n"
		 "    max_concurrent_requests = 20\n"
		 "[cfg]\n"
		 "aws_access_key_id = AKIDNOTAPROFILE\n"
		 "aws_secret_access_key = wrong\n"
		 "[profile both]\n"
		 "aws_access_key_id = AKIDBOTHCONFIG\n"
		 "aws_secret_access_key = bothconfig\n"
		 "[profile   wi]\n"
		 "role_arn = " ROLE_ARN "\n"
		 "web_identity_token_file = WEBTOK\n"
		 "role_session_name = from-profile\n"
		 "[profile assume]\n"
		 "role_arn = " ROLE_ARN "\n"
		 "source_profile = default\n");
	/* The profile's token file path: fill it in. */
	{
		char buf[4096], *p;
		FILE *g = fopen(config, "r");
		size_t n = fread(buf, 1, sizeof(buf) - 1, g);

		fclose(g);
		buf[n] = '\0';
		p = strstr(buf, "WEBTOK");
		*p = '\0';
		g = fopen(config, "w");
		fprintf(g, "%s%s%s", buf, webtok, p + 6);
		fclose(g);
	}
	put_file(webtok, "web-identity-token\n");
	put_file(badtok, "not-the-token\n");
	put_file(conttok, "container-secret\n");
	put_file(broken1, "[default\naws_access_key_id = A\n");
	put_file(broken2, "[default]\naws_access_key_id = A\njunk line\n");
}

static void clean_env(void)
{
	static const char *const vars[] = {
		"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
		"AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_SHARED_CREDENTIALS_FILE",
		"AWS_CONFIG_FILE", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN",
		"AWS_ROLE_SESSION_NAME", "AWS_ENDPOINT_URL_STS", "AWS_REGION",
		"AWS_DEFAULT_REGION", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
		"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
		"AWS_CONTAINER_AUTHORIZATION_TOKEN",
		"AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
		"AWS_EC2_METADATA_SERVICE_ENDPOINT", "AWS_CA_BUNDLE",
	};
	size_t i;

	for (i = 0; i < S3D_ARRAY_SIZE(vars); i++)
		unsetenv(vars[i]);
	/* Nothing here may wait for a real 169.254.169.254. */
	setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
	setenv("HOME", dir, 1);		/* no ~/.aws */
}

/* ---- the fake ---- */

static void start_fake(void)
{
	int fds[2];
	char line[32] = "";
	FILE *f;

	if (pipe(fds)) {
		perror("pipe");
		exit(1);
	}
	fake_pid = fork();
	if (!fake_pid) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execlp("python3", "python3", "fake_metadata.py", (char *)NULL);
		perror("python3 fake_metadata.py");
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	if (!fgets(line, sizeof(line), f) || atoi(line) <= 0) {
		fprintf(stderr, "fake_metadata.py did not start\n");
		exit(1);
	}
	fclose(f);
	snprintf(base, sizeof(base), "http://127.0.0.1:%d", atoi(line));
}

static void stop_fake(void)
{
	kill(fake_pid, SIGTERM);
	waitpid(fake_pid, NULL, 0);
}

static size_t collect(char *p, size_t size, size_t n, void *ud)
{
	s3d_buf_add(ud, p, size * n);
	return size * n;
}

/* A plain request to the fake: returns the status, body in @out. */
static long fake_req(const char *method, const char *path, const char *hdr,
		     struct s3d_buf *out)
{
	struct curl_slist *hl = hdr ? curl_slist_append(NULL, hdr) : NULL;
	CURL *e = curl_easy_init();
	char url[256];
	long status = 0;

	snprintf(url, sizeof(url), "%s%s", base, path);
	curl_easy_setopt(e, CURLOPT_URL, url);
	curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, hl);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, out);
	curl_easy_setopt(e, CURLOPT_NOPROXY, "*");
	if (curl_easy_perform(e) == CURLE_OK)
		curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(e);
	curl_slist_free_all(hl);
	return status;
}

static void ctl(const char *query)
{
	struct s3d_buf b;
	char path[256];

	s3d_buf_init(&b, 0);
	snprintf(path, sizeof(path), "/_ctl?%s", query);
	if (fake_req("GET", path, NULL, &b) != 200) {
		fprintf(stderr, "fake: %s failed\n", path);
		exit(1);
	}
	s3d_buf_free(&b);
}

/* The fake's counter @name (requests to an endpoint, "unauthorized"). */
static long fake_count(const char *name)
{
	struct json_object *o, *v;
	struct s3d_buf b;
	long n = -1;

	s3d_buf_init(&b, 0);
	if (fake_req("GET", "/_stats", NULL, &b) == 200) {
		o = json_tokener_parse(s3d_buf_str(&b));
		n = json_object_object_get_ex(o, name, &v) ?
		    json_object_get_int(v) : 0;
		json_object_put(o);
	}
	s3d_buf_free(&b);
	return n;
}

static long fake_total(void)
{
	return fake_count("sts") + fake_count("container") +
	       fake_count("imds_token") + fake_count("imds_list") +
	       fake_count("imds_role");
}

static bool prefix(const char *s, const char *p)
{
	return s && !strncmp(s, p, strlen(p));
}

static void set_web_identity(const char *tokfile)
{
	setenv("AWS_WEB_IDENTITY_TOKEN_FILE", tokfile, 1);
	setenv("AWS_ROLE_ARN", ROLE_ARN, 1);
	setenv("AWS_ENDPOINT_URL_STS", base, 1);
}

static void set_container(const char *auth)
{
	char url[128];

	snprintf(url, sizeof(url), "%s/container/creds", base);
	setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", url, 1);
	if (auth)
		setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", auth, 1);
	else
		unsetenv("AWS_CONTAINER_AUTHORIZATION_TOKEN");
}

static void set_imds(void)
{
	setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", base, 1);
	unsetenv("AWS_EC2_METADATA_DISABLED");
}

/* ---- shared files ---- */

static void test_profiles(void)
{
	struct s3d_creds c = { 0 };

	is_int(s3d_creds_from_profile(&c, file, NULL), 0, "profile: default");
	is_str(c.access_key, "AKIDDEFAULT", "profile: default key id");
	is_str(c.secret_key, "secret/with+chars=", "profile: default secret");
	ok(!c.token, "profile: default has no token");
	is_int(c.expires, 0, "profile: static keys never expire");

	is_int(s3d_creds_from_profile(&c, file, "prod"), 0, "profile: named");
	is_str(c.access_key, "AKIDPROD", "profile: values trimmed (CRLF file)");
	ok(c.token && strlen(c.token) == 2000 && !strcmp(c.token, token),
	   "profile: a 2000-byte session token survives intact");

	setenv("AWS_PROFILE", "prod", 1);
	is_int(s3d_creds_from_profile(&c, file, NULL), 0, "profile: from AWS_PROFILE");
	is_str(c.access_key, "AKIDPROD", "profile: AWS_PROFILE selects it");
	unsetenv("AWS_PROFILE");

	is_int(s3d_creds_from_profile(&c, file, "half"), -ENOENT,
	       "profile: a key id without a secret is not credentials");
	is_int(s3d_creds_from_profile(&c, file, "nope"), -ENOENT,
	       "profile: missing profile");
	is_int(s3d_creds_from_profile(&c, "/nonexistent/credentials", NULL),
	       -ENOENT, "profile: missing file");
	is_int(s3d_creds_from_profile(&c, broken1, NULL), -EINVAL,
	       "profile: unclosed [section is an error");
	is_int(s3d_creds_from_profile(&c, broken2, NULL), -EINVAL,
	       "profile: a line that is not name = value is an error");
	s3d_creds_clear(&c);
}

static void test_config_file(void)
{
	struct s3d_creds c = { 0 };

	setenv("AWS_SHARED_CREDENTIALS_FILE", file, 1);
	setenv("AWS_CONFIG_FILE", config, 1);
	is_int(s3d_creds_resolve(&c, "cfg"), 0, "config: [profile cfg]");
	is_str(c.access_key, "AKIDCONFIG",
	       "config: keys from [profile cfg], not from [cfg]");
	is_str(c.source, "shared config file", "config: source named");
	is_int(s3d_creds_resolve(&c, "both"), 0, "config: profile in both files");
	is_str(c.access_key, "AKIDBOTHCRED",
	       "config: the credentials file wins over the config file");
	is_int(s3d_creds_resolve(&c, "prod"), 0, "resolve: named profile");
	is_str(c.access_key, "AKIDPROD", "resolve: the profile asked for");
	setenv("AWS_PROFILE", "cfg", 1);
	is_int(s3d_creds_resolve(&c, NULL), 0, "resolve: AWS_PROFILE");
	is_str(c.access_key, "AKIDCONFIG", "resolve: NULL means AWS_PROFILE");
	is_int(s3d_creds_resolve(&c, "prod"), 0, "resolve: argument");
	is_str(c.access_key, "AKIDPROD", "resolve: the argument beats AWS_PROFILE");
	unsetenv("AWS_PROFILE");
	is_int(s3d_creds_resolve(&c, "nope"), -ENOENT,
	       "resolve: an unknown named profile is an error");
	is_str(c.access_key, "AKIDPROD", "resolve: failure keeps the old keys");
	is_int(s3d_creds_resolve(&c, "assume"), -EOPNOTSUPP,
	       "resolve: role_arn + source_profile is refused, not skipped");
	setenv("AWS_CONFIG_FILE", broken2, 1);
	is_int(s3d_creds_resolve(&c, NULL), -EINVAL,
	       "resolve: a malformed config file stops the chain");
	setenv("AWS_CONFIG_FILE", config, 1);
	s3d_creds_clear(&c);
	unsetenv("AWS_SHARED_CREDENTIALS_FILE");
	unsetenv("AWS_CONFIG_FILE");
}

static void test_env_chain(void)
{
	struct s3d_creds c = { 0 };

	setenv("AWS_SHARED_CREDENTIALS_FILE", file, 1);
	setenv("AWS_ACCESS_KEY_ID", "AKIDENV", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "envsecret", 1);
	setenv("AWS_SESSION_TOKEN", "envtoken", 1);
	is_int(s3d_creds_load(&c), 0, "chain: loads");
	is_str(c.access_key, "AKIDENV", "chain: environment wins");
	is_str(c.token, "envtoken", "chain: AWS_SESSION_TOKEN");
	is_str(c.source, "environment", "chain: source named");

	unsetenv("AWS_SECRET_ACCESS_KEY");
	is_int(s3d_creds_load(&c), 0, "chain: half an environment falls through");
	is_str(c.access_key, "AKIDDEFAULT", "chain: then the credentials file");
	ok(!c.token, "chain: no token leaks from the environment");

	/* A profile asked for by name beats the environment's keys. */
	setenv("AWS_SECRET_ACCESS_KEY", "envsecret", 1);
	is_int(s3d_creds_resolve(&c, "prod"), 0, "chain: named profile");
	is_str(c.access_key, "AKIDPROD",
	       "chain: a named profile skips the environment's keys");
	setenv("AWS_PROFILE", "prod", 1);
	is_int(s3d_creds_load(&c), 0, "chain: AWS_PROFILE and env keys");
	is_str(c.access_key, "AKIDENV",
	       "chain: ... $AWS_PROFILE does not (the SDKs' order)");
	unsetenv("AWS_PROFILE");
	unsetenv("AWS_SECRET_ACCESS_KEY");

	setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent", 1);
	is_int(s3d_creds_load(&c), -ENOENT, "chain: nothing anywhere");
	ok(c.access_key && !strcmp(c.access_key, "AKIDENV"),
	   "chain: a failed load keeps the previous credentials");
	{
		char why[512];

		is_int(s3d_creds_resolve_why(&c, NULL, why, sizeof(why)),
		       -ENOENT, "chain: nothing, with the reasons");
		ok(strstr(why, "environment: ") && strstr(why, "; shared files: ") &&
		   strstr(why, "; web identity: ") && strstr(why, "; container: ") &&
		   strstr(why, "; IMDS: disabled"),
		   "chain: the reasons name every provider tried (%s)", why);
	}
	s3d_creds_clear(&c);
	unsetenv("AWS_ACCESS_KEY_ID");
	unsetenv("AWS_SESSION_TOKEN");
	unsetenv("AWS_SHARED_CREDENTIALS_FILE");
}

/* ---- replies and expiry ---- */

static const char sts_ok[] =
	"<AssumeRoleWithWebIdentityResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">"
	"<AssumeRoleWithWebIdentityResult><Credentials>"
	"<AccessKeyId>ASIAX</AccessKeyId><SecretAccessKey>sx</SecretAccessKey>"
	"<SessionToken>tx</SessionToken><Expiration>2030-01-02T03:04:05Z</Expiration>"
	"</Credentials></AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>";

static int sts(const char *xml, struct s3d_creds *c, char *why)
{
	return s3d_creds_parse_sts(xml, strlen(xml), c, why, 256);
}

static int js(const char *json, struct s3d_creds *c, char *why)
{
	return s3d_creds_parse_json(json, strlen(json), c, why, 256);
}

static void test_parsers(void)
{
	struct s3d_creds c = { 0 };
	struct tm tm = { .tm_year = 130, .tm_mon = 0, .tm_mday = 2,
			 .tm_hour = 3, .tm_min = 4, .tm_sec = 5 };
	time_t want = timegm(&tm);
	char why[256], doc[1024];

	is_int(sts(sts_ok, &c, why), 0, "sts: a reply parses");
	is_str(c.access_key, "ASIAX", "sts: key id");
	is_str(c.secret_key, "sx", "sts: secret");
	is_str(c.token, "tx", "sts: session token");
	is_int(c.expires, want, "sts: Expiration");
	is_int(sts("<ErrorResponse><Error><Code>InvalidIdentityToken</Code><Message>no</Message></Error><RequestId>r1</RequestId></ErrorResponse>",
		   &c, why), -EACCES, "sts: ErrorResponse");
	ok(strstr(why, "InvalidIdentityToken") && strstr(why, "r1"),
	   "sts: the error says code and request id (%s)", why);
	snprintf(doc, sizeof(doc), "%.*s", (int)strlen(sts_ok) / 2, sts_ok);
	is_int(sts(doc, &c, why), -EBADMSG, "sts: truncated XML");
	is_int(sts("<!DOCTYPE x [<!ENTITY a \"b\">]><AssumeRoleWithWebIdentityResponse/>",
		   &c, why), -EBADMSG, "sts: DOCTYPE refused");
	is_int(sts("<AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult><Credentials><AccessKeyId>A</AccessKeyId><SecretAccessKey>S</SecretAccessKey></Credentials></AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>",
		   &c, why), -EBADMSG, "sts: no Expiration");
	is_int(sts("<Other><Credentials><AccessKeyId>A</AccessKeyId></Credentials></Other>",
		   &c, why), -EBADMSG, "sts: another document");
	is_str(c.access_key, "ASIAX", "sts: failures leave the credentials alone");

	is_int(js("{\"AccessKeyId\":\"ASIAJ\",\"SecretAccessKey\":\"sj\",\"Token\":\"tj\",\"Expiration\":\"2030-01-02T03:04:05Z\",\"RoleArn\":\"x\"}",
		  &c, why), 0, "json: a container reply parses");
	is_str(c.access_key, "ASIAJ", "json: key id");
	is_str(c.token, "tj", "json: token");
	is_int(c.expires, want, "json: Expiration");
	is_int(js("{\"Code\":\"Success\",\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"S\",\"Token\":\"T\",\"Expiration\":\"2030-01-02T03:04:05.123Z\"}",
		  &c, why), 0, "json: IMDS reply, fractional seconds");
	is_int(c.expires, want, "json: fractional seconds dropped");
	is_int(js("{\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"S\",\"Expiration\":\"2030-01-02T03:04:05+00:00\"}",
		  &c, why), 0, "json: +00:00 offset");
	is_int(c.expires, want, "json: +00:00 is UTC");
	ok(!c.token, "json: no Token, no session token");
	is_int(js("{\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"S\"}", &c, why),
	       0, "json: no Expiration");
	is_int(c.expires, 0, "json: no Expiration means never");
	is_int(js("{\"Code\":\"Failure\",\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"S\"}",
		  &c, why), -EACCES, "json: Code other than Success");
	is_int(js("{\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"S\",\"Expiration\":\"tomorrow\"}",
		  &c, why), -EBADMSG, "json: bad Expiration");
	ok(strstr(why, "Expiration") != NULL, "json: ... says so (%s)", why);
	is_int(js("{\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"S\",\"Expiration\":\"2030-13-02T03:04:05Z\"}",
		  &c, why), -EBADMSG, "json: month 13");
	is_int(js("{\"AccessKeyId\":\"A\"}", &c, why), -EBADMSG,
	       "json: no SecretAccessKey");
	ok(strstr(why, "SecretAccessKey") != NULL, "json: ... says so (%s)", why);
	is_int(js("{\"AccessKeyId\":1,\"SecretAccessKey\":\"S\"}", &c, why),
	       -EBADMSG, "json: a number for a string");
	is_int(js("{\"AccessKeyId\":\"A\",\"SecretAcc", &c, why), -EBADMSG,
	       "json: truncated");
	is_int(js("[1,2]", &c, why), -EBADMSG, "json: not an object");
	is_int(js("{\"AccessKeyId\":\"A\",\"SecretAccessKey\":\"S\"} x", &c, why),
	       -EBADMSG, "json: trailing garbage");
	is_int(js("<html>502</html>", &c, why), -EBADMSG, "json: HTML");
	s3d_creds_clear(&c);
}

static void test_timing(void)
{
	is_int(s3d_creds_refresh_ms(1000, 1000 + 3600), 3300 * 1000,
	       "refresh: 1 h credentials 5 min before expiry");
	is_int(s3d_creds_refresh_ms(1000, 1000 + 6 * 3600),
	       (6 * 3600 - 300) * 1000, "refresh: 6 h credentials 5 min before");
	is_int(s3d_creds_refresh_ms(1000, 1000 + 900), 810 * 1000,
	       "refresh: 15 min credentials a tenth of their life before");
	is_int(s3d_creds_refresh_ms(1000, 1000 + 3000), 2700 * 1000,
	       "refresh: 50 min: a tenth (300 s) equals 5 min");
	is_int(s3d_creds_refresh_ms(1000, 1000 + 3), 2700,
	       "refresh: 3 s credentials after 2.7 s");
	is_int(s3d_creds_refresh_ms(1000, 1000), S3D_CREDS_REFRESH_MIN_MS,
	       "refresh: expiring now: after the minimum delay");
	is_int(s3d_creds_refresh_ms(1000, 10), S3D_CREDS_REFRESH_MIN_MS,
	       "refresh: already expired: after the minimum delay");
}

/* ---- providers against the fake ---- */

static void test_providers(void)
{
	struct s3d_creds c = { 0 };
	struct s3d_buf b;
	time_t now;
	long n;

	/* web identity, alone */
	set_web_identity(webtok);
	now = time(NULL);
	is_int(s3d_creds_resolve(&c, NULL), 0, "web identity: resolves");
	ok(prefix(c.access_key, "ASIASTS"), "web identity: STS key id (%s)",
	   c.access_key);
	ok(prefix(c.token, "token-sts-"), "web identity: session token");
	/* time() is the coarse clock: it may trail the fake's by a second. */
	ok(c.expires >= now + 3599 && c.expires <= time(NULL) + 3601,
	   "web identity: expiry from the reply");
	is_str(c.source, "web identity token (STS)", "web identity: source");
	setenv("AWS_ROLE_SESSION_NAME", "my-session", 1);
	s3d_creds_resolve(&c, NULL);
	{
		struct s3d_buf st;
		s3d_buf_init(&st, 0);
		fake_req("GET", "/_stats", NULL, &st);
		ok(strstr(s3d_buf_str(&st), "\"my-session\"") != NULL,
		   "web identity: AWS_ROLE_SESSION_NAME sent");
		s3d_buf_free(&st);
	}
	unsetenv("AWS_ROLE_SESSION_NAME");
	setenv("AWS_WEB_IDENTITY_TOKEN_FILE", badtok, 1);
	is_int(s3d_creds_resolve(&c, NULL), -EACCES,
	       "web identity: STS refuses a wrong token");
	setenv("AWS_WEB_IDENTITY_TOKEN_FILE", "/nonexistent/token", 1);
	is_int(s3d_creds_resolve(&c, NULL), -ENOENT,
	       "web identity: missing token file is an error");
	unsetenv("AWS_ROLE_ARN");
	unsetenv("AWS_WEB_IDENTITY_TOKEN_FILE");
	setenv("AWS_CONFIG_FILE", config, 1);
	is_int(s3d_creds_resolve(&c, "wi"), 0,
	       "web identity: from a profile's web_identity_token_file + role_arn");
	ok(prefix(c.access_key, "ASIASTS"), "web identity: profile -> STS");
	unsetenv("AWS_CONFIG_FILE");
	ctl("bad=sts:nosecret");
	setenv("AWS_WEB_IDENTITY_TOKEN_FILE", webtok, 1);
	setenv("AWS_ROLE_ARN", ROLE_ARN, 1);
	is_int(s3d_creds_resolve(&c, NULL), -EBADMSG,
	       "web identity: a reply without a secret");
	ctl("reset=1");
	{
		/* The role's keys would come back in clear. */
		char why[1024] = "";
		int n = fake_count("sts");

		setenv("AWS_ENDPOINT_URL_STS", "http://192.0.2.1:80", 1);
		is_int(s3d_creds_resolve_why(&c, NULL, why, sizeof(why)), -EINVAL,
		       "web identity: STS over plain http to a host that is not loopback is refused");
		ok(strstr(why, "AWS_ENDPOINT_URL_STS http://192.0.2.1:80: plain http only to loopback") != NULL,
		   "web identity: ... and says why");
		is_int(fake_count("sts"), n, "web identity: ... before any request");
	}
	unsetenv("AWS_WEB_IDENTITY_TOKEN_FILE");
	unsetenv("AWS_ROLE_ARN");
	unsetenv("AWS_ENDPOINT_URL_STS");

	/* container, alone */
	set_container("container-secret");
	is_int(s3d_creds_resolve(&c, NULL), 0, "container: resolves");
	ok(prefix(c.access_key, "ASIACONTAINER"), "container: key id (%s)",
	   c.access_key);
	is_str(c.source, "container credentials endpoint", "container: source");
	ok(c.expires > time(NULL), "container: expiry");
	n = fake_count("unauthorized");
	set_container("wrong");
	is_int(s3d_creds_resolve(&c, NULL), -EACCES,
	       "container: a wrong authorization token is refused");
	is_int(fake_count("unauthorized"), n + 1,
	       "container: ... by the fake, which checks it");
	set_container(NULL);
	setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", conttok, 1);
	is_int(s3d_creds_resolve(&c, NULL), 0,
	       "container: token from AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
	unsetenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
	set_container("container-secret");
	ctl("bad=container:truncated");
	is_int(s3d_creds_resolve(&c, NULL), -EBADMSG,
	       "container: truncated JSON");
	ctl("reset=1");
	setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI",
	       "http://192.0.2.1/creds", 1);
	is_int(s3d_creds_resolve(&c, NULL), -EINVAL,
	       "container: plain http to a non-loopback host is refused");
	unsetenv("AWS_CONTAINER_CREDENTIALS_FULL_URI");
	unsetenv("AWS_CONTAINER_AUTHORIZATION_TOKEN");

	/* IMDSv2, alone */
	s3d_buf_init(&b, 0);
	is_int(fake_req("GET", "/latest/meta-data/iam/security-credentials/",
			NULL, &b), 401,
	       "fake IMDS: a GET without a token gets 401");
	s3d_buf_free(&b);
	set_imds();
	n = fake_count("imds_token");
	is_int(s3d_creds_resolve(&c, NULL), 0, "IMDS: resolves");
	ok(prefix(c.access_key, "ASIAIMDS"), "IMDS: key id (%s)", c.access_key);
	is_str(c.source, "EC2 instance metadata (IMDSv2)", "IMDS: source");
	is_int(fake_count("imds_token"), n + 1, "IMDS: took a session token");
	ctl("bad=imds_role:badexpiry");
	is_int(s3d_creds_resolve(&c, NULL), -EBADMSG, "IMDS: bad Expiration");
	ctl("reset=1&fail=imds_token:1");
	is_int(s3d_creds_resolve(&c, NULL), -EIO, "IMDS: token PUT fails");
	setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", "http://127.0.0.1:1", 1);
	is_int(s3d_creds_resolve(&c, NULL), -ENOENT,
	       "IMDS: no service there means no credentials");
	setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", "http://192.0.2.1", 1);
	is_int(s3d_creds_resolve(&c, NULL), -EINVAL,
	       "IMDS: plain http to an address that is not IMDS nor loopback is refused");
	{
		char ep[160];

		/* Something that is not IMDSv2 answers the token PUT. */
		snprintf(ep, sizeof(ep), "%s/not-imds", base);
		setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", ep, 1);
		is_int(s3d_creds_resolve(&c, NULL), -ENOENT,
		       "IMDS: a 404 to the token PUT means no IMDS");
	}
	setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
	unsetenv("AWS_EC2_METADATA_SERVICE_ENDPOINT");
	ctl("reset=1");
	s3d_creds_clear(&c);
}

static void test_chain_order(void)
{
	struct s3d_creds c = { 0 };
	long before;

	setenv("AWS_ACCESS_KEY_ID", "AKIDENV", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "envsecret", 1);
	setenv("AWS_SHARED_CREDENTIALS_FILE", file, 1);
	set_web_identity(webtok);
	set_container("container-secret");
	set_imds();

	before = fake_total();
	is_int(s3d_creds_resolve(&c, NULL), 0, "order: all five configured");
	is_str(c.access_key, "AKIDENV", "order: environment first");
	is_int(fake_total(), before, "order: ... and no server was asked");
	unsetenv("AWS_ACCESS_KEY_ID");
	is_int(s3d_creds_resolve(&c, NULL), 0, "order: without env");
	is_str(c.access_key, "AKIDDEFAULT", "order: shared files second");
	is_int(fake_total(), before, "order: ... and no server was asked");
	setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent", 1);
	is_int(s3d_creds_resolve(&c, NULL), 0, "order: without files");
	ok(prefix(c.access_key, "ASIASTS"), "order: web identity third (%s)",
	   c.access_key);
	is_int(fake_count("container") + fake_count("imds_token"), 0,
	       "order: ... container and IMDS not asked");
	unsetenv("AWS_WEB_IDENTITY_TOKEN_FILE");
	unsetenv("AWS_ROLE_ARN");
	is_int(s3d_creds_resolve(&c, NULL), 0, "order: without web identity");
	ok(prefix(c.access_key, "ASIACONTAINER"), "order: container fourth (%s)",
	   c.access_key);
	is_int(fake_count("imds_token"), 0, "order: ... IMDS not asked");
	unsetenv("AWS_CONTAINER_CREDENTIALS_FULL_URI");
	is_int(s3d_creds_resolve(&c, NULL), 0, "order: without container");
	ok(prefix(c.access_key, "ASIAIMDS"), "order: IMDS last (%s)",
	   c.access_key);
	setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
	is_int(s3d_creds_resolve(&c, NULL), -ENOENT, "order: then nothing");
	ok(prefix(c.access_key, "ASIAIMDS"), "order: ... keeping the old keys");

	unsetenv("AWS_SECRET_ACCESS_KEY");
	unsetenv("AWS_SHARED_CREDENTIALS_FILE");
	unsetenv("AWS_ENDPOINT_URL_STS");
	unsetenv("AWS_CONTAINER_AUTHORIZATION_TOKEN");
	unsetenv("AWS_EC2_METADATA_SERVICE_ENDPOINT");
	s3d_creds_clear(&c);
}

/* ---- refresh on the event loop ---- */

struct refresh_wait {
	struct s3d_creds *a, *b;
	char *a0, *b0;
	bool timeout;
};

static struct refresh_wait rw;
static struct s3d_timer deadline;

static void deadline_fire(struct s3d_timer *t)
{
	(void)t;
	rw.timeout = true;
}

static bool refreshed(void *arg)
{
	(void)arg;
	return rw.timeout || (strcmp(rw.a->access_key, rw.a0) &&
			      strcmp(rw.b->access_key, rw.b0));
}

static bool never(void *arg)
{
	(void)arg;
	return rw.timeout;
}

static void test_refresh(void)
{
	struct s3d_creds cont = { 0 }, imds = { 0 }, stat = { 0 };
	uint64_t t0, elapsed;
	long tokens;

	ok(!s3d_engine_init(4, NULL), "refresh: loop");
	ctl("reset=1&lifetime=3");
	set_container("container-secret");
	is_int(s3d_creds_resolve(&cont, NULL), 0, "refresh: container creds");
	unsetenv("AWS_CONTAINER_CREDENTIALS_FULL_URI");
	set_imds();
	is_int(s3d_creds_resolve(&imds, NULL), 0, "refresh: IMDS creds");
	set_container("container-secret");
	setenv("AWS_ACCESS_KEY_ID", "AKIDSTATIC", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "s", 1);
	is_int(s3d_creds_resolve(&stat, NULL), 0, "refresh: static creds");
	unsetenv("AWS_ACCESS_KEY_ID");
	unsetenv("AWS_SECRET_ACCESS_KEY");
	ok(cont.expires && imds.expires, "refresh: both expire (in 3 s)");

	rw.a = &cont;
	rw.b = &imds;
	rw.a0 = strdup(cont.access_key);
	rw.b0 = strdup(imds.access_key);
	tokens = fake_count("imds_token");
	/* The first container refresh fails: it must be retried. */
	ctl("fail=container:1");
	s3d_creds_stats = (struct s3d_creds_stats){ 0 };
	is_int(s3d_creds_watch(&cont, NULL), 0, "refresh: watch container");
	is_int(s3d_creds_watch(&imds, NULL), 0, "refresh: watch IMDS");
	is_int(s3d_creds_watch(&stat, NULL), 0, "refresh: watch static");

	s3d_list_init(&deadline.node);
	deadline.fn = deadline_fire;
	t0 = s3d_now_ms();
	s3d_timer_arm(&deadline, 800);
	s3d_loop_run(never, NULL);
	rw.timeout = false;
	is_str(cont.access_key, rw.a0, "refresh: not before it is due");
	is_str(imds.access_key, rw.b0, "refresh: not before it is due (IMDS)");

	s3d_timer_arm(&deadline, 15000);
	s3d_loop_run(refreshed, NULL);
	elapsed = s3d_now_ms() - t0;
	s3d_timer_cancel(&deadline);
	ok(!rw.timeout, "refresh: both refreshed through the loop (%llu ms)",
	   (unsigned long long)elapsed);
	ok(elapsed >= 1500, "refresh: about 2.7 s after issue, not at once");
	ok(prefix(cont.access_key, "ASIACONTAINER") &&
	   strcmp(cont.access_key, rw.a0),
	   "refresh: new container key id (%s)", cont.access_key);
	ok(prefix(imds.access_key, "ASIAIMDS") && strcmp(imds.access_key, rw.b0),
	   "refresh: new IMDS key id (%s)", imds.access_key);
	ok(imds.token && prefix(imds.token, "token-imds_role-"),
	   "refresh: new session token");
	ok(cont.expires > time(NULL), "refresh: new expiry");
	ok(fake_count("imds_token") > tokens,
	   "refresh: IMDSv2 token PUT sent from the loop");
	ok(s3d_creds_stats.refreshes >= 2, "refresh: counted (%llu)",
	   (unsigned long long)s3d_creds_stats.refreshes);
	is_int(s3d_creds_stats.refresh_failures, 1,
	       "refresh: the injected failure counted, then retried");
	is_str(stat.access_key, "AKIDSTATIC", "refresh: static creds untouched");

	/* SIGHUP: a resolve into watched creds re-arms; unwatch stops. */
	is_int(s3d_creds_resolve(&cont, NULL), 0, "refresh: resolve again");
	s3d_creds_unwatch(&cont);
	s3d_creds_unwatch(&imds);
	ok(!cont.watcher && cont.access_key, "refresh: unwatch keeps the keys");
	free(rw.a0);
	free(rw.b0);
	s3d_creds_clear(&cont);
	s3d_creds_clear(&imds);
	s3d_creds_clear(&stat);
	s3d_engine_fini();
	unsetenv("AWS_CONTAINER_CREDENTIALS_FULL_URI");
	unsetenv("AWS_CONTAINER_AUTHORIZATION_TOKEN");
	unsetenv("AWS_EC2_METADATA_SERVICE_ENDPOINT");
	setenv("AWS_EC2_METADATA_DISABLED", "true", 1);
}

int main(void)
{
	s3d_log_level = getenv("S3D_TEST_VERBOSE") ? S3D_LOG_DEBUG : -1;
	write_files();
	clean_env();
	test_profiles();
	test_config_file();
	test_env_chain();
	test_parsers();
	test_timing();
	start_fake();
	test_providers();
	ctl("reset=1");
	test_chain_order();
	test_refresh();
	stop_fake();
	{
		char cmd[4200];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd))
			diag("could not remove the temporary directory");
	}
	return tap_done();
}
