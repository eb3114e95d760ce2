#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# rgw.sh - a single-node Ceph RGW on loopback: a strict S3 server (SigV4
# validated, 412 on If-Match, real error codes) for the S3 client's tests.
#
#   tools/rgw/rgw.sh start DIR PORT     set up (first time) and start
#   tools/rgw/rgw.sh stop DIR [PORT]    stop everything started from DIR
#   tools/rgw/rgw.sh status DIR [PORT]  exit 0 if the endpoint answers
#   tools/rgw/rgw.sh env DIR [PORT]     print the S3_* settings to eval
#
# Debian's packages (ceph-mon ceph-osd radosgw ceph-common), no ceph-mgr, no
# systemd: ceph-mon, ceph-osd and radosgw run in the foreground (-f) under
# setsid, their PIDs in DIR/pids/. S3 is http://127.0.0.1:PORT (path-style),
# the monitor listens on 127.0.0.1:PORT+1 (msgr v2 only); the OSD takes
# ports from 127.0.0.1:PORT+2.. . A second `start` on the same DIR reuses
# the cluster (its objects survive a stop, even a SIGKILL, with bluestore).
#
# Store (RGW_STORE, fixed when DIR is first set up): memstore (default,
# fastest: objects in the OSD's memory, written to DIR/osd on a clean stop,
# lost on SIGKILL) or bluestore (a sparse file DIR/osd/block, RGW_BLOCK_SIZE
# apparent size, default 20G; survives SIGKILL; needs O_DIRECT; the OSD takes
# ~10 s longer to start). A memstore cluster whose OSD was not stopped
# cleanly (SIGKILL, crash) cannot come back (radosgw hangs on its lost
# pools): `start` then sets up a new one.
#
# A user with fixed keys is created, and the buckets named in RGW_BUCKETS
# (space separated, default "bkt"):
#   access key  S3CFSTESTACCESSKEY01   (RGW_AK)
#   secret key  s3cfs/test/secret/key/0123456789abcdefgh   (RGW_SK)
# Logs: DIR/log/{mon.a,osd.0,client.rgw}.log (+ .out for stdout/stderr).
set -uo pipefail

RGW_AK=${RGW_AK:-S3CFSTESTACCESSKEY01}
RGW_SK=${RGW_SK:-s3cfs/test/secret/key/0123456789abcdefgh}
RGW_BUCKETS=${RGW_BUCKETS-bkt}
RGW_START_TIMEOUT=${RGW_START_TIMEOUT:-120}

die() { echo "rgw.sh: $*" >&2; exit 1; }
T0=$(date +%s%N)
log() { [ -n "${RGW_QUIET:-}" ] || echo "rgw.sh: [$(( ($(date +%s%N) - T0) / 1000000 )) ms] $*" >&2; }

usage() { sed -n '3,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2; }

[ $# -ge 2 ] || usage
cmd=$1
dir=$2
port=${3:-}
[ -n "$port" ] || { [ -f "$dir/port" ] && port=$(cat "$dir/port"); }
case "$cmd" in
start) [ -n "$port" ] || usage ;;
stop|status|env) ;;
*) usage ;;
esac
mkdir -p "$dir" || die "cannot create $dir"
dir=$(cd "$dir" && pwd)
conf=$dir/ceph.conf

# Nothing from the caller's environment may steer the ceph tools or curl.
for v in $(compgen -e | grep -E '^(AWS_|CEPH_)'); do unset "$v"; done

ceph_() { timeout 60 ceph -c "$conf" --connect-timeout 20 "$@"; }

alive() {	# NAME: is the daemon recorded under NAME running?
	local f=$dir/pids/$1.pid
	[ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null
}

# Run one daemon in the foreground, in its own session, PID recorded.
spawn() {	# NAME CMD...
	local name=$1
	shift
	mkdir -p "$dir/pids" "$dir/log"
	setsid "$@" </dev/null >>"$dir/log/$name.out" 2>&1 &
	echo $! >"$dir/pids/$name.pid"
}

OSD_KILLED=
stop_one() {	# NAME
	local f=$dir/pids/$1.pid pid i
	[ -f "$f" ] || return 0
	pid=$(cat "$f")
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null
		for ((i = 0; i < 100; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null; then
			log "$1 ($pid) ignored SIGTERM, killing"
			[ "$1" != osd.0 ] || OSD_KILLED=1
			kill -KILL "$pid" 2>/dev/null
			sleep 0.2
		fi
	fi
	rm -f "$f"
}

do_stop() {
	local was=
	alive osd.0 && was=1
	stop_one rgw
	stop_one osd.0
	stop_one mon.a
	# memstore wrote its objects out only if the OSD went down cleanly.
	[ -z "$was" ] || [ -n "$OSD_KILLED" ] || [ ! -f "$dir/ready" ] || touch "$dir/clean"
}

endpoint() { echo "http://127.0.0.1:$port"; }

answers() {
	[ -n "$port" ] || return 1
	curl -s -o /dev/null -m 5 -w '%{http_code}' "$(endpoint)/" 2>/dev/null | grep -q '^[2-4]'
}

tcp_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# Done waiting when radosgw answers, or when it or the OSD has died.
answers_or_died() { answers || ! alive rgw || ! alive osd.0; }

wait_for() {	# DESC DEADLINE CMD...: poll CMD every 0.5 s until it succeeds
	local desc=$1 deadline=$2
	shift 2
	until "$@" >/dev/null 2>&1; do
		[ "$(date +%s)" -lt "$deadline" ] || { log "timed out waiting for $desc"; return 1; }
		sleep 0.5
	done
}

write_conf() {
	local fsid=$1 store=$2 mport=$((port + 1))
	cat >"$conf" <<EOF
# written by tools/rgw/rgw.sh
[global]
fsid = $fsid
mon_host = [v2:127.0.0.1:$mport]
mon_initial_members = a
public_addr = 127.0.0.1
cluster_addr = 127.0.0.1
ms_bind_ipv4 = true
ms_bind_ipv6 = false
ms_bind_msgr1 = false
ms_bind_msgr2 = true
ms_bind_port_min = $((port + 2))
ms_bind_port_max = $((port + 40))
# No cephx; "crc" or the clients (radosgw!) never finish the handshake.
auth_cluster_required = none
auth_service_required = none
auth_client_required = none
auth_allow_insecure_global_id_reclaim = true
ms_mon_client_mode = crc
ms_client_mode = crc
ms_service_mode = crc
ms_cluster_mode = crc
ms_mon_service_mode = crc
ms_mon_cluster_mode = crc
run_dir = $dir/run
admin_socket = $dir/run/\$name.asok
log_file = $dir/log/\$name.log
log_to_stderr = false
err_to_stderr = true
log_to_file = true
mon_cluster_log_file = $dir/log/cluster.log
crash_dir = $dir/crash
keyring = $dir/keyring
# One OSD, no replication, no manager.
osd_pool_default_size = 1
osd_pool_default_min_size = 1
osd_pool_default_pg_num = 8
osd_pool_default_pgp_num = 8
osd_pool_default_pg_autoscale_mode = off
osd_crush_chooseleaf_type = 0
mon_allow_pool_size_one = true
mon_allow_pool_delete = true
mon_max_pg_per_osd = 1000
mon_warn_on_pool_no_redundancy = false
mon_data_avail_warn = 1
mon_data_avail_crit = 0
mon_osd_down_out_interval = 0
mon_osd_report_timeout = 3600
osd_max_object_name_len = 460
osd_max_object_namespace_len = 64

[mon]
mon_data = $dir/mon/\$cluster-\$id

[osd]
osd_data = $dir/osd/\$cluster-\$id
osd_objectstore = $store
# memstore keeps its data across a clean restart only without fast shutdown.
osd_fast_shutdown = false
bluestore_block_path = $dir/osd/block
bluestore_block_create = true
bluestore_block_size = ${RGW_BLOCK_SIZE:-20G}
bluestore_fsck_on_mount = false
bluestore_cache_autotune = false
bluestore_cache_size = 134217728
osd_memory_target = 939524096
memstore_device_bytes = ${RGW_MEMSTORE_BYTES:-4G}
osd_op_num_shards = 2
osd_op_num_threads_per_shard = 1

[client.rgw]
rgw_frontends = beast endpoint=127.0.0.1:$port
rgw_data = $dir/rgw
rgw_enable_usage_log = false
rgw_dns_name = 127.0.0.1
rgw_thread_pool_size = 64
EOF
}

setup_new() {
	local fsid store=${RGW_STORE:-memstore} t
	for t in ceph-mon ceph-osd radosgw radosgw-admin ceph monmaptool ceph-authtool; do
		command -v "$t" >/dev/null || die "$t not found (apt-get install ceph-mon ceph-osd radosgw ceph-common)"
	done
	rm -rf "${dir:?}"/{mon,osd,rgw,run,log,crash,pids,keyring,monmap,ceph.conf,ready,clean}
	mkdir -p "$dir"/{mon,osd,rgw,run,log,crash,pids}
	if [ "$store" = bluestore ]; then
		dd if=/dev/zero of="$dir/osd/.odirect" bs=4096 count=1 oflag=direct 2>/dev/null ||
			die "bluestore needs O_DIRECT, which $dir does not support"
		rm -f "$dir/osd/.odirect"
	fi
	fsid=$(cat /proc/sys/kernel/random/uuid)
	write_conf "$fsid" "$store"
	echo "$port" >"$dir/port"
	log "new cluster in $dir ($store)"
	ceph-authtool --create-keyring "$dir/keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null ||
		die "ceph-authtool failed"
	monmaptool --create --fsid "$fsid" --addv a "[v2:127.0.0.1:$((port + 1))]" "$dir/monmap" >/dev/null ||
		die "monmaptool failed"
	ceph-mon -c "$conf" --mkfs -i a --monmap "$dir/monmap" --keyring "$dir/keyring" \
		>"$dir/log/mon-mkfs.out" 2>&1 || die "ceph-mon --mkfs failed: $(tail -n 5 "$dir/log/mon-mkfs.out")"
}

do_start() {
	local t0 deadline uuid id fresh=
	t0=$(date +%s%N)
	deadline=$(( $(date +%s) + RGW_START_TIMEOUT ))
	if alive mon.a && alive osd.0 && alive rgw && answers; then
		log "already running on $(endpoint)"
		return 0
	fi
	do_stop
	local p
	for p in "$port" $((port + 1)); do
		! tcp_open "$p" || die "127.0.0.1:$p is in use (another RGW? tools/rgw/rgw.sh stop ITS_DIR)"
	done
	if [ -f "$conf" ] && [ -f "$dir/ready" ] && [ ! -f "$dir/clean" ] &&
		grep -q '^osd_objectstore = memstore' "$conf"; then
		log "memstore cluster in $dir was not stopped cleanly (its objects are gone): new cluster"
		rm -f "$dir/ready"
	fi
	rm -f "$dir/clean"
	if [ ! -f "$conf" ] || [ ! -f "$dir/ready" ] || [ "$(cat "$dir/port" 2>/dev/null)" != "$port" ]; then
		setup_new
		fresh=1
	fi
	spawn mon.a ceph-mon -f -c "$conf" -i a
	# Poll the port (cheap), not the python CLI (a second or more a call).
	wait_for "the monitor" "$deadline" tcp_open $((port + 1)) && alive mon.a ||
		{ do_stop; die "monitor did not come up: $(tail -n 5 "$dir/log/mon.a.log" "$dir/log/mon.a.out" 2>/dev/null)"; }
	if [ -n "$fresh" ]; then
		uuid=$(cat /proc/sys/kernel/random/uuid)
		id=$(ceph_ osd create "$uuid") || { do_stop; die "ceph osd create failed"; }
		[ "$id" = 0 ] || { do_stop; die "unexpected OSD id $id"; }
		mkdir -p "$dir/osd/ceph-0"
		ceph-osd -c "$conf" -i 0 --mkfs --osd-uuid "$uuid" >"$dir/log/osd-mkfs.out" 2>&1 ||
			{ do_stop; die "ceph-osd --mkfs failed: $(tail -n 5 "$dir/log/osd-mkfs.out")"; }
	fi
	log "monitor up"
	spawn osd.0 ceph-osd -f -c "$conf" -i 0
	# radosgw waits for the OSD by itself (rgw_init_timeout): no polling.
	spawn rgw radosgw -f -c "$conf" -n client.rgw
	wait_for "radosgw on $(endpoint)" "$deadline" answers_or_died || {
		alive osd.0 || log "the OSD died: $(tail -n 5 "$dir/log/osd.0.log" "$dir/log/osd.0.out" 2>/dev/null)"
		do_stop; die "radosgw did not answer: $(tail -n 5 "$dir/log/client.rgw.log" "$dir/log/rgw.out" 2>/dev/null)"; }
	alive rgw && alive osd.0 || { do_stop; die "a daemon died: $(tail -n 5 "$dir"/log/*.out)"; }
	log "radosgw answers"
	if [ -n "$fresh" ]; then
		timeout 60 radosgw-admin -c "$conf" -n client.rgw user create --uid=s3cfs-test \
			--display-name="s3cachefs tests" --access-key="$RGW_AK" --secret-key="$RGW_SK" \
			>"$dir/log/user.out" 2>&1 ||
			{ do_stop; die "radosgw-admin user create failed: $(tail -n 5 "$dir/log/user.out")"; }
		local b
		for b in $RGW_BUCKETS; do
			curl -sS --fail-with-body -m 60 --aws-sigv4 "aws:amz:us-east-1:s3" \
				--user "$RGW_AK:$RGW_SK" -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' \
				-X PUT "$(endpoint)/$b" >"$dir/log/mb.out" 2>&1 ||
				{ do_stop; die "creating bucket $b failed: $(cat "$dir/log/mb.out")"; }
		done
		touch "$dir/ready"
	fi
	log "up on $(endpoint) in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
}

case "$cmd" in
start) do_start ;;
stop) do_stop ;;
status) alive mon.a && alive osd.0 && alive rgw && answers ;;
env)
	echo "export S3_ENDPOINT=$(endpoint) S3_PORT=$port S3_REGION=us-east-1"
	echo "export S3_AK=$RGW_AK S3_SK='$RGW_SK'"
	;;
esac
