// SPDX-License-Identifier: GPL-2.0
/*
 * Credentials: environment first, then the shared credentials file
 * (profile selection, comments, long session tokens).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "s3cachefsd.h"
#include "tap.h"

static char file[] = "/tmp/s3d-test-creds-XXXXXX";
static char token[2001];

static void write_file(void)
{
	FILE *f;
	int fd;

	fd = mkstemp(file);
	f = fdopen(fd, "w");
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
		"aws_access_key_id = AKIDHALF\n",
		token);
	fclose(f);
}

static void test_profiles(void)
{
	struct s3d_creds c = { 0 };

	is_int(s3d_creds_from_profile(&c, file, NULL), 0, "profile: default");
	is_str(c.access_key, "AKIDDEFAULT", "profile: default key id");
	is_str(c.secret_key, "secret/with+chars=", "profile: default secret");
	ok(!c.token, "profile: default has no token");

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
	s3d_creds_clear(&c);
}

static void test_chain(void)
{
	struct s3d_creds c = { 0 };

	unsetenv("AWS_PROFILE");
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

	setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent", 1);
	is_int(s3d_creds_load(&c), -ENOENT, "chain: nothing anywhere");
	ok(c.access_key && !strcmp(c.access_key, "AKIDDEFAULT"),
	   "chain: a failed load keeps the previous credentials");
	s3d_creds_clear(&c);
	unsetenv("AWS_ACCESS_KEY_ID");
	unsetenv("AWS_SESSION_TOKEN");
	unsetenv("AWS_SHARED_CREDENTIALS_FILE");
}

int main(void)
{
	s3d_log_level = S3D_LOG_ERR;
	write_file();
	test_profiles();
	test_chain();
	unlink(file);
	return tap_done();
}
