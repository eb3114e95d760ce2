#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_reload: the module reloaded under a running daemon (rmmod, insmod: a
# DKMS upgrade). The daemon follows the generic netlink controller's
# notifications, registers with the new module and serves new mounts: the
# same process, never restarted. A daemon started before the module waits
# for it instead of exiting.
# timeout: 420
. "$(dirname "$0")/../lib/common.sh"
test_init reload
plan 15

for f in a b c; do
	make_fixture "$WORK/$f" 300K "reload-$f" >/dev/null
	s3_put "$BUCKET" "$f.bin" "$WORK/$f"
done
registered() { grep -c 'registered with the s3cachefs module' "$DAEMON_LOG"; }

check "module loads" load_module
check_sh "daemon starts" start_daemon
pid=$DAEMON_PID
check_sh "mount" mount_s3 "$BUCKET" "$MNT" "cache=$CACHE,fetch_timeout=30"
check "a.bin reads" cmp "$MNT/a.bin" "$WORK/a"
check "umount" umount_s3 "$MNT"

check "rmmod with the daemon running" unload_module
sleep 1
check_sh "the daemon lives on without the module" daemon_alive
check "insmod again" load_module
# The new module knows no daemon until it registers again.
check_sh "mount on the reloaded module" mount_s3 "$BUCKET" "$MNT" "cache=$CACHE,fetch_timeout=30"
check "b.bin reads through the same daemon" cmp "$MNT/b.bin" "$WORK/b"
is "$DAEMON_PID $(registered)" "$pid 2" "same process (pid $pid), registered twice"
check "umount" umount_s3 "$MNT"

# A daemon started before the module waits for it.
stop_daemon
check "rmmod" unload_module
check_sh "daemon starts without the module" start_daemon
mount_c() {
	load_module &&
	mount_s3 "$BUCKET" "$MNT" "cache=$CACHE,fetch_timeout=30" &&
	cmp "$MNT/c.bin" "$WORK/c"
}
check_sh "after insmod, it registers and serves a mount" mount_c
tap_done
