// SPDX-License-Identifier: GPL-2.0
/*
 * AWS credentials: a chain of providers, tried in order, first one wins.
 *
 *   env      AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN
 *   profile  AWS_SHARED_CREDENTIALS_FILE (default ~/.aws/credentials),
 *            section AWS_PROFILE (default "default")
 *
 * The production chain (web identity token, EC2/ECS instance metadata)
 * slots in as further entries of providers[]; those credentials expire, so
 * the loader is also what SIGHUP (and later a refresh timer) calls.
 */
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "s3cachefsd.h"

static void free_secret(char *s)
{
	if (s) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}

void s3d_creds_clear(struct s3d_creds *c)
{
	free(c->access_key);
	free_secret(c->secret_key);
	free_secret(c->token);
	memset(c, 0, sizeof(*c));
}

static int creds_set(struct s3d_creds *c, const char *ak, const char *sk,
		     const char *token, const char *source)
{
	s3d_creds_clear(c);
	c->access_key = strdup(ak);
	c->secret_key = strdup(sk);
	c->token = token && *token ? strdup(token) : NULL;
	if (!c->access_key || !c->secret_key || (token && *token && !c->token)) {
		s3d_creds_clear(c);
		return -ENOMEM;
	}
	c->source = source;
	return 0;
}

/* Return: 0, -ENOENT if the variables are not set, -ENOMEM. */
int s3d_creds_from_env(struct s3d_creds *c)
{
	const char *ak = getenv("AWS_ACCESS_KEY_ID");
	const char *sk = getenv("AWS_SECRET_ACCESS_KEY");

	if (!ak || !*ak || !sk || !*sk)
		return -ENOENT;
	return creds_set(c, ak, sk, getenv("AWS_SESSION_TOKEN"), "environment");
}

struct profile_scan {
	const char *profile;
	char *ak, *sk, *token;
	int err;
};

static int scan_kv(struct profile_scan *ps, const char *section,
		   const char *name, const char *value)
{
	char **slot = NULL;

	if (strcmp(section, ps->profile))
		return 1;
	if (!strcmp(name, "aws_access_key_id"))
		slot = &ps->ak;
	else if (!strcmp(name, "aws_secret_access_key"))
		slot = &ps->sk;
	else if (!strcmp(name, "aws_session_token"))
		slot = &ps->token;
	if (!slot)
		return 1;
	free_secret(*slot);
	*slot = strdup(value);
	if (!*slot) {
		ps->err = -ENOMEM;
		return 0;
	}
	return 1;
}

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

/*
 * The subset of INI the AWS CLI writes: [section], key = value, full-line
 * # and ; comments. Not libinih: Debian's build truncates lines at 200
 * bytes (INI_MAX_LINE) without telling the caller, and session tokens are
 * around a kilobyte, so it would hand back a silently corrupted token.
 */
static int parse_ini(const char *file, struct profile_scan *ps)
{
	char *line = NULL, section[256] = "", *s, *eq;
	size_t cap = 0;
	int lineno = 0;
	FILE *f;

	f = fopen(file, "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) >= 0) {
		lineno++;
		s = trim(line);
		if (!*s || *s == '#' || *s == ';')
			continue;
		if (*s == '[') {
			char *end = strchr(s, ']');

			if (!end) {
				s3d_warn("%s: syntax error on line %d (ignored)",
					 file, lineno);
				continue;
			}
			*end = '\0';
			snprintf(section, sizeof(section), "%s", trim(s + 1));
			continue;
		}
		eq = strchr(s, '=');
		if (!eq)
			continue;
		*eq = '\0';
		if (!scan_kv(ps, section, trim(s), trim(eq + 1)))
			break;
	}
	if (line)
		explicit_bzero(line, cap);
	free(line);
	fclose(f);
	return ps->err;
}

/**
 * s3d_creds_from_profile() - read a profile from a shared credentials file
 * @c: filled on success
 * @file: the file; NULL for $AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials
 * @profile: the section; NULL for $AWS_PROFILE or "default"
 *
 * Return: 0, -ENOENT (no file, or no such profile with both keys), -ENOMEM.
 */
int s3d_creds_from_profile(struct s3d_creds *c, const char *file,
			   const char *profile)
{
	struct profile_scan ps = { 0 };
	char path[4096];
	int err;

	if (!file)
		file = getenv("AWS_SHARED_CREDENTIALS_FILE");
	if (!file) {
		const char *home = getenv("HOME");
		struct passwd *pw;

		if (!home) {
			pw = getpwuid(getuid());
			home = pw ? pw->pw_dir : NULL;
		}
		if (!home)
			return -ENOENT;
		snprintf(path, sizeof(path), "%s/.aws/credentials", home);
		file = path;
	}
	if (!profile)
		profile = getenv("AWS_PROFILE");
	if (!profile || !*profile)
		profile = "default";
	ps.profile = profile;

	err = parse_ini(file, &ps);
	if (!err && (!ps.ak || !ps.sk))
		err = -ENOENT;
	if (!err)
		err = creds_set(c, ps.ak, ps.sk, ps.token, "shared credentials file");
	if (err == -ENOENT)
		s3d_dbg("no credentials for profile '%s' in %s", profile, file);
	free(ps.ak);
	free_secret(ps.sk);
	free_secret(ps.token);
	return err;
}

static int from_profile_default(struct s3d_creds *c)
{
	return s3d_creds_from_profile(c, NULL, NULL);
}

static const struct {
	const char *name;
	int (*load)(struct s3d_creds *c);
} providers[] = {
	{ "environment", s3d_creds_from_env },
	{ "profile", from_profile_default },
	/* later: web identity (AWS_WEB_IDENTITY_TOKEN_FILE), ECS, IMDSv2 */
};

/**
 * s3d_creds_load() - run the provider chain
 * @c: filled on success (previous contents freed)
 *
 * Return: 0, -ENOENT if no provider had credentials, -ENOMEM.
 */
int s3d_creds_load(struct s3d_creds *c)
{
	struct s3d_creds n = { 0 };
	size_t i;
	int err;

	for (i = 0; i < S3D_ARRAY_SIZE(providers); i++) {
		err = providers[i].load(&n);
		if (err == -ENOENT)
			continue;
		if (err < 0) {
			s3d_err("credentials from %s: %s", providers[i].name,
				strerror(-err));
			return err;
		}
		s3d_creds_clear(c);
		*c = n;
		return 0;
	}
	return -ENOENT;
}
