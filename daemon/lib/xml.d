lib/xml.o: lib/xml.c lib/log.h lib/path.h lib/s3.h lib/creds.h lib/util.h \
 lib/xml.h
lib/log.h:
lib/path.h:
lib/s3.h:
lib/creds.h:
lib/util.h:
lib/xml.h:
