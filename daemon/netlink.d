netlink.o: netlink.c /usr/include/libnl3/netlink/genl/ctrl.h \
 /usr/include/libnl3/netlink/netlink.h \
 /usr/include/libnl3/netlink/netlink-compat.h \
 /usr/include/libnl3/netlink/version.h \
 /usr/include/libnl3/netlink/errno.h /usr/include/libnl3/netlink/types.h \
 /usr/include/libnl3/netlink/handlers.h \
 /usr/include/libnl3/netlink/netlink-kernel.h \
 /usr/include/libnl3/netlink/socket.h \
 /usr/include/libnl3/netlink/object.h /usr/include/libnl3/netlink/utils.h \
 /usr/include/libnl3/netlink/list.h /usr/include/libnl3/netlink/cache.h \
 /usr/include/libnl3/netlink/msg.h /usr/include/libnl3/netlink/attr.h \
 /usr/include/libnl3/netlink/addr.h /usr/include/libnl3/netlink/data.h \
 /usr/include/libnl3/netlink/genl/genl.h lib/base.h lib/log.h lib/loop.h \
 lib/base.h lib/util.h netlink.h req.h ../uapi/s3cachefs.h
/usr/include/libnl3/netlink/genl/ctrl.h:
/usr/include/libnl3/netlink/netlink.h:
/usr/include/libnl3/netlink/netlink-compat.h:
/usr/include/libnl3/netlink/version.h:
/usr/include/libnl3/netlink/errno.h:
/usr/include/libnl3/netlink/types.h:
/usr/include/libnl3/netlink/handlers.h:
/usr/include/libnl3/netlink/netlink-kernel.h:
/usr/include/libnl3/netlink/socket.h:
/usr/include/libnl3/netlink/object.h:
/usr/include/libnl3/netlink/utils.h:
/usr/include/libnl3/netlink/list.h:
/usr/include/libnl3/netlink/cache.h:
/usr/include/libnl3/netlink/msg.h:
/usr/include/libnl3/netlink/attr.h:
/usr/include/libnl3/netlink/addr.h:
/usr/include/libnl3/netlink/data.h:
/usr/include/libnl3/netlink/genl/genl.h:
lib/base.h:
lib/log.h:
lib/loop.h:
lib/base.h:
lib/util.h:
netlink.h:
req.h:
../uapi/s3cachefs.h:
