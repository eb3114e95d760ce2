#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_writeback_conf: write-back chosen per bucket in the daemon's
# configuration ([bucket NAME] writeback = true, upload_delay = S). A
# writable mount of that bucket whose options say neither writeback nor
# nowriteback is write-back, with that delay; nowriteback and
# upload_delay= on the mount win; a read-only mount and another bucket's
# mount are not write-back.
# timeout: 300
. "$(dirname "$0")/../lib/common.sh"
test_init writeback_conf
plan 13

CTL=$REPO/tools/s3cachectl/s3cachectl
OTHER=$BUCKET-other
s3_mb "$OTHER" 2>/dev/null
mkdir -p "$WORK/other-cache"
make_fixture "$WORK/f1" 300000 conf-1 >/dev/null
make_fixture "$WORK/f2" 300000 conf-2 >/dev/null
cat >"$WORK/s3cachefsd.conf" <<EOF
[bucket $BUCKET]
writeback = true
upload_delay = 7
EOF

opts_of() {	# MNT: its options in /proc/mounts
	awk -v m="$1" '$2 == m && $3 == "s3cachefs" { print $4 }' /proc/mounts
}

check "module loads" load_module
check_sh "daemon starts with the bucket's writeback = true, upload_delay = 7" \
	start_daemon --config "$WORK/s3cachefsd.conf"

check "writable mount, no writeback option" \
	mount_s3 "$BUCKET" "$MNT" "cache=$CACHE,meta_ttl=3600,writable"
is "$(opts_of "$MNT" | grep -o 'writeback,upload_delay=[0-9]*')" "writeback,upload_delay=7" \
	"the bucket's configuration made it write-back, upload_delay=7"
cp "$WORK/f1" "$MNT/a.bin"
is "$(mnt_stat wb_queued) $(s3_absent a.bin && echo absent)" "1 absent" \
	"a close is acknowledged, the upload queued"
check "sync uploads it" "$CTL" sync "$MNT"
check "S3 has it" s3_is a.bin "$WORK/f1"
umount_s3 "$MNT"

check "writable,nowriteback mount" \
	mount_s3 "$BUCKET" "$MNT" "cache=$CACHE,meta_ttl=3600,writable,nowriteback"
cp "$WORK/f2" "$MNT/b.bin"
is "$(opts_of "$MNT" | grep -c ",writeback,") $(s3_is b.bin "$WORK/f2" && echo uploaded)" "0 uploaded" \
	"nowriteback wins: not write-back, the close uploaded"
umount_s3 "$MNT"

mount_s3 "$BUCKET" "$MNT" "cache=$CACHE,meta_ttl=3600,writable,upload_delay=2"
is "$(opts_of "$MNT" | grep -o 'writeback,upload_delay=[0-9]*')" "writeback,upload_delay=2" \
	"upload_delay= on the mount wins over the bucket's"
umount_s3 "$MNT"

mount_s3 "$BUCKET" "$MNT" "cache=$CACHE,meta_ttl=3600"
is "$(opts_of "$MNT" | grep -c ",writeback,")" 0 "a read-only mount of the bucket is not write-back"
umount_s3 "$MNT"

mount_s3 "$OTHER" "$MNT" "cache=$WORK/other-cache,meta_ttl=3600,writable"
is "$(opts_of "$MNT" | grep -c ",writeback,")" 0 "a writable mount of another bucket is not"
check "umount" umount_s3 "$MNT"
tap_done
