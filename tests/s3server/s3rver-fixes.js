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

function holdsObject(dir) {
  for (const name of fs.readdirSync(dir)) {
    const p = path.posix.join(dir, name);
    if (fs.statSync(p).isDirectory()) {
      if (holdsObject(p)) return true;
    } else if (name.endsWith(OBJECT_SUFFIX)) {
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
  for (const filename of fs.readdirSync(dir)) {
    const filePath = path.posix.join(dir, filename);
    const stats = fs.statSync(filePath);
    if (!stats.isDirectory()) {
      yield filePath;
    } else if (!recurseFilter || recurseFilter(filePath)) {
      yield* walk(filePath, recurseFilter);
    } else if (holdsObject(filePath)) {
      yield `${filePath}/${OBJECT_SUFFIX}`;
    }
  }
};
