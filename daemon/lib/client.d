lib/client.o: lib/client.c lib/base.h lib/client.h lib/s3.h lib/creds.h \
 lib/util.h lib/xml.h lib/log.h lib/loop.h lib/xfer.h lib/retry.h
lib/base.h:
lib/client.h:
lib/s3.h:
lib/creds.h:
lib/util.h:
lib/xml.h:
lib/log.h:
lib/loop.h:
lib/xfer.h:
lib/retry.h:
