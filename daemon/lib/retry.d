lib/retry.o: lib/retry.c lib/base.h lib/retry.h lib/util.h
lib/base.h:
lib/retry.h:
lib/util.h:
