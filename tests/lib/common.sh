# SPDX-License-Identifier: GPL-2.0
# Source this from every test: . "$(dirname "$0")/../lib/common.sh"
# It brings in the TAP, S3, fixture and module/daemon helpers and
# test_init, which a VM test calls first.
#
#   test_init NAME   TEST_NAME=NAME; BUCKET (a fresh bucket named after the
#                    test), CACHE (/nvme/cache/NAME, empty), MNT
#                    (/mnt/NAME), WORK (scratch dir on the NVMe ext4); on
#                    exit: unmount MNT, stop the daemon. Exits with a TAP
#                    skip if not inside the test VM.
#   need_vm          exit with "1..0 # SKIP" outside the VM
#   helper NAME      path of a compiled test helper (build/tests/NAME)
#
# Paths provided by tests/vm/guest-main.sh: S3CFS_NVME (the ext4 on the
# NVMe disk, /nvme), S3CFS_NVME_XFS (an xfs on it, when mkfs.xfs exists),
# S3_DATA/S3_PORT (the s3rver instance).

REPO=${REPO:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
. "$REPO/tests/lib/tap.sh"
. "$REPO/tests/lib/s3.sh"
. "$REPO/tests/lib/fixture.sh"
. "$REPO/tests/lib/s3cfs.sh"

export REPO
export S3CFS_NVME=${S3CFS_NVME:-/nvme}
export S3CFS_HELPERS=${S3CFS_HELPERS:-$REPO/build/tests}
export S3CFS_KO S3CFS_DAEMON S3CFS_LOGDIR S3CFS_MOUNT_WAIT

helper() {
	echo "$S3CFS_HELPERS/$1"
}

need_vm() {
	if [ -z "${VM_OUT:-}" ] || [ ! -e /proc/modules ] || [ "$(id -u)" != 0 ]; then
		echo "1..0 # SKIP needs the test VM (tests/run.sh)"
		exit 0
	fi
}

test_cleanup() {
	if [ -n "${MNT:-}" ] && mountpoint -q "$MNT" 2>/dev/null; then
		umount_s3 "$MNT" || timeout 30 umount -l "$MNT"
	fi
	stop_daemon
}

test_init() {
	need_vm
	TEST_NAME=$1
	BUCKET=$(echo "t-$1" | tr '_A-Z' '-a-z')
	CACHE=$S3CFS_NVME/cache/$1
	WORK=$S3CFS_NVME/work/$1
	MNT=/mnt/$1
	export TEST_NAME BUCKET CACHE WORK MNT
	rm -rf "$CACHE" "$WORK"
	mkdir -p "$CACHE" "$WORK" "$MNT"
	trap test_cleanup EXIT
	s3_mb "$BUCKET" 2>/dev/null || true
}

# check/check_fails run their command in a child bash: give it the helpers.
export -f $(compgen -A function)
