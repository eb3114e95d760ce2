lib/path.o: lib/path.c lib/path.h lib/util.h ../uapi/s3cachefs.h
lib/path.h:
lib/util.h:
../uapi/s3cachefs.h:
