/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Private to creds*.c: providers as small state machines, so the same code
 * runs synchronously (s3d_creds_resolve(): curl_easy_perform) and on the
 * event loop (a refresh: curl multi driven from epoll).
 */
#ifndef S3D_CREDS_INT_H
#define S3D_CREDS_INT_H

#include <stdbool.h>

#include <curl/curl.h>

#include "creds.h"
#include "util.h"

#define CREDS_RESP_MAX		(64U << 10)
#define CREDS_WHY_MAX		512

/* A provider step's answer: the request in job->h is to be sent. */
#define CREDS_MORE		1

/* One HTTP request of a provider, and its outcome. */
struct creds_http {
	const char *method;		/* "GET", "PUT" or "POST" */
	char *url;
	struct curl_slist *headers;
	char *body;			/* POST form, or NULL */
	long connect_ms;
	long timeout_ms;
	bool direct;			/* never through a proxy */
	CURL *easy;			/* while in flight on the loop */
	/* outcome */
	CURLcode cres;
	char errbuf[CURL_ERROR_SIZE];
	long status;
	struct s3d_buf resp;
};

/* What the shared config and credentials files say about one profile. */
struct creds_profile {
	const char *name;
	bool named;			/* chosen, not the implicit default */
	bool explicit;			/* named by the caller, not $AWS_PROFILE */
	bool found;			/* a section for it exists */
	char *ak, *sk, *token;
	bool keys_from_config;
	char *web_identity_token_file;
	char *role_arn;
	char *role_session_name;
	char *region;
	char *source_profile;
	char *credential_process;
	char cred_file[4096];
	char config_file[4096];
};

struct creds_job {
	const struct s3d_creds_provider *p;
	struct creds_profile *prof;
	int step;			/* provider private */
	bool fatal;			/* -ENOENT that stops the chain */
	struct creds_http h;
	char *imds_token;
	struct s3d_creds out;
	char why[CREDS_WHY_MAX];	/* what the provider said */
};

/**
 * struct s3d_creds_provider - one link of the chain
 * @name: for logs
 * @start: look at the configuration; fill @j->out (return 0), or build the
 *	first request in @j->h (return CREDS_MORE), or -ENOENT when not
 *	configured, or another -errno. Never does network I/O itself.
 * @step: the request in @j->h is over; same returns as @start.
 */
struct s3d_creds_provider {
	const char *name;
	int (*start)(struct creds_job *j);
	int (*step)(struct creds_job *j);
};

extern const struct s3d_creds_provider creds_env, creds_shared,
	creds_web_identity, creds_container, creds_imds;
extern const struct s3d_creds_provider *const *const creds_chain;
extern const size_t creds_chain_len;

void creds_why(struct creds_job *j, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int creds_set(struct s3d_creds *c, const char *ak, const char *sk,
	      const char *token, time_t expires, const char *source);
void creds_move(struct s3d_creds *dst, struct s3d_creds *src);
void creds_free_secret(char *s);

int creds_profile_load(struct creds_profile *p, const char *name,
		       char *why, size_t whylen);
void creds_profile_free(struct creds_profile *p);

void creds_job_init(struct creds_job *j, const struct s3d_creds_provider *p,
		    struct creds_profile *prof);
void creds_job_fini(struct creds_job *j);
int creds_job_next(struct creds_job *j);

CURL *creds_http_easy(struct creds_http *h);
void creds_http_reset(struct creds_http *h);
void creds_http_finish(struct creds_http *h, CURLcode res);

void creds_watch_rearm(struct s3d_creds *c);

#endif /* S3D_CREDS_INT_H */
