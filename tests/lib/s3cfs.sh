# SPDX-License-Identifier: GPL-2.0
# The module, the daemon and mounts.
#
#   load_module [PARAM=VAL...]   insmod $S3CFS_KO (no-op if loaded)
#   unload_module                rmmod s3cachefs (no-op if not loaded)
#   start_daemon [ARGS...]       s3cachefsd in the background against the test
#                                server; DAEMON_PID, DAEMON_LOG are set
#   stop_daemon                  SIGTERM, then SIGKILL after 10 s
#   kill_daemon                  SIGKILL now
#   mount_s3 SOURCE MNT OPTS     mount -t s3cachefs, retrying while the daemon
#                                is still registering (S3CFS_MOUNT_WAIT s)
#   mount_s3_or_end SOURCE MNT OPTS
#                                mount_s3 as the test point "mount"; a test
#                                whose mount fails ends there
#   umount_s3 MNT                bounded umount
#   mnt_stat NAME [MNT]          /sys/fs/s3cachefs/<MAJ:MIN of MNT>/NAME
#   mnt_set NAME VALUE [MNT]     write a knob there
#   drop_caches                  drop the page cache (and dentries/inodes)
#   loop_ext4 DIR SIZE           an ext4 of SIZE on a loop device (its image
#                                in $WORK) mounted on DIR, for a cache a
#                                test shuts down as at a power cut; sets
#                                LOOP_DEV, LOOP_DIR (run it with check_sh)
#   loop_ext4_cleanup            unmount it, detach the device (EXIT trap)
#
# Environment: S3CFS_KO (default build/$VM_KERNEL/s3cachefs.ko),
# S3CFS_DAEMON (daemon/s3cachefsd), S3CFS_LOGDIR (where daemon logs go),
# MNT (default mount point, /mnt/ds1).

S3CFS_KO=${S3CFS_KO:-build/${VM_KERNEL:-6.1}/s3cachefs.ko}
case "$S3CFS_KO" in /*) ;; *) S3CFS_KO=$REPO/$S3CFS_KO ;; esac
S3CFS_DAEMON=${S3CFS_DAEMON:-$REPO/daemon/s3cachefsd}
S3CFS_LOGDIR=${S3CFS_LOGDIR:-${VM_OUT:-/tmp}/logs}
S3CFS_MOUNT_WAIT=${S3CFS_MOUNT_WAIT:-20}
MNT=${MNT:-/mnt/ds1}
DAEMON_PID=
DAEMON_LOG=

load_module() {
	[ -d /sys/module/s3cachefs ] && return 0
	[ -f "$S3CFS_KO" ] || { echo "load_module: no module at $S3CFS_KO" >&2; return 1; }
	# S3CFS_MODULE_PARAMS: the suite run with other defaults (dir_index=1).
	insmod "$S3CFS_KO" ${S3CFS_MODULE_PARAMS:-} "$@"
}

unload_module() {
	[ -d /sys/module/s3cachefs ] || return 0
	timeout 60 rmmod s3cachefs
}

start_daemon() {
	local i
	[ -x "$S3CFS_DAEMON" ] || { echo "start_daemon: no daemon at $S3CFS_DAEMON" >&2; return 1; }
	mkdir -p "$S3CFS_LOGDIR"
	for ((i = 1; ; i++)); do
		DAEMON_LOG=$S3CFS_LOGDIR/s3cachefsd-${TEST_NAME:-test}-$i.log
		[ -e "$DAEMON_LOG" ] || break
	done
	AWS_ACCESS_KEY_ID=$S3_AK AWS_SECRET_ACCESS_KEY=$S3_SK \
		"$S3CFS_DAEMON" --endpoint "$S3_ENDPOINT" --region "$S3_REGION" \
		--allow-http --path-style -v "$@" </dev/null >"$DAEMON_LOG" 2>&1 &
	DAEMON_PID=$!
	# Known to the guest runner, which kills leftovers after each test.
	[ -n "${S3CFS_PIDFILE:-}" ] && echo "$DAEMON_PID" >>"$S3CFS_PIDFILE"
	# Ready once registered with the module (mounts fail before that).
	for ((i = 0; i < 300; i++)); do
		grep -q 'registered with the s3cachefs module' "$DAEMON_LOG" 2>/dev/null && break
		# Started before the module: it registers when the module comes.
		grep -q 'module not loaded.*waiting for it' "$DAEMON_LOG" 2>/dev/null && break
		kill -0 "$DAEMON_PID" 2>/dev/null || break
		sleep 0.1
	done
	if ! kill -0 "$DAEMON_PID" 2>/dev/null; then
		echo "start_daemon: s3cachefsd exited at once; its log:" >&2
		tail -n 20 "$DAEMON_LOG" >&2
		DAEMON_PID=
		return 1
	fi
}

stop_daemon() {
	local i
	[ -n "$DAEMON_PID" ] || return 0
	kill -TERM "$DAEMON_PID" 2>/dev/null
	for ((i = 0; i < 100; i++)); do
		kill -0 "$DAEMON_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$DAEMON_PID" 2>/dev/null
	wait "$DAEMON_PID" 2>/dev/null
	DAEMON_PID=
}

kill_daemon() {
	[ -n "$DAEMON_PID" ] || return 0
	kill -KILL "$DAEMON_PID" 2>/dev/null
	wait "$DAEMON_PID" 2>/dev/null
	DAEMON_PID=
}

daemon_alive() {
	[ -n "$DAEMON_PID" ] && kill -0 "$DAEMON_PID" 2>/dev/null
}

mount_s3() {
	local src=$1 mnt=$2 opts=$3 i err
	mkdir -p "$mnt" || return 1
	for ((i = 0; i < S3CFS_MOUNT_WAIT * 2; i++)); do
		err=$(timeout -k 5 60 mount -t s3cachefs -o "$opts" "$src" "$mnt" 2>&1) && return 0
		# A daemon that was just started may not have registered yet.
		daemon_alive || break
		sleep 0.5
	done
	echo "mount_s3: mount -t s3cachefs -o $opts $src $mnt: $err" >&2
	dmesg | tail -n 5 >&2
	return 1
}

mount_s3_or_end() {
	if ! mount_s3 "$@"; then
		not_ok "mount"
		tap_done
	fi
	ok "mount"
}

umount_s3() {
	mountpoint -q "$1" || return 0
	timeout -k 5 60 umount "$1"
}

mnt_id() {
	mountpoint -d "${1:-$MNT}"
}

mnt_stat() {
	local id
	id=$(mnt_id "${2:-$MNT}") || return 1
	cat "/sys/fs/s3cachefs/$id/$1"
}

mnt_set() {
	local id
	id=$(mnt_id "${3:-$MNT}") || return 1
	echo "$2" >"/sys/fs/s3cachefs/$id/$1"
}

loop_ext4() {
	LOOP_DIR=$1 LOOP_DEV=
	mkdir -p "$1" && truncate -s "$2" "$WORK/loop-ext4.img" || return 1
	modprobe loop 2>/dev/null
	LOOP_DEV=$(losetup -f --show "$WORK/loop-ext4.img") || { LOOP_DEV=; return 1; }
	mkfs.ext4 -q -F "$LOOP_DEV" && mount "$LOOP_DEV" "$1"
}

loop_ext4_cleanup() {
	[ -n "${LOOP_DIR:-}" ] && mountpoint -q "$LOOP_DIR" && umount "$LOOP_DIR"
	[ -n "${LOOP_DEV:-}" ] && losetup -d "$LOOP_DEV"
	return 0
}

drop_caches() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
}
