// SPDX-License-Identifier: GPL-2.0
/*
 * AWS credentials: the standard chain of providers, tried in order, the
 * first one that has credentials wins.
 *
 *   env           AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN
 *   shared files  ~/.aws/credentials ([NAME]) then ~/.aws/config
 *                 ([profile NAME], [default]); AWS_SHARED_CREDENTIALS_FILE,
 *                 AWS_CONFIG_FILE, AWS_PROFILE
 *   web identity  AWS_WEB_IDENTITY_TOKEN_FILE + AWS_ROLE_ARN, or the
 *                 profile's web_identity_token_file + role_arn: STS
 *                 AssumeRoleWithWebIdentity (creds_http.c)
 *   container     AWS_CONTAINER_CREDENTIALS_RELATIVE_URI / _FULL_URI
 *   IMDSv2        EC2 instance metadata (AWS_EC2_METADATA_SERVICE_ENDPOINT,
 *                 AWS_EC2_METADATA_DISABLED)
 *
 * A provider that is not configured passes; one that is configured and
 * fails stops the chain, so a broken web identity setup is an error rather
 * than a silent fall-through to the instance's role. The last three give
 * temporary credentials; creds_watch.c refreshes them before they expire.
 */
#include <errno.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base.h"
#include "creds.h"
#include "creds_int.h"
#include "log.h"
#include "util.h"

void creds_free_secret(char *s)
{
	if (s) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}

static void creds_free_keys(struct s3d_creds *c)
{
	free(c->access_key);
	creds_free_secret(c->secret_key);
	creds_free_secret(c->token);
	c->access_key = c->secret_key = c->token = NULL;
	c->source = NULL;
	c->expires = 0;
	c->provider = NULL;
}

/**
 * s3d_creds_clear() - stop refreshing and free the credentials
 * @c: zeroed afterwards
 */
void s3d_creds_clear(struct s3d_creds *c)
{
	s3d_creds_unwatch(c);
	creds_free_keys(c);
	memset(c, 0, sizeof(*c));
}

/* Replace @dst's keys with @src's (which is left empty); @dst's watch stays. */
void creds_move(struct s3d_creds *dst, struct s3d_creds *src)
{
	creds_free_keys(dst);
	dst->access_key = src->access_key;
	dst->secret_key = src->secret_key;
	dst->token = src->token;
	dst->source = src->source;
	dst->expires = src->expires;
	dst->provider = src->provider;
	memset(src, 0, sizeof(*src));
}

/**
 * s3d_creds_copy() - @dst gets a copy of @src's keys (not its watch)
 * @dst: its previous keys are freed; its watch stays
 * @src: a whole set
 *
 * Return: 0 or -ENOMEM (@dst is then empty).
 */
int s3d_creds_copy(struct s3d_creds *dst, const struct s3d_creds *src)
{
	int err = creds_set(dst, src->access_key, src->secret_key, src->token,
			    src->expires, src->source);

	if (!err)
		dst->provider = src->provider;
	return err;
}

int creds_set(struct s3d_creds *c, const char *ak, const char *sk,
	      const char *token, time_t expires, const char *source)
{
	creds_free_keys(c);
	c->access_key = strdup(ak);
	c->secret_key = strdup(sk);
	c->token = token && *token ? strdup(token) : NULL;
	if (!c->access_key || !c->secret_key || (token && *token && !c->token)) {
		creds_free_keys(c);
		return -ENOMEM;
	}
	c->expires = expires;
	c->source = source;
	return 0;
}

void creds_why(struct creds_job *j, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(j->why, sizeof(j->why), fmt, ap);
	va_end(ap);
}

/* ---- env ---- */

/* Return: 0, -ENOENT if the variables are not set, -ENOMEM. */
int s3d_creds_from_env(struct s3d_creds *c)
{
	const char *ak = getenv("AWS_ACCESS_KEY_ID");
	const char *sk = getenv("AWS_SECRET_ACCESS_KEY");

	if (!ak || !*ak || !sk || !*sk)
		return -ENOENT;
	return creds_set(c, ak, sk, getenv("AWS_SESSION_TOKEN"), 0,
			 "environment");
}

static int env_start(struct creds_job *j)
{
	int err;

	/*
	 * A profile the caller names (a config section's) is what they want,
	 * as with the CLI's --profile: keys in the environment (a systemd
	 * unit's, say) must not quietly stand in for it. $AWS_PROFILE does
	 * not count: there the environment's keys still win.
	 */
	if (j->prof->explicit) {
		creds_why(j, "skipped: profile '%s' asked for", j->prof->name);
		return -ENOENT;
	}
	err = s3d_creds_from_env(&j->out);

	if (err == -ENOENT)
		creds_why(j, "AWS_ACCESS_KEY_ID%s not set",
			  getenv("AWS_ACCESS_KEY_ID") ?
			  "" : "/AWS_SECRET_ACCESS_KEY");
	return err;
}

const struct s3d_creds_provider creds_env = {
	.name = "environment",
	.start = env_start,
};

/* ---- shared files ---- */

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' ||
			 e[-1] == '\r'))
		*--e = '\0';
	return s;
}

struct ini_scan {
	const char *file;
	bool config;		/* sections are "profile NAME" (and "default") */
	struct creds_profile *p;
	char *why;
	size_t whylen;
};

static bool section_matches(const struct ini_scan *s, const char *sec)
{
	const char *name = s->p->name;

	if (!s->config)
		return !strcmp(sec, name);
	if (!strcmp(sec, "default"))
		return !strcmp(name, "default");
	if (strncmp(sec, "profile", 7) || (sec[7] != ' ' && sec[7] != '\t'))
		return false;
	sec += 7;
	while (*sec == ' ' || *sec == '\t')
		sec++;
	return !strcmp(sec, name);
}

static int store_kv(struct ini_scan *s, const char *name, const char *value)
{
	static const struct {
		const char *key;
		size_t off;
	} keys[] = {
		{ "aws_access_key_id", offsetof(struct creds_profile, ak) },
		{ "aws_secret_access_key", offsetof(struct creds_profile, sk) },
		{ "aws_session_token", offsetof(struct creds_profile, token) },
		{ "web_identity_token_file",
		  offsetof(struct creds_profile, web_identity_token_file) },
		{ "role_arn", offsetof(struct creds_profile, role_arn) },
		{ "role_session_name",
		  offsetof(struct creds_profile, role_session_name) },
		{ "region", offsetof(struct creds_profile, region) },
		{ "source_profile",
		  offsetof(struct creds_profile, source_profile) },
		{ "credential_process",
		  offsetof(struct creds_profile, credential_process) },
	};
	size_t i;

	for (i = 0; i < S3D_ARRAY_SIZE(keys); i++) {
		char **slot = (char **)((char *)s->p + keys[i].off);

		if (strcmp(name, keys[i].key))
			continue;
		creds_free_secret(*slot);
		*slot = strdup(value);
		if (!*slot)
			return -ENOMEM;
		if (i < 3)
			s->p->keys_from_config = s->config;
		return 0;
	}
	return 0;
}

/*
 * The subset of INI the AWS CLI reads: [section], key = value, full-line
 * # and ; comments, and indented "sub = value" lines below a key with an
 * empty value (nested settings such as s3 =, skipped). Anything else is a
 * syntax error, reported as file:line: the CLI refuses such files too.
 * Not libinih: Debian's build truncates lines at 200 bytes (INI_MAX_LINE)
 * without telling the caller, and session tokens are around a kilobyte.
 *
 * Return: 0, -ENOENT if the file does not exist, -EINVAL, -errno.
 */
static int parse_ini(struct ini_scan *s)
{
	char *line = NULL, *t, *eq;
	size_t cap = 0;
	int lineno = 0, err = 0;
	bool in = false, nested = false;
	FILE *f;

	f = fopen(s->file, "re");
	if (!f) {
		err = -errno;
		if (err != -ENOENT)
			snprintf(s->why, s->whylen, "%s: %s", s->file,
				 strerror(-err));
		return err;
	}
	while (!err && getline(&line, &cap, f) >= 0) {
		bool indented = line[0] == ' ' || line[0] == '\t';

		lineno++;
		t = trim(line);
		if (!*t || *t == '#' || *t == ';')
			continue;
		if (*t == '[') {
			char *end = strchr(t, ']');

			if (!end || *trim(end + 1)) {
				snprintf(s->why, s->whylen,
					 "%s:%d: bad section header",
					 s->file, lineno);
				err = -EINVAL;
				break;
			}
			*end = '\0';
			in = section_matches(s, trim(t + 1));
			s->p->found |= in;
			nested = false;
			continue;
		}
		eq = strchr(t, '=');
		if (!eq || eq == t) {
			snprintf(s->why, s->whylen,
				 "%s:%d: expected 'name = value'", s->file,
				 lineno);
			err = -EINVAL;
			break;
		}
		if (indented && nested)
			continue;
		*eq = '\0';
		nested = !*trim(eq + 1);
		if (in)
			err = store_kv(s, trim(t), trim(eq + 1));
	}
	if (line)
		explicit_bzero(line, cap);
	free(line);
	fclose(f);
	return err;
}

static int home_file(char *out, size_t len, const char *env, const char *rel)
{
	const char *v = getenv(env), *home;
	struct passwd *pw;

	if (v && *v) {
		snprintf(out, len, "%s", v);
		return 0;
	}
	home = getenv("HOME");
	if (!home || !*home) {
		pw = getpwuid(getuid());
		home = pw ? pw->pw_dir : NULL;
	}
	if (!home)
		return -ENOENT;
	snprintf(out, len, "%s/%s", home, rel);
	return 0;
}

void creds_profile_free(struct creds_profile *p)
{
	free(p->ak);
	creds_free_secret(p->sk);
	creds_free_secret(p->token);
	free(p->web_identity_token_file);
	free(p->role_arn);
	free(p->role_session_name);
	free(p->region);
	free(p->source_profile);
	free(p->credential_process);
	memset(p, 0, sizeof(*p));
}

/**
 * creds_profile_load() - read one profile from the config and credentials files
 * @p: filled (free with creds_profile_free())
 * @name: the profile; NULL for $AWS_PROFILE or "default"
 * @why: on error, the file:line and what is wrong
 * @whylen: its size
 *
 * The credentials file wins over the config file, key by key.
 *
 * Return: 0 (also when no file has the profile: see @p->found), -EINVAL for
 * a malformed file, -ENOMEM, -errno for an unreadable file.
 */
int creds_profile_load(struct creds_profile *p, const char *name,
		       char *why, size_t whylen)
{
	struct ini_scan s = { .p = p, .why = why, .whylen = whylen };
	const char *env = getenv("AWS_PROFILE");
	int err;

	memset(p, 0, sizeof(*p));
	p->explicit = name && *name;
	p->named = p->explicit || (env && *env);
	p->name = name && *name ? name : env && *env ? env : "default";
	if (!home_file(p->config_file, sizeof(p->config_file),
		       "AWS_CONFIG_FILE", ".aws/config")) {
		s.file = p->config_file;
		s.config = true;
		err = parse_ini(&s);
		if (err && err != -ENOENT)
			return err;
	}
	if (!home_file(p->cred_file, sizeof(p->cred_file),
		       "AWS_SHARED_CREDENTIALS_FILE", ".aws/credentials")) {
		s.file = p->cred_file;
		s.config = false;
		err = parse_ini(&s);
		if (err && err != -ENOENT)
			return err;
	}
	return 0;
}

/**
 * s3d_creds_from_profile() - read a profile from a shared credentials file
 * @c: filled on success
 * @file: the file; NULL for $AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials
 * @profile: the section; NULL for $AWS_PROFILE or "default"
 *
 * Return: 0, -ENOENT (no file, or no such profile with both keys),
 * -EINVAL (malformed file, logged), -ENOMEM.
 */
int s3d_creds_from_profile(struct s3d_creds *c, const char *file,
			   const char *profile)
{
	struct creds_profile p = { 0 };
	struct ini_scan s = { .p = &p, .why = (char[CREDS_WHY_MAX]){ 0 },
			      .whylen = CREDS_WHY_MAX };
	const char *env = getenv("AWS_PROFILE");
	int err;

	p.name = profile && *profile ? profile : env && *env ? env : "default";
	if (file)
		snprintf(p.cred_file, sizeof(p.cred_file), "%s", file);
	else if (home_file(p.cred_file, sizeof(p.cred_file),
			   "AWS_SHARED_CREDENTIALS_FILE", ".aws/credentials"))
		return -ENOENT;
	s.file = p.cred_file;
	err = parse_ini(&s);
	if (err && err != -ENOENT)
		s3d_err("credentials: %s", s.why);
	if (!err && (!p.ak || !p.sk))
		err = -ENOENT;
	if (!err)
		err = creds_set(c, p.ak, p.sk, p.token, 0,
				"shared credentials file");
	if (err == -ENOENT)
		s3d_dbg("no credentials for profile '%s' in %s", p.name,
			p.cred_file);
	creds_profile_free(&p);
	return err;
}

static int shared_start(struct creds_job *j)
{
	struct creds_profile *p = j->prof;

	if (p->ak && p->sk)
		return creds_set(&j->out, p->ak, p->sk, p->token, 0,
				 p->keys_from_config ? "shared config file" :
				 "shared credentials file");
	if (p->named && !p->found) {
		/* The CLI refuses an unknown profile; so do we. */
		creds_why(j, "profile '%s' is in neither %s nor %s", p->name,
			  p->config_file, p->cred_file);
		j->fatal = true;
		return -ENOENT;
	}
	if (p->ak || p->sk) {
		creds_why(j, "profile '%s' has only one of aws_access_key_id and aws_secret_access_key",
			  p->name);
		return -EINVAL;
	}
	if (!p->role_arn && p->credential_process) {
		creds_why(j, "profile '%s': credential_process is not supported",
			  p->name);
		return -EOPNOTSUPP;
	}
	if (p->role_arn && !p->web_identity_token_file) {
		creds_why(j, "profile '%s': role_arn without web_identity_token_file (source_profile, credential_source) is not supported",
			  p->name);
		return -EOPNOTSUPP;
	}
	creds_why(j, "no keys for profile '%s'%s", p->name,
		  p->found ? "" : " (no such profile)");
	return -ENOENT;
}

const struct s3d_creds_provider creds_shared = {
	.name = "shared files",
	.start = shared_start,
};

/* ---- the chain ---- */

static const struct s3d_creds_provider *const chain[] = {
	&creds_env, &creds_shared, &creds_web_identity, &creds_container,
	&creds_imds,
};

const struct s3d_creds_provider *const *const creds_chain = chain;
const size_t creds_chain_len = S3D_ARRAY_SIZE(chain);

void creds_job_init(struct creds_job *j, const struct s3d_creds_provider *p,
		    struct creds_profile *prof)
{
	memset(j, 0, sizeof(*j));
	j->p = p;
	j->prof = prof;
	s3d_buf_init(&j->h.resp, CREDS_RESP_MAX);
}

void creds_job_fini(struct creds_job *j)
{
	creds_http_reset(&j->h);
	s3d_buf_free(&j->h.resp);
	creds_free_secret(j->imds_token);
	creds_free_keys(&j->out);
	memset(j, 0, sizeof(*j));
}

/* Run the next step: the provider's start, or its step after a request. */
int creds_job_next(struct creds_job *j)
{
	int err;

	if (!j->h.url) {
		err = j->p->start(j);
	} else {
		err = j->p->step ? j->p->step(j) : -EINVAL;
	}
	if (!err)
		j->out.provider = j->p;
	return err;
}

static int run_sync(struct creds_job *j)
{
	int err = creds_job_next(j);

	while (err == CREDS_MORE) {
		CURL *e = creds_http_easy(&j->h);

		if (!e)
			return -ENOMEM;
		creds_http_finish(&j->h, curl_easy_perform(e));
		err = creds_job_next(j);
	}
	return err;
}

/**
 * s3d_creds_resolve_why() - run the provider chain, synchronously
 * @c: filled on success (previous keys freed); untouched on failure
 * @profile: profile in the shared files; NULL for $AWS_PROFILE or "default".
 *	A profile named here also skips the environment's keys (as the
 *	CLI's --profile does).
 * @why: on failure, what each provider said ("environment: ...; IMDS:
 *	..."), for a message to the user; may be NULL
 * @whylen: its size
 *
 * For startup, SIGHUP and s3cachectl: it may wait for the network (STS,
 * container endpoint, instance metadata; the latter with a 1 s connect
 * timeout so a host that is not on EC2 falls through quickly). If @c is
 * watched, its refresh is re-armed for the new expiry.
 *
 * Return: 0; -ENOENT if no provider has credentials (none is configured,
 * there is no instance metadata service, or a named profile does not
 * exist); any other -errno means a provider is configured but failed
 * (-EACCES refused, -EIO/-ETIMEDOUT unreachable or a server error,
 * -EBADMSG bad reply, -EINVAL/-EOPNOTSUPP a bad or unsupported setup).
 * Failures are logged with what each provider said.
 */
int s3d_creds_resolve_why(struct s3d_creds *c, const char *profile,
			  char *why, size_t whylen)
{
	struct s3d_buf said;
	struct creds_profile prof;
	struct creds_job j;
	char pwhy[CREDS_WHY_MAX] = "";
	size_t i;
	int err;

	if (why && whylen)
		why[0] = '\0';
	s3d_buf_init(&said, 0);
	err = creds_profile_load(&prof, profile, pwhy, sizeof(pwhy));
	if (err) {
		s3d_err("credentials: %s", pwhy[0] ? pwhy : strerror(-err));
		if (why && whylen)
			snprintf(why, whylen, "shared files: %s",
				 pwhy[0] ? pwhy : strerror(-err));
		creds_profile_free(&prof);
		s3d_buf_free(&said);
		return err;
	}
	err = -ENOENT;
	for (i = 0; i < S3D_ARRAY_SIZE(chain); i++) {
		creds_job_init(&j, chain[i], &prof);
		err = run_sync(&j);
		if (!err)
			break;
		s3d_buf_addf(&said, "%s%s: %s", said.len ? "; " : "",
			     chain[i]->name, j.why[0] ? j.why : strerror(-err));
		if (err != -ENOENT || j.fatal)
			break;
		creds_job_fini(&j);
	}
	if (err) {
		s3d_err("no AWS credentials for profile '%s': %s", prof.name,
			s3d_buf_str(&said));
		if (why && whylen)
			snprintf(why, whylen, "%s", s3d_buf_str(&said));
	} else {
		if (said.len)
			s3d_dbg("credentials: %s", s3d_buf_str(&said));
		creds_move(c, &j.out);
		if (c->watcher)
			creds_watch_rearm(c);
	}
	if (i < S3D_ARRAY_SIZE(chain))
		creds_job_fini(&j);
	creds_profile_free(&prof);
	s3d_buf_free(&said);
	return err;
}

/**
 * s3d_creds_resolve() - s3d_creds_resolve_why() without the explanation
 * @c: filled on success (previous keys freed); untouched on failure
 * @profile: as for s3d_creds_resolve_why()
 *
 * Return: as s3d_creds_resolve_why().
 */
int s3d_creds_resolve(struct s3d_creds *c, const char *profile)
{
	return s3d_creds_resolve_why(c, profile, NULL, 0);
}

/**
 * s3d_creds_load() - run the provider chain for $AWS_PROFILE or "default"
 * @c: filled on success (previous keys freed); untouched on failure
 *
 * Return: as s3d_creds_resolve().
 */
int s3d_creds_load(struct s3d_creds *c)
{
	return s3d_creds_resolve(c, NULL);
}
