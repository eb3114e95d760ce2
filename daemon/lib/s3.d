lib/s3.o: lib/s3.c lib/base.h lib/creds.h lib/log.h lib/s3.h lib/util.h
lib/base.h:
lib/creds.h:
lib/log.h:
lib/s3.h:
lib/util.h:
