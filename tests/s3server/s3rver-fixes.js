// SPDX-License-Identifier: GPL-2.0
//
// Preloaded into s3rver 3.7.1 by s3server.sh (node --require): fixes where
// it diverges from S3 in ways the read-path tests depend on. Each fix names
// the symptom; nothing here changes what a correct request gets back.
'use strict';

const fs = require('fs');
const path = require('path');

const utils = require(path.join(__dirname, 'node_modules/s3rver/lib/utils.js'));
const OBJECT_SUFFIX = '._S3rver_object';

// The directory entries' own types (d_type): s3rver stat()ed every file
// of a walk, three per object, and a ListObjects page walks the whole
// directory from its start: a 10 000-object directory cost 300 000 stat()
// calls to list, over a minute inside a TCG guest. Same names, same order
// (readdir sorts). Entries whose type the filesystem does not report are
// stat()ed as before.
function isDir(dir, ent) {
  if (ent.isDirectory()) return true;
  if (ent.isFile()) return false;
  return fs.statSync(path.posix.join(dir, ent.name)).isDirectory();
}

function holdsObject(dir) {
  for (const ent of fs.readdirSync(dir, { withFileTypes: true })) {
    if (isDir(dir, ent)) {
      if (holdsObject(path.posix.join(dir, ent.name))) return true;
    } else if (ent.name.endsWith(OBJECT_SUFFIX)) {
      return true;
    }
  }
  return false;
}

// ListObjects with a delimiter left out every common prefix whose objects
// all sit one "directory" deeper (keys a/b/c and a/d/e: listing "" showed no
// "a/"): walk() prunes such a directory and never yields an object from it.
// Yield one marker path for a pruned directory that holds objects; the
// listing turns it into the key "<dir>/", which the delimiter folds into the
// common prefix and which is filtered out like any key when it falls before
// start-after or outside the prefix. This must run before s3rver's store
// module destructures utils.walk, hence the preload.
utils.walk = function* walk(dir, recurseFilter) {
  for (const ent of fs.readdirSync(dir, { withFileTypes: true })) {
    const filePath = path.posix.join(dir, ent.name);
    if (!isDir(dir, ent)) {
      yield filePath;
    } else if (!recurseFilter || recurseFilter(filePath)) {
      yield* walk(filePath, recurseFilter);
    } else if (holdsObject(filePath)) {
      yield `${filePath}/${OBJECT_SUFFIX}`;
    }
  }
};

// Object bodies were read in 64 KiB pieces (createReadStream's default),
// each a trip through libuv's thread pool and a socket write: a GET streamed
// ~7 MiB/s inside a TCG guest, and the S3 server, not the clients, was what
// the benchmarks measured. Read streams without a piece size of their own
// read 1 MiB at a time; the bytes are the same.
// (s3rver's store calls fs-extra's createReadStream, a graceful-fs copy.)
const fse = require(path.join(__dirname, 'node_modules/fs-extra'));
const createReadStream = fse.createReadStream;
fse.createReadStream = function (p, options) {
  if (options === undefined || options === null) options = {};
  if (typeof options === 'object' && options.highWaterMark === undefined)
    options = Object.assign({}, options, { highWaterMark: 1 << 20 });
  return createReadStream.call(fse, p, options);
};

// A PUT's body was written over the object's data file as it arrived, and
// the object's MD5 and metadata after it: a PUT whose client went away in
// the middle (a power cut of the node in tests/powercut.sh) left the key
// holding part of the new body under the old metadata, or, for a new key,
// part of a body nobody finished sending (powercut: "S3 has bytes nobody
// acknowledged", and the node's next upload taken for a conflict). S3
// stores a PUT whole or not at all. The body goes to a temporary file
// beside the object and is renamed over it only once the request ended
// complete; an aborted request leaves the key as it was. Answering after
// the rename also answers after the whole object is on disk (s3rver
// resolved when its hashing stream had seen the last byte, and a GET right
// after the answer found the first 64 KiB only).
const FilesystemStore = require(path.join(__dirname,
  'node_modules/s3rver/lib/stores/filesystem.js'));
const stream = require('stream');
FilesystemStore.prototype.putObject = async function (object) {
  const crypto = require('crypto');
  const objectPath = this.getResourcePath(object.bucket, object.key, 'object');
  await fse.mkdirp(path.dirname(objectPath));
  const tmp = `${objectPath}.partial-${crypto.randomBytes(8).toString('hex')}`;
  const md5Context = crypto.createHash('md5');
  let size = 0;
  try {
    if (Buffer.isBuffer(object.content)) {
      await fs.promises.writeFile(tmp, object.content);
      md5Context.update(object.content);
      size = object.content.length;
    } else {
      await stream.promises.pipeline(object.content, new stream.Transform({
        transform(chunk, encoding, callback) {
          md5Context.update(chunk, encoding);
          size += chunk.length;
          callback(null, chunk);
        },
      }), fs.createWriteStream(tmp));
      // An http request cut short may end without an error.
      if (object.content.complete === false || object.content.aborted)
        throw new Error('the request body ended early');
    }
    await fs.promises.rename(tmp, objectPath);
  } catch (err) {
    await fs.promises.rm(tmp, { force: true });
    throw err;
  }
  const md5 = md5Context.digest('hex');
  await this.putMetadata(object.bucket, object.key, object.metadata, md5);
  return { size, md5 };
};

// Conditional writes: s3rver 3.7.1 ignores If-None-Match and If-Match on
// PutObject and overwrites, where S3 answers 412 (or 404 for If-Match on a
// missing key). The write path's conflict tests need S3's answer. Checked
// before the put, under the key's lock (withKeyLock() below), so that two
// racing creates cannot both pass.
// S3RVER_NO_CONDITIONAL_PUT=1 keeps s3rver's behaviour, as a server that
// does not support the conditions.
const objectCtrl = require(path.join(__dirname,
  'node_modules/s3rver/lib/controllers/object.js'));
const S3Error = require(path.join(__dirname,
  'node_modules/s3rver/lib/models/error.js'));

function etagList(header) {
  return header.split(',').map(t => t.trim().replace(/^W\//, ''));
}

// S3's checks of If-None-Match: * and If-Match on a write of the key.
async function checkConditions(ctx) {
  const inm = ctx.headers['if-none-match'];
  const im = ctx.headers['if-match'];
  if (inm === undefined && im === undefined) return;
  let md = null;
  try {
    md = await ctx.store.getMetadata(ctx.params.bucket, ctx.params.key);
  } catch (err) {
    if (err.code !== 'ENOENT') throw err;
  }
  if (inm !== undefined && inm.trim() === '*' && md)
    throw new S3Error('PreconditionFailed',
      'At least one of the pre-conditions you specified did not hold',
      { Condition: 'If-None-Match' });
  if (im !== undefined && !md)
    throw new S3Error('NoSuchKey', 'The specified key does not exist.',
      { Key: ctx.params.key });
  if (im !== undefined && !etagList(im).includes(md.etag) &&
      !etagList(im).includes('*'))
    throw new S3Error('PreconditionFailed',
      'At least one of the pre-conditions you specified did not hold',
      { Condition: 'If-Match' });
}

// Where s3rver keeps the parts of upload ID of BUCKET (null: no such upload).
function uploadDir(store, bucket, id) {
  if (!id || id.includes('/') || id.startsWith('.')) return null;
  const dir = path.join(store.getResourcePath(bucket, undefined, 'uploads'), id);
  return fs.existsSync(dir) ? dir : null;
}

function noSuchUpload(id) {
  return new S3Error('NoSuchUpload',
    'The specified upload does not exist. The upload ID may be invalid, ' +
    'or the upload may have been aborted or completed.', { UploadId: id });
}

if (!process.env.S3RVER_NO_CONDITIONAL_PUT) {
  const putObject = objectCtrl.putObject;
  objectCtrl.putObject = async function (ctx) {
    await checkConditions(ctx);
    return putObject.call(this, ctx);
  };
  // CopyObject's condition on its source (a rename's: the version the
  // client has), which s3rver ignores.
  const putObjectCopy = objectCtrl.putObjectCopy;
  objectCtrl.putObjectCopy = async function (ctx) {
    const im = ctx.headers['x-amz-copy-source-if-match'];
    if (im !== undefined) {
      let src = decodeURI(ctx.headers['x-amz-copy-source'] || '');
      src = src.startsWith('/') ? src.slice(1) : src;
      const [bucket, ...key] = src.split('/');
      let md = null;
      try {
        md = await ctx.store.getMetadata(bucket, key.join('/'));
      } catch (err) {
        if (err.code !== 'ENOENT') throw err;
      }
      if (md && !etagList(im).includes(md.etag))
        throw new S3Error('PreconditionFailed',
          'At least one of the pre-conditions you specified did not hold',
          { Condition: 'x-amz-copy-source-If-Match' });
    }
    return putObjectCopy.call(this, ctx);
  };
  // The same on CompleteMultipartUpload, after S3's NoSuchUpload (s3rver
  // answered a 500 for an upload completed or aborted already).
  const complete = objectCtrl.completeMultipartUpload;
  objectCtrl.completeMultipartUpload = async function (ctx) {
    const dir = uploadDir(ctx.store, ctx.params.bucket, ctx.query.uploadId);
    if (!dir) throw noSuchUpload(ctx.query.uploadId);
    await checkConditions(ctx);
    const etag = multipartEtag(dir);
    await complete.call(this, ctx);
    // S3's ETag of a multipart object: the MD5 of the parts' MD5s, "-N"
    // (s3rver gave the MD5 of the whole object, which no client can
    // predict from its parts).
    if (etag && ctx.body && ctx.body.CompleteMultipartUploadResult) {
      fs.writeFileSync(ctx.store.getResourcePath(ctx.params.bucket,
        ctx.params.key, 'object.md5'), etag);
      ctx.body.CompleteMultipartUploadResult.ETag = JSON.stringify(etag);
    }
  };
}

// "<MD5 of the parts' MD5s>-N" of the parts in upload directory DIR
// (every part uploaded: the daemon completes with all of them); null if a
// part's MD5 is missing.
function multipartEtag(dir) {
  const crypto = require('crypto');
  const nums = fs.readdirSync(dir).filter(n => /^[0-9]+$/.test(n))
    .map(Number).sort((a, b) => a - b);
  const h = crypto.createHash('md5');
  for (const n of nums) {
    let md5;
    try {
      md5 = fs.readFileSync(path.join(dir, `${n}.md5`)).toString();
    } catch (err) {
      return null;
    }
    h.update(Buffer.from(md5, 'hex'));
  }
  return nums.length ? `${h.digest('hex')}-${nums.length}` : null;
}

// AbortMultipartUpload (DELETE ?uploadId): s3rver 3.7.1 answers 405 and
// keeps the parts. Removes them and answers 204 as S3 does (404
// NoSuchUpload when there is no such upload). Path-style requests only
// (the tests'); ahead of s3rver's router, whose DELETE knows no uploadId.
const router = require(path.join(__dirname, 'node_modules/s3rver/lib/routes.js'));
const routes = router.routes;
router.routes = function () {
  const inner = routes.apply(this, arguments);
  return async function abortUpload(ctx, next) {
    const m = /^\/([^/]+)\/(.+)$/.exec(ctx.path);
    if (ctx.method !== 'DELETE' || ctx.query.uploadId === undefined || !m)
      return inner(ctx, next);
    const dir = uploadDir(ctx.store, m[1], ctx.query.uploadId);
    if (!dir) throw noSuchUpload(ctx.query.uploadId);
    fs.rmSync(dir, { recursive: true, force: true });
    ctx.status = 204;
  };
};

// One request at a time per key for what writes it, and for reads of it:
// s3rver's filesystem store writes an object's data and metadata files
// one after the other, so two PUTs of one key at once (a test's other
// client rewriting an object while the daemon puts it) could leave them
// from different writes, after which every HEAD, GET and PUT of the key,
// and every LIST that met it, failed with 500 (t_write_hammer, twice in
// three runs). S3 applies each write whole. Wraps the conditional checks
// above too: a condition is checked and the write made under one lock.
// A client gone in the middle of a request (a writer killed, a power cut of
// the node in tests/powercut.sh) left s3rver's PUT waiting for the rest of
// its body for ever, and the key's lock with it: every later PUT, GET and
// DELETE of the key hung (t_writeback_crash, powercut). S3 drops such a
// PUT: its request ends, and so does its hold on the key.
const keyTails = new Map();
async function withKeyLock(ctx, fn) {
  const k = `${ctx.params.bucket}/${ctx.params.key}`;
  const prev = keyTails.get(k) || Promise.resolve();
  let release;
  const mine = new Promise(resolve => (release = resolve));
  const tail = prev.then(() => mine);
  keyTails.set(k, tail);
  let onClose;
  const gone = new Promise((resolve, reject) => {
    onClose = () => {
      if (ctx.res.writableFinished) return;
      ctx.req.destroy();
      reject(new Error('the client closed the connection'));
    };
  });
  gone.catch(() => {});
  ctx.res.once('close', onClose);
  let running = null;
  try {
    await Promise.race([prev, gone]);
    running = fn();
    return await Promise.race([running, gone]);
  } finally {
    ctx.res.off('close', onClose);
    // A write whose client left still finishes (or fails) before the next
    // request of the key runs: its body, rename and metadata stay one.
    if (running)
      await Promise.race([running.catch(() => {}),
        new Promise(resolve => setTimeout(resolve, 30000))]);
    release();
    if (keyTails.get(k) === tail) keyTails.delete(k);
  }
}
for (const name of ['putObject', 'putObjectCopy', 'completeMultipartUpload',
                    'deleteObject', 'getObject']) {
  const inner = objectCtrl[name];
  objectCtrl[name] = function (ctx) {
    return withKeyLock(ctx, () => inner.call(this, ctx));
  };
}
