// SPDX-License-Identifier: GPL-2.0
/*
 * The XML documents we read from S3: a ListObjectsV2 result page, an Error
 * body, and the results of the write requests (InitiateMultipartUpload,
 * CompleteMultipartUpload, CopyObject, UploadPartCopy); and the one we
 * write, CompleteMultipartUpload's list of parts. libexpat does the XML;
 * we keep a stack of element names and collect the text of leaves.
 *
 * Documents with a DOCTYPE are refused outright: S3 never sends one, and
 * without a DTD there are no entity declarations to expand, so entity
 * expansion attacks cannot start.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <expat.h>

#include "base.h"
#include "log.h"
#include "path.h"
#include "s3.h"
#include "util.h"
#include "xml.h"

#define XML_DEPTH	8
#define XML_TEXT_MAX	(64U << 10)
/*
 * Deepest nesting accepted: S3's documents go 4 deep (ListBucketResult,
 * Contents, Owner, ID). expat keeps every open element, so a page of 32 MiB
 * of "<a><a><a>..." cost 1.7 GiB before this bound.
 */
#define XML_NEST_MAX	16

struct xml_state {
	XML_Parser parser;
	const char *root;		/* the document element we expect */
	const char *const *roots;	/* ... or any of these (NULL ends) */
	const char *stack[XML_DEPTH];	/* local names of the open elements */
	int depth;			/* may exceed XML_DEPTH; those unnamed */
	struct s3d_buf text;
	char why[128];
	/* ListObjectsV2 */
	struct s3d_list_page *pg;
	size_t objs_cap, prefixes_cap;
	struct s3d_obj cur;
	const char *cur_bad;		/* why @cur is to be skipped, or NULL */
	char cur_badbuf[96];
	bool url_encoded;		/* <EncodingType>url</EncodingType> */
	/* Error */
	struct s3d_s3error *e;
	/* One leaf of a result (UploadId, ETag) */
	const char *leaf;		/* its name, a child of the root */
	char *value;			/* its text, if seen */
	size_t value_max;		/* its longest allowed length */
	bool error_doc;			/* the document was an Error */
};

static void xml_fail(struct xml_state *st, const char *fmt, const char *arg)
{
	if (!st->why[0])
		snprintf(st->why, sizeof(st->why), fmt, arg);
	XML_StopParser(st->parser, XML_FALSE);
}

/* Element names without any namespace prefix. */
static const char *local_name(const char *name)
{
	const char *c = strrchr(name, ':');

	return c ? c + 1 : name;
}

/* The current element is @leaf, a child of @parent, a child of the root. */
static bool at(const struct xml_state *st, const char *parent,
	       const char *leaf)
{
	if (parent)
		return st->depth == 3 && !strcmp(st->stack[1], parent) &&
		       !strcmp(st->stack[2], leaf);
	return st->depth == 2 && !strcmp(st->stack[1], leaf);
}

static bool is_root(const struct xml_state *st, const char *name)
{
	const char *const *r;

	if (st->root && !strcmp(name, st->root))
		return true;
	for (r = st->roots; r && *r; r++)
		if (!strcmp(name, *r))
			return true;
	return false;
}

static void XMLCALL on_start(void *data, const char *name, const char **attr)
{
	struct xml_state *st = data;

	(void)attr;
	if (st->depth == 0 && !is_root(st, local_name(name))) {
		xml_fail(st, "unexpected document element %s", name);
		return;
	}
	if (st->depth >= XML_NEST_MAX) {
		xml_fail(st, "%s", "elements nested too deep (over 16 levels)");
		return;
	}
	if (st->depth < XML_DEPTH)
		st->stack[st->depth] = strdup(local_name(name));
	if (st->depth < XML_DEPTH && !st->stack[st->depth]) {
		xml_fail(st, "%s", "out of memory");
		return;
	}
	st->depth++;
	s3d_buf_reset(&st->text);
}

static void XMLCALL on_text(void *data, const char *s, int len)
{
	struct xml_state *st = data;

	s3d_buf_add(&st->text, s, len);
	if (st->text.err)
		xml_fail(st, "%s", "element text too long");
}

static void XMLCALL on_doctype(void *data, const char *name, const char *sys,
			       const char *pub, int internal)
{
	(void)sys;
	(void)pub;
	(void)internal;
	xml_fail(data, "document type declaration (%s) not allowed", name);
}

static void pop(struct xml_state *st)
{
	st->depth--;
	if (st->depth < XML_DEPTH) {
		free((void *)st->stack[st->depth]);
		st->stack[st->depth] = NULL;
	}
}

static int xml_run(struct xml_state *st, const char *xml, size_t len,
		   XML_EndElementHandler on_end)
{
	int err = 0;

	st->parser = XML_ParserCreate("UTF-8");
	if (!st->parser)
		return -ENOMEM;
	s3d_buf_init(&st->text, XML_TEXT_MAX);
	XML_SetUserData(st->parser, st);
	XML_SetElementHandler(st->parser, on_start, on_end);
	XML_SetCharacterDataHandler(st->parser, on_text);
	XML_SetStartDoctypeDeclHandler(st->parser, on_doctype);
	if (len > INT32_MAX ||
	    XML_Parse(st->parser, xml, (int)len, XML_TRUE) != XML_STATUS_OK) {
		if (!st->why[0])
			snprintf(st->why, sizeof(st->why), "line %lu: %s",
				 XML_GetCurrentLineNumber(st->parser),
				 XML_ErrorString(XML_GetErrorCode(st->parser)));
		err = -EINVAL;
	}
	while (st->depth > 0)
		pop(st);
	XML_ParserFree(st->parser);
	s3d_buf_free(&st->text);
	return err;
}

/* ---- ListObjectsV2 ---- */

static void obj_free(struct s3d_obj *o)
{
	free(o->key);
	free(o->etag);
	memset(o, 0, sizeof(*o));
}

/*
 * One entry of a page cannot be used: log it (once per key, control
 * characters escaped) and count it; the rest of the page stands.
 */
static void skip_entry(struct s3d_list_page *pg, const char *what,
		       const char *key, const char *why)
{
	char esc[256], once[S3D_KEY_MAX + 16];

	pg->nskipped++;
	snprintf(once, sizeof(once), "xml:%s", key ?: "");
	if (!s3d_log_once(once))
		return;
	s3d_escape(key ?: "", esc, sizeof(esc));
	s3d_warn("listing: %s '%s' skipped: %s", what, esc, why);
}

static char *text_dup(struct xml_state *st)
{
	char *s = strdup(s3d_buf_str(&st->text));

	if (!s)
		xml_fail(st, "%s", "out of memory");
	return s;
}

static bool url_decode(char *s);

static void list_add_obj(struct xml_state *st)
{
	struct s3d_list_page *pg = st->pg;

	if (!st->cur_bad && !st->cur.key)
		st->cur_bad = "Contents without Key";
	if (!st->cur_bad && !st->cur.etag)
		st->cur_bad = "no ETag";
	if (st->cur_bad) {
		/* Logged decoded, where it decodes (EncodingType comes first). */
		if (st->url_encoded && st->cur.key) {
			char *k = strdup(st->cur.key);

			if (k && url_decode(k)) {
				free(st->cur.key);
				st->cur.key = k;
			} else {
				free(k);
			}
		}
		skip_entry(pg, "key", st->cur.key, st->cur_bad);
		obj_free(&st->cur);
		st->cur_bad = NULL;
		return;
	}
	if (pg->nobjs == st->objs_cap) {
		size_t cap = st->objs_cap ? st->objs_cap * 2 : 64;
		struct s3d_obj *n = realloc(pg->objs, cap * sizeof(*n));

		if (!n) {
			xml_fail(st, "%s", "out of memory");
			return;
		}
		pg->objs = n;
		st->objs_cap = cap;
	}
	pg->objs[pg->nobjs++] = st->cur;
	memset(&st->cur, 0, sizeof(st->cur));
}

static void list_add_prefix(struct xml_state *st)
{
	struct s3d_list_page *pg = st->pg;
	char *p;

	if (pg->nprefixes == st->prefixes_cap) {
		size_t cap = st->prefixes_cap ? st->prefixes_cap * 2 : 16;
		char **n = realloc(pg->prefixes, cap * sizeof(*n));

		if (!n) {
			xml_fail(st, "%s", "out of memory");
			return;
		}
		pg->prefixes = n;
		st->prefixes_cap = cap;
	}
	p = text_dup(st);
	if (p)
		pg->prefixes[pg->nprefixes++] = p;
}

static void list_obj_field(struct xml_state *st, const char *leaf)
{
	const char *t = s3d_buf_str(&st->text);

	if (!strcmp(leaf, "Key")) {
		free(st->cur.key);
		st->cur.key = text_dup(st);
	} else if (!strcmp(leaf, "ETag")) {
		free(st->cur.etag);
		st->cur.etag = text_dup(st);
		if (st->cur.etag && strlen(st->cur.etag) > S3D_ETAG_MAX)
			st->cur_bad = "ETag too long";
		else if (st->cur.etag &&
			 !s3d_etag_ok(st->cur.etag, st->text.len))
			st->cur_bad = "ETag empty or holding control characters";
	} else if (!strcmp(leaf, "Size")) {
		if (s3d_parse_u64(t, &st->cur.size)) {
			snprintf(st->cur_badbuf, sizeof(st->cur_badbuf),
				 "bad Size '%.40s'", t);
			st->cur_bad = st->cur_badbuf;
		}
	} else if (!strcmp(leaf, "LastModified")) {
		/* Not worth failing a listing over; 0 reads as "unknown". */
		if (s3d_parse_iso8601(t, &st->cur.mtime))
			st->cur.mtime = 0;
	}
}

static void XMLCALL list_end(void *data, const char *name)
{
	struct xml_state *st = data;
	struct s3d_list_page *pg = st->pg;

	(void)name;
	if (at(st, NULL, "IsTruncated"))
		pg->truncated = !strcmp(s3d_buf_str(&st->text), "true");
	else if (at(st, NULL, "EncodingType"))
		st->url_encoded = !strcmp(s3d_buf_str(&st->text), "url");
	else if (at(st, NULL, "NextContinuationToken")) {
		free(pg->next_token);
		pg->next_token = text_dup(st);
	} else if (at(st, NULL, "Contents")) {
		list_add_obj(st);
	} else if (st->depth == 3 && !strcmp(st->stack[1], "Contents")) {
		list_obj_field(st, st->stack[2]);
	} else if (at(st, "CommonPrefixes", "Prefix")) {
		list_add_prefix(st);
	}
	pop(st);
}

/*
 * In place, as S3 encodes with encoding-type=url (form encoding: '+' is a
 * space, %XX a byte). Returns false on a malformed escape or a NUL byte.
 */
static bool url_decode(char *s)
{
	char *d = s;

	for (; *s; s++) {
		if (*s == '+') {
			*d++ = ' ';
		} else if (*s == '%') {
			int hi = s3d_hexval(s[1]), lo = hi < 0 ? -1 : s3d_hexval(s[2]);

			if (lo < 0 || (hi == 0 && lo == 0))
				return false;
			*d++ = (char)(hi << 4 | lo);
			s += 2;
		} else {
			*d++ = *s;
		}
	}
	*d = '\0';
	return true;
}

/*
 * Keys and common prefixes of a page the server says it url-encoded; one
 * that does not decode is dropped from the page (and logged).
 */
static void list_decode(struct s3d_list_page *pg)
{
	size_t i, j;

	for (i = j = 0; i < pg->nobjs; i++) {
		if (!url_decode(pg->objs[i].key)) {
			skip_entry(pg, "key", pg->objs[i].key,
				   "bad url encoding");
			obj_free(&pg->objs[i]);
			continue;
		}
		pg->objs[j++] = pg->objs[i];
	}
	pg->nobjs = j;
	for (i = j = 0; i < pg->nprefixes; i++) {
		if (!url_decode(pg->prefixes[i])) {
			skip_entry(pg, "common prefix", pg->prefixes[i],
				   "bad url encoding");
			free(pg->prefixes[i]);
			continue;
		}
		pg->prefixes[j++] = pg->prefixes[i];
	}
	pg->nprefixes = j;
}

void s3d_list_page_free(struct s3d_list_page *pg)
{
	size_t i;

	for (i = 0; i < pg->nobjs; i++)
		obj_free(&pg->objs[i]);
	for (i = 0; i < pg->nprefixes; i++)
		free(pg->prefixes[i]);
	free(pg->objs);
	free(pg->prefixes);
	free(pg->next_token);
	memset(pg, 0, sizeof(*pg));
}

/**
 * s3d_xml_parse_list() - parse one ListObjectsV2 result page
 * @xml: the response body
 * @len: its length
 * @pg: filled (free with s3d_list_page_free() whatever the result)
 * @why: a reason on failure
 * @whylen: size of @why
 *
 * Keys come back decoded: entities resolved, and url-decoded if the page
 * says <EncodingType>url</EncodingType>. One entry that cannot be used (a
 * bad url escape or an encoded NUL, a bad Size, no Key, no ETag or one too
 * long) is left out of @pg, logged once (control characters escaped) and
 * counted in @pg->nskipped: one bad key must not hide a directory.
 *
 * Return: 0 or -EINVAL (not a listing, malformed XML, refused) or -ENOMEM.
 */
int s3d_xml_parse_list(const char *xml, size_t len, struct s3d_list_page *pg,
		       char *why, size_t whylen)
{
	struct xml_state st = { .root = "ListBucketResult", .pg = pg };
	int err;

	memset(pg, 0, sizeof(*pg));
	err = xml_run(&st, xml, len, list_end);
	obj_free(&st.cur);
	/*
	 * We ask for encoding-type=url (keys may hold bytes XML 1.0 cannot
	 * carry); servers that ignore it (s3rver) do not say EncodingType,
	 * and their keys are taken as they are.
	 */
	if (!err && st.url_encoded)
		list_decode(pg);
	if (!err && pg->truncated && (!pg->next_token || !*pg->next_token)) {
		snprintf(st.why, sizeof(st.why),
			 "IsTruncated without NextContinuationToken");
		err = -EINVAL;
	}
	if (err && why)
		snprintf(why, whylen, "%s", st.why);
	return err;
}

/* ---- Error ---- */

static void XMLCALL error_end(void *data, const char *name)
{
	struct xml_state *st = data;
	const char *t = s3d_buf_str(&st->text);

	(void)name;
	if (at(st, NULL, "Code"))
		snprintf(st->e->code, sizeof(st->e->code), "%s", t);
	else if (at(st, NULL, "Message"))
		snprintf(st->e->message, sizeof(st->e->message), "%s", t);
	else if (at(st, NULL, "RequestId"))
		snprintf(st->e->request_id, sizeof(st->e->request_id), "%s", t);
	pop(st);
}

/**
 * s3d_xml_parse_error() - parse an S3 Error body
 * @xml: the body
 * @len: its length
 * @e: Code, Message and RequestId (each truncated to fit; empty if absent)
 *
 * Return: 0 or -EINVAL (not an Error document; @e is then all empty).
 */
int s3d_xml_parse_error(const char *xml, size_t len, struct s3d_s3error *e)
{
	struct xml_state st = { .root = "Error", .e = e };
	int err;

	memset(e, 0, sizeof(*e));
	err = xml_run(&st, xml, len, error_end);
	if (err)
		memset(e, 0, sizeof(*e));
	return err;
}

/* ---- the results of the write requests ---- */

/* Writes to S3 can take a while: it sends spaces before the document. */
static size_t skip_space(const char *xml, size_t len)
{
	size_t i = 0;

	while (i < len && (xml[i] == ' ' || xml[i] == '\t' ||
			   xml[i] == '\r' || xml[i] == '\n'))
		i++;
	return i;
}

static void XMLCALL result_end(void *data, const char *name)
{
	struct xml_state *st = data;
	const char *t = s3d_buf_str(&st->text);

	(void)name;
	if (st->e && !strcmp(st->stack[0], "Error")) {
		st->error_doc = st->depth == 1;
		error_end(data, name);
		return;
	}
	if (at(st, NULL, st->leaf)) {
		if (st->value) {
			xml_fail(st, "more than one %s", st->leaf);
		} else if (!*t || strlen(t) > st->value_max) {
			xml_fail(st, "%s empty or too long", st->leaf);
		} else if (!s3d_etag_ok(t, st->text.len)) {
			/* An ETag or UploadId: sent back in headers, logged. */
			xml_fail(st, "%s holds control characters", st->leaf);
		} else {
			st->value = strdup(t);
			if (!st->value)
				xml_fail(st, "%s", "out of memory");
		}
	}
	pop(st);
}

/*
 * A result document (one of @roots) whose @leaf we want, or, if @e is
 * given, an Error document in its place (what S3 sends inside a 200 when a
 * long request fails after the status went out).
 */
static int parse_result(const char *xml, size_t len,
			const char *const *roots, const char *leaf,
			char *out, size_t outlen, struct s3d_s3error *e,
			char *why, size_t whylen)
{
	struct xml_state st = { .roots = roots, .leaf = leaf,
				.value_max = outlen - 1, .e = e };
	size_t skip = skip_space(xml, len);
	int err;

	if (e) {
		memset(e, 0, sizeof(*e));
		st.root = "Error";
	}
	out[0] = '\0';
	xml += skip;
	len -= skip;
	err = xml_run(&st, xml, len, result_end);
	if (!err && st.error_doc)
		err = -EREMOTEIO;
	if (!err && !st.value) {
		snprintf(st.why, sizeof(st.why), "no %s", leaf);
		err = -EINVAL;
	}
	if (!err)
		snprintf(out, outlen, "%s", st.value);
	else if (why && err != -EREMOTEIO)
		snprintf(why, whylen, "%s", st.why);
	if (err && err != -EREMOTEIO && e)
		memset(e, 0, sizeof(*e));
	free(st.value);
	return err;
}

/**
 * s3d_xml_parse_initiate() - the UploadId of an InitiateMultipartUploadResult
 * @xml: the body of CreateMultipartUpload's 200
 * @len: its length
 * @upload_id: out: the id (entities decoded)
 * @idlen: its size; an id that does not fit is refused
 * @why: a reason on failure (may be NULL)
 * @whylen: size of @why
 *
 * Return: 0, or -EINVAL (not that document, malformed, no UploadId, an
 * empty one, one too long, two of them) or -ENOMEM.
 */
int s3d_xml_parse_initiate(const char *xml, size_t len, char *upload_id,
			   size_t idlen, char *why, size_t whylen)
{
	static const char *const roots[] = {
		"InitiateMultipartUploadResult", NULL,
	};

	return parse_result(xml, len, roots, "UploadId", upload_id, idlen,
			    NULL, why, whylen);
}

/**
 * s3d_xml_parse_complete() - the ETag of a CompleteMultipartUploadResult,
 *	or the Error S3 sent in its place
 * @xml: the body of CompleteMultipartUpload's 200 (leading spaces allowed:
 *	S3 sends them while it assembles the object)
 * @len: its length
 * @etag: out: the new object's ETag, quotes kept, at most S3D_ETAG_MAX
 * @etaglen: its size (S3D_ETAG_MAX + 1)
 * @e: out: Code, Message and RequestId when the body is an Error
 * @why: a reason on -EINVAL (may be NULL)
 * @whylen: size of @why
 *
 * A 200 does not mean the upload completed: S3 may put an Error document
 * in it (InternalError: retry; anything else: failed).
 *
 * Return: 0 (@etag set), -EREMOTEIO (an Error document: see @e), -EINVAL
 * (anything else, or no ETag), -ENOMEM.
 */
int s3d_xml_parse_complete(const char *xml, size_t len, char *etag,
			   size_t etaglen, struct s3d_s3error *e, char *why,
			   size_t whylen)
{
	static const char *const roots[] = {
		"CompleteMultipartUploadResult", NULL,
	};

	return parse_result(xml, len, roots, "ETag", etag,
			    S3D_MIN(etaglen, (size_t)S3D_ETAG_MAX + 1), e, why,
			    whylen);
}

/**
 * s3d_xml_parse_copy() - the ETag of a CopyObjectResult or CopyPartResult,
 *	or the Error S3 sent in its place
 * @xml: the body of CopyObject's or UploadPartCopy's 200
 * @len: its length
 * @etag: out: the ETag of the copy (the object or the part), quotes kept
 * @etaglen: its size (S3D_ETAG_MAX + 1)
 * @e: out: the Error, as for s3d_xml_parse_complete()
 * @why: a reason on -EINVAL (may be NULL)
 * @whylen: size of @why
 *
 * Return: as s3d_xml_parse_complete().
 */
int s3d_xml_parse_copy(const char *xml, size_t len, char *etag,
		       size_t etaglen, struct s3d_s3error *e, char *why,
		       size_t whylen)
{
	static const char *const roots[] = {
		"CopyObjectResult", "CopyPartResult", NULL,
	};

	return parse_result(xml, len, roots, "ETag", etag,
			    S3D_MIN(etaglen, (size_t)S3D_ETAG_MAX + 1), e, why,
			    whylen);
}

/* Text for an element: the five XML specials as entities. */
static void xml_escape(struct s3d_buf *b, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': s3d_buf_adds(b, "&amp;"); break;
		case '<': s3d_buf_adds(b, "&lt;"); break;
		case '>': s3d_buf_adds(b, "&gt;"); break;
		case '"': s3d_buf_adds(b, "&quot;"); break;
		case '\'': s3d_buf_adds(b, "&apos;"); break;
		default: s3d_buf_addc(b, *s); break;
		}
	}
}

/* XML 1.0 cannot carry control characters but tab, CR and LF. */
static bool xml_text_ok(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 && *s != '\t' && *s != '\n' &&
		    *s != '\r')
			return false;
	return true;
}

/**
 * s3d_xml_build_complete() - the body of a CompleteMultipartUpload
 * @out: the document is appended (an empty, initialized buffer)
 * @parts: the parts, by number, each with the ETag UploadPart answered
 * @n: their number
 *
 * Return: 0, -EINVAL (no part, more than S3D_PARTS_MAX, numbers not
 * strictly ascending in 1..S3D_PARTS_MAX, an ETag empty, too long or
 * holding a control character) or -ENOMEM.
 */
int s3d_xml_build_complete(struct s3d_buf *out, const struct s3d_part *parts,
			   size_t n)
{
	size_t i;

	if (!n || n > S3D_PARTS_MAX)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		const struct s3d_part *p = &parts[i];

		if (!p->number || p->number > S3D_PARTS_MAX ||
		    (i && p->number <= parts[i - 1].number) || !p->etag ||
		    !*p->etag || strlen(p->etag) > S3D_ETAG_MAX ||
		    !xml_text_ok(p->etag))
			return -EINVAL;
	}
	s3d_buf_adds(out, "<CompleteMultipartUpload "
		     "xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">");
	for (i = 0; i < n; i++) {
		s3d_buf_addf(out, "<Part><PartNumber>%u</PartNumber><ETag>",
			     parts[i].number);
		xml_escape(out, parts[i].etag);
		s3d_buf_adds(out, "</ETag></Part>");
	}
	s3d_buf_adds(out, "</CompleteMultipartUpload>");
	return out->err;
}
