ops.o: ops.c evict.h lib/config.h lib/retry.h lib/s3.h lib/creds.h \
 lib/util.h lib/base.h lib/creds.h lib/log.h lib/loop.h lib/base.h \
 lib/path.h lib/prio.h lib/retry.h lib/s3.h lib/util.h lib/xfer.h \
 lib/loop.h lib/xml.h req.h ../uapi/s3cachefs.h store.h
evict.h:
lib/config.h:
lib/retry.h:
lib/s3.h:
lib/creds.h:
lib/util.h:
lib/base.h:
lib/creds.h:
lib/log.h:
lib/loop.h:
lib/base.h:
lib/path.h:
lib/prio.h:
lib/retry.h:
lib/s3.h:
lib/util.h:
lib/xfer.h:
lib/loop.h:
lib/xml.h:
req.h:
../uapi/s3cachefs.h:
store.h:
