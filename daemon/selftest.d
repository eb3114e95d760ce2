selftest.o: selftest.c lib/base.h lib/client.h lib/s3.h lib/creds.h \
 lib/util.h lib/xml.h lib/loop.h lib/base.h lib/s3.h lib/xml.h req.h \
 lib/config.h lib/retry.h lib/xfer.h lib/loop.h ../uapi/s3cachefs.h \
 store.h
lib/base.h:
lib/client.h:
lib/s3.h:
lib/creds.h:
lib/util.h:
lib/xml.h:
lib/loop.h:
lib/base.h:
lib/s3.h:
lib/xml.h:
req.h:
lib/config.h:
lib/retry.h:
lib/xfer.h:
lib/loop.h:
../uapi/s3cachefs.h:
store.h:
