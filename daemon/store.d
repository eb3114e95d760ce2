store.o: store.c lib/base.h lib/log.h lib/util.h store.h \
 ../uapi/s3cachefs.h
lib/base.h:
lib/log.h:
lib/util.h:
store.h:
../uapi/s3cachefs.h:
