#!/usr/bin/env node
// SPDX-License-Identifier: GPL-2.0
//
// sigv4-vectors.js - S3 requests signed by an independent SigV4
// implementation (@smithy/signature-v4, the signer of the AWS SDK for
// JavaScript v3), to cross-check s3cachefsd's s3d_s3_build()/s3d_sigv4().
//
//   sigv4-vectors.js gen SEED COUNT > VECTORS.jsonl
//   sigv4-vectors.js cinput VECTORS.jsonl > INPUT      (for sigv4-check)
//   sigv4-vectors.js compare VECTORS.jsonl C-OUTPUT    (TAP; exit 1 on mismatch)
//   sigv4-vectors.js known      (smithy's Authorization for the S3 docs example)
//
// Requests are pseudo-random but fully determined by SEED: GET/HEAD of
// keys with spaces, UTF-8, reserved characters, "//" and leading slashes;
// ListObjectsV2 queries; Range/If-Match headers; the write requests (PUT
// with Content-Length/-Type, If-None-Match/If-Match and x-amz-meta-*, the
// multipart subresources ?uploads, ?partNumber&uploadId, ?uploadId, DELETE,
// copies with x-amz-copy-source[-range]); session tokens; regions,
// dates, endpoints, path and virtual-host style; UNSIGNED-PAYLOAD or a
// hashed body. The path is encoded the way the AWS SDK encodes an S3 key
// (each segment with escapeUri, '/' kept) and signed with uriEscapePath
// false: S3 neither double-encodes nor normalizes the canonical URI.
'use strict';

const crypto = require('node:crypto');
const fs = require('node:fs');
const { SignatureV4 } = require('@smithy/signature-v4');
const { getCanonicalHeaders } = require('@smithy/signature-v4');
const { Sha256 } = require('@aws-crypto/sha256-js');
const { escapeUri } = require('@smithy/util-uri-escape');

// mulberry32: a small seeded PRNG, so a seed names one vector set.
function prng(seed) {
	let a = seed >>> 0;
	return () => {
		a = (a + 0x6d2b79f5) >>> 0;
		let t = a;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
}

const CLASSES = ['get', 'get-range', 'head', 'list', 'payload', 'put',
	'multipart', 'delete', 'copy'];
// Object metadata as the write path will send it (one of each at most:
// a repeated name is one header of joined values, which smithy's header
// object cannot express).
const META = ['x-amz-meta-mode', 'X-Amz-Meta-Uid', 'x-amz-meta-gid',
	'x-amz-meta-mtime', 'x-amz-meta-s3cachefs-upload', 'x-amz-meta-note'];
const META_VALUES = ['33188', '0', '1700000000.123456789', ' a  b ', '',
	'caf\u00e9 \u65e5\u672c', 'x=y;z', '"q"'];
const PIECES = [
	'a', 'b', 'dir', 'file.txt', 'x-y_z', ' ', 'two  spaces', '+', '=', '%',
	'%20', '%2F', '~', '/', '//', '!', '*', "'", '(', ')', '&', '?', '#', ':',
	'@', ',', ';', '$', '[', ']', '"', '<', '>', '\\', '^', '`', '{', '|', '}',
	'é', 'ñ', '日本語', 'Ω', '\u{1F600}', '.', '..', './', '../', '-', '_',
	'\u00a0', 'tab\there', 'CAPS', '0', '1234567890',
];
const REGIONS = ['us-east-1', 'us-west-2', 'eu-west-3', 'ap-southeast-2',
	'us-gov-west-1', 'cn-north-1', 'auto', 'garage', 'eu-central-2'];
const ENDPOINTS = [
	'https://s3.us-west-2.amazonaws.com', 'https://s3.amazonaws.com',
	'http://127.0.0.1:9000', 'https://127.0.0.1:8443', 'http://localhost:4566',
	'https://minio.example.net:9443', 'https://S3.Example.COM',
	'http://[::1]:9000', 'https://storage.example.org',
];
const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

function gen(seed, count) {
	const r = prng(seed);
	const pick = (a) => a[Math.floor(r() * a.length)];
	const int = (lo, hi) => lo + Math.floor(r() * (hi - lo + 1));
	const str = (alpha, n) => Array.from({ length: n }, () => pick(alpha)).join('');
	const key = () => {
		let k = '';
		for (let n = int(1, 6); n > 0; n--)
			k += pick(PIECES);
		switch (int(0, 5)) {
		case 0: return '/' + k;		// leading slash: "/bucket//k"
		case 1: return k + '/';
		default: return k;
		}
	};
	const out = [];
	for (let i = 0; i < count; i++) {
		const cls = CLASSES[i % CLASSES.length];
		const endpoint = pick(ENDPOINTS);
		// Virtual-host style only where the host is a DNS name.
		const pathStyle = r() < 0.6 || /^https?:\/\/(\[|[0-9]|localhost)/.test(endpoint);
		let bucket = str('abcdefghijklmnopqrstuvwxyz0123456789', int(3, 20));
		if (pathStyle && r() < 0.3)
			bucket += '.with.dots';
		const v = {
			id: i, class: cls, method: cls === 'head' ? 'HEAD' : 'GET',
			endpoint, path_style: pathStyle, bucket,
			key: cls === 'list' ? '' : key(), query: [], headers: [],
			body: null, region: pick(REGIONS),
			// 2001..2037, and now and then the last second of a day (the
			// short date must come from the same instant as the long one).
			time: r() < 0.2 ? int(11000, 24800) * 86400 + 86399 :
				int(978307200, 2145916799),
			ak: 'AKIA' + str('ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', 16),
			sk: str(B64, 40),
			token: r() < 0.35 ? str(B64, int(40, 400)) + pick(['', '=', '==']) : null,
		};
		if (cls === 'list') {
			v.query.push(['list-type', '2']);
			if (r() < 0.8)
				v.query.push(['prefix', key()]);
			if (r() < 0.7)
				v.query.push(['delimiter', pick(['/', '/', '|', ' ', '+'])]);
			if (r() < 0.5)
				v.query.push(['continuation-token', str(B64, int(8, 120)) + pick(['', '=', '=='])]);
			if (r() < 0.5)
				v.query.push(['max-keys', String(int(1, 1000))]);
			if (r() < 0.2)
				v.query.push(['start-after', key()]);
			if (r() < 0.2)
				v.query.push(['encoding-type', 'url']);
			if (r() < 0.2)
				v.query.push(['fetch-owner', pick(['true', 'false'])]);
			// Any order: both sides must sort.
			v.query.sort(() => r() - 0.5);
		}
		if (cls === 'get-range') {
			const a = int(0, 1 << 30);
			v.headers.push(['Range', `bytes=${a}-${a + int(0, 1 << 24)}`]);
			if (r() < 0.6)
				v.headers.push(['If-Match', `"${str('0123456789abcdef', 32)}${pick(['', '-' + int(2, 999)])}"`]);
		}
		if (cls === 'get' && r() < 0.3)
			v.headers.push(['x-amz-request-payer', ' requester  ']);
		const meta = () => {
			const names = META.slice().sort(() => r() - 0.5);
			for (let m = int(0, 5); m > 0; m--)
				v.headers.push([names[m], pick(META_VALUES)]);
		};
		const etag = () => `"${str('0123456789abcdef', 32)}${pick(['', '-' + int(2, 10000)])}"`;
		const uploadId = () => str(B64 + '._-~', int(20, 200));
		if (cls === 'put') {
			v.method = 'PUT';
			v.headers.push(['Content-Length', String(int(0, 5 * 2 ** 30))]);
			if (r() < 0.5)
				v.headers.push(['Content-Type', pick(['application/octet-stream',
					'text/plain; charset=utf-8', 'application/x-directory'])]);
			const c = int(0, 2);
			if (c === 1)
				v.headers.push(['If-None-Match', '*']);
			else if (c === 2)
				v.headers.push(['If-Match', etag()]);
			meta();
		}
		if (cls === 'multipart') {
			switch (int(0, 3)) {
			case 0:		// CreateMultipartUpload
				v.method = 'POST';
				v.query.push(['uploads', '']);
				meta();
				break;
			case 1:		// UploadPart
				v.method = 'PUT';
				v.query.push(['partNumber', String(int(1, 10000))], ['uploadId', uploadId()]);
				v.headers.push(['Content-Length', String(int(5 << 20, 5 * 2 ** 30))]);
				break;
			case 2:		// CompleteMultipartUpload
				v.method = 'POST';
				v.query.push(['uploadId', uploadId()]);
				v.headers.push(['Content-Length', String(int(100, 1 << 20))],
					['Content-Type', 'application/xml']);
				if (r() < 0.5)
					v.headers.push(r() < 0.5 ? ['If-None-Match', '*'] : ['If-Match', etag()]);
				break;
			default:	// AbortMultipartUpload
				v.method = 'DELETE';
				v.query.push(['uploadId', uploadId()]);
			}
			v.query.sort(() => r() - 0.5);
		}
		if (cls === 'delete') {
			v.method = 'DELETE';
			if (r() < 0.3)
				v.headers.push(['If-Match', etag()]);
		}
		if (cls === 'copy') {
			v.method = 'PUT';
			const src = key().split('/').map(escapeUri).join('/');
			v.headers.push(['x-amz-copy-source', `/${bucket}/${src}`]);
			if (r() < 0.5) {
				const a = int(0, 1 << 30);
				v.query.push(['partNumber', String(int(1, 10000))], ['uploadId', uploadId()]);
				v.headers.push(['x-amz-copy-source-range', `bytes=${a}-${a + int(5 << 20, 1 << 30)}`]);
			} else if (r() < 0.5) {
				v.headers.push(['x-amz-metadata-directive', 'REPLACE']);
				meta();
			}
			if (r() < 0.5)
				v.headers.push(['x-amz-copy-source-if-match', etag()]);
			v.query.sort(() => r() - 0.5);
		}
		if (cls === 'payload') {
			v.method = pick(['GET', 'PUT']);
			v.body = crypto.createHash('sha256').update(String(i * 7919 + seed)).digest('hex')
				.slice(0, 2 * int(0, 32));
		}
		out.push(v);
	}
	return out;
}

// The daemon's addressing rule (s3.c use_path_style()): a dotted bucket
// cannot go in the host name under TLS.
function where(v) {
	const u = new URL(v.endpoint);
	const pathStyle = v.path_style || (v.bucket.includes('.') && u.protocol === 'https:');
	const encKey = v.key.split('/').map(escapeUri).join('/');
	if (pathStyle)
		return { scheme: u.protocol.slice(0, -1), host: u.host,
			path: '/' + v.bucket + (v.key ? '/' + encKey : '') };
	return { scheme: u.protocol.slice(0, -1), host: v.bucket + '.' + u.host,
		path: '/' + encKey };
}

async function sign(v) {
	const w = where(v);
	const headers = { host: w.host };
	for (const [n, val] of v.headers)
		headers[n] = val;
	let body;
	if (v.body === null)
		headers['x-amz-content-sha256'] = 'UNSIGNED-PAYLOAD';
	else
		body = Buffer.from(v.body, 'hex');	// smithy hashes it
	const query = {};
	for (const [n, val] of v.query)
		query[n] = val;
	const signer = new SignatureV4({
		service: 's3', region: v.region, sha256: Sha256, uriEscapePath: false,
		credentials: { accessKeyId: v.ak, secretAccessKey: v.sk,
			...(v.token ? { sessionToken: v.token } : {}) },
	});
	const req = { method: v.method, protocol: w.scheme + ':', hostname: w.host,
		path: w.path, query, headers, body };
	const signed = await signer.sign(req, { signingDate: new Date(v.time * 1000) });
	const auth = signed.headers.authorization;
	const payloadHash = signed.headers['x-amz-content-sha256'];
	const creq = signer.createCanonicalRequest(signed,
		getCanonicalHeaders(signed), payloadHash);
	// The canonical request shown on a mismatch must be the one signed.
	const date = signed.headers['x-amz-date'];
	const scope = `${date.slice(0, 8)}/${v.region}/s3/aws4_request`;
	const sts = `AWS4-HMAC-SHA256\n${date}\n${scope}\n` +
		crypto.createHash('sha256').update(creq).digest('hex');
	let k = 'AWS4' + v.sk;
	for (const s of [date.slice(0, 8), v.region, 's3', 'aws4_request'])
		k = crypto.createHmac('sha256', k).update(s).digest();
	const sig = crypto.createHmac('sha256', k).update(sts).digest('hex');
	if (!auth.endsWith('Signature=' + sig))
		throw new Error(`vector ${v.id}: smithy's canonical request does not give its signature`);
	// The daemon sends the canonical query string itself (names sorted).
	const qs = Object.keys(query).map((n) => [escapeUri(n), escapeUri(query[n])])
		.sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0))
		.map(([n, val]) => n + '=' + val);
	v.expect = {
		url: `${w.scheme}://${w.host}${w.path}${qs.length ? '?' + qs.join('&') : ''}`,
		authorization: auth, creq,
	};
	return v;
}

const hex = (s) => Buffer.from(s, 'utf8').toString('hex');
const unhex = (s) => Buffer.from(s, 'hex').toString('utf8');
const readJsonl = (f) => fs.readFileSync(f, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));

// One request a line, "name=HEX" fields (HEX of UTF-8; q and h: HEX,HEX),
// so the C side needs no JSON parser.
function cinput(vs) {
	for (const v of vs) {
		const f = [`id=${v.id}`, `method=${hex(v.method)}`, `endpoint=${hex(v.endpoint)}`,
			`ps=${v.path_style ? 1 : 0}`, `bucket=${hex(v.bucket)}`, `key=${hex(v.key)}`,
			`region=${hex(v.region)}`, `time=${v.time}`, `ak=${hex(v.ak)}`, `sk=${hex(v.sk)}`];
		if (v.token)
			f.push(`token=${hex(v.token)}`);
		if (v.body !== null)
			f.push(`body=${v.body === '' ? '-' : v.body}`);
		for (const [n, val] of v.query)
			f.push(`q=${hex(n)},${hex(val)}`);
		for (const [n, val] of v.headers)
			f.push(`h=${hex(n)},${hex(val)}`);
		process.stdout.write(f.join(' ') + '\n');
	}
}

// C output: "ID URL-HEX AUTH-HEX CREQ-HEX" a line.
function compare(vs, cfile) {
	const got = new Map();
	for (const l of fs.readFileSync(cfile, 'utf8').split('\n').filter(Boolean)) {
		const [id, url, auth, creq] = l.split(' ');
		got.set(Number(id), { url: unhex(url), authorization: unhex(auth), creq: unhex(creq || '') });
	}
	const per = new Map(CLASSES.map((c) => [c, { n: 0, bad: [] }]));
	for (const v of vs) {
		const p = per.get(v.class);
		const g = got.get(v.id);
		p.n++;
		if (!g || g.authorization !== v.expect.authorization || g.url !== v.expect.url)
			p.bad.push({ v, g });
	}
	let n = 0, failed = 0, shown = false;
	const show = ({ v, g }) => {
		const lines = [`vector ${v.id} (${v.class}): ${JSON.stringify({ method: v.method,
			endpoint: v.endpoint, path_style: v.path_style, bucket: v.bucket, key: v.key,
			query: v.query, headers: v.headers, body: v.body, region: v.region, time: v.time,
			token: !!v.token })}`];
		if (!g) {
			lines.push('no result from the C side');
		} else {
			lines.push(`smithy URL:    ${v.expect.url}`, `s3cachefsd URL: ${g.url}`,
				`smithy Authorization:     ${v.expect.authorization}`,
				`s3cachefsd Authorization: ${g.authorization}`,
				'smithy canonical request:', ...v.expect.creq.split('\n').map((x) => '  |' + x),
				's3cachefsd canonical request:', ...g.creq.split('\n').map((x) => '  |' + x));
		}
		for (const l of lines)
			console.log('# ' + l);
	};
	for (const [cls, p] of per) {
		n++;
		if (p.n && !p.bad.length) {
			console.log(`ok ${n} - sigv4 ${cls}: ${p.n} requests sign as smithy signs them`);
			continue;
		}
		failed++;
		console.log(`not ok ${n} - sigv4 ${cls}: ${p.bad.length} of ${p.n} requests differ from smithy`);
		if (p.bad.length && !shown) {
			show(p.bad[0]);
			shown = true;
		}
	}
	const bad = [...per.values()].reduce((s, p) => s + p.bad.length, 0);
	n++;
	if (!bad && vs.length && got.size === vs.length) {
		console.log(`ok ${n} - sigv4 total: ${vs.length} requests, URL and Authorization identical`);
	} else {
		failed++;
		console.log(`not ok ${n} - sigv4 total: ${bad} of ${vs.length} differ (${got.size} C results)`);
	}
	console.log(`1..${n}`);
	return failed ? 1 : 0;
}

async function main() {
	const [cmd, a, b] = process.argv.slice(2);
	if (cmd === 'gen' && a && b) {
		for (const v of gen(Number(a), Number(b)))
			process.stdout.write(JSON.stringify(await sign(v)) + '\n');
		return 0;
	}
	if (cmd === 'known') {
		// The S3 API reference's GET Object example ("Example: GET
		// Object", Authenticating Requests: Using the Authorization
		// Header): smithy, set up as above, must reproduce it.
		const signer = new SignatureV4({ service: 's3', region: 'us-east-1',
			sha256: Sha256, uriEscapePath: false,
			credentials: { accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
				secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' } });
		const s = await signer.sign({ method: 'GET', protocol: 'https:',
			hostname: 'examplebucket.s3.amazonaws.com', path: '/test.txt', query: {},
			headers: { host: 'examplebucket.s3.amazonaws.com', range: 'bytes=0-9' } },
		{ signingDate: new Date('2013-05-24T00:00:00Z') });
		console.log(s.headers.authorization);
		return 0;
	}
	if (cmd === 'cinput' && a) {
		cinput(readJsonl(a));
		return 0;
	}
	if (cmd === 'compare' && a && b)
		return compare(readJsonl(a), b);
	console.error('usage: sigv4-vectors.js gen SEED COUNT | cinput VECTORS | compare VECTORS C-OUTPUT | known');
	return 2;
}

main().then((rc) => { process.exitCode = rc; }, (e) => {
	console.error(e.stack || String(e));
	process.exitCode = 2;
});
