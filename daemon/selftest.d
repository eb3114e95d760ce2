selftest.o: selftest.c lib/base.h lib/client.h lib/s3.h lib/creds.h \
 lib/util.h lib/xml.h lib/loop.h lib/base.h lib/s3.h lib/xml.h ops.h \
 lib/config.h lib/retry.h req.h selftest.h store.h ../uapi/s3cachefs.h
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
ops.h:
lib/config.h:
lib/retry.h:
req.h:
selftest.h:
store.h:
../uapi/s3cachefs.h:
