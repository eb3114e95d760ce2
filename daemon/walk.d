walk.o: walk.c lib/loop.h lib/base.h lib/util.h walk.h \
 ../uapi/s3cachefs.h
lib/loop.h:
lib/base.h:
lib/util.h:
walk.h:
../uapi/s3cachefs.h:
