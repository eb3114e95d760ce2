#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# t_deb: the Debian packages on a node (issue 35). dpkg -i of
# build/deb/s3cachefs-dkms_V_all.deb and s3cachefs_V_ARCH.deb (`make deb`
# builds them): DKMS builds the module for the running kernel, modprobe
# loads it, modinfo says VERSION. The mount helper /sbin/mount.s3cachefs,
# run by mount(8), says why a mount fails (a bad option, a cache on tmpfs,
# no daemon) with exit 32, not mount(8)'s "wrong fs type" line; where
# systemd runs (a stub bound over /bin/systemctl and a made-up
# /run/systemd/system: the guest has no systemd) it starts
# s3cachefsd.service, which runs the installed unit's ExecStart with
# /etc/default/s3cachefsd, and mounts once the daemon registers; -s, ro,
# noexec, nosuid, -o remount. README's fstab line with `mount -a`, a file
# read and compared. rmmod, dpkg --purge: the module, /usr/src, the DKMS
# tree, the programs and the unit are gone, and the helper (a copy) says
# that the module is not loaded. Whatever the test installed is undone on
# exit, failed or not.
# DKMS builds for the running kernel and the newest under /boot: dpkg runs
# with a /boot that shows only the running kernel's files (one build under
# TCG, not two in the 6.1 guest).
# timeout: 1800
. "$(dirname "$0")/../lib/common.sh"

VER=$(cat "$REPO/VERSION")
KVER=$(uname -r)
ARCH=$(dpkg --print-architecture 2>/dev/null)
DEB_USER=$REPO/build/deb/s3cachefs_${VER}_$ARCH.deb
DEB_DKMS=$REPO/build/deb/s3cachefs-dkms_${VER}_all.deb

need_vm
why=
for c in dpkg dkms modinfo modprobe depmod unshare; do
	command -v $c >/dev/null || why+=" no $c;"
done
[ -f "$DEB_USER" ] && [ -f "$DEB_DKMS" ] ||
	why+=" no build/deb/s3cachefs_${VER}_$ARCH.deb and s3cachefs-dkms_${VER}_all.deb (make deb);"
[ -e "/lib/modules/$KVER/build/include" ] ||
	why+=" no headers for $KVER at /lib/modules/$KVER/build;"
[ -f "/boot/config-$KVER" ] || why+=" no /boot/config-$KVER;"
if [ -n "$why" ]; then
	echo "1..0 # SKIP${why%;}"
	exit 0
fi
test_init deb

# The host's root is this guest's lower layer: the host's DKMS test
# (tests/dkms/test-dkms.sh, beside the guests in `make check`) shows
# through while it runs. Wait for it to end.
host_dkms() { [ -e /var/lib/dkms/s3cachefs ] || compgen -G '/usr/src/s3cachefs-*' >/dev/null; }
for ((i = 0; i < 300; i++)); do
	host_dkms || break
	sleep 1
done
if host_dkms; then
	echo "1..0 # SKIP /var/lib/dkms/s3cachefs or /usr/src/s3cachefs-* exist before the install (the host's DKMS test?)"
	exit 0
fi
plan 24

SRC=s3://$BUCKET/datasets
LOGS=$S3CFS_LOGDIR
CALLS=$WORK/systemctl.calls
PIDS=$WORK/daemon.pids
STUB=$WORK/systemctl
: >"$CALLS"
: >"$PIDS"
make_fixture "$WORK/f.bin" 300K deb >/dev/null
s3_put "$BUCKET" datasets/f.bin "$WORK/f.bin"
mkdir -p "$WORK/tmpfs" "$WORK/boot"
cp -p "/boot/config-$KVER" "$WORK/boot/"
[ -f "/boot/System.map-$KVER" ] && cp -p "/boot/System.map-$KVER" "$WORK/boot/"

stub_at= made_run_systemd= made_default= saved_fstab=
installed() {	# PACKAGE: dpkg knows it (installed, or half of it)
	dpkg-query -W -f '${Status}' "$1" 2>/dev/null | grep -qv ' not-installed$'
}
stop_stub_daemons() {
	local pid i
	while read -r pid; do
		kill -TERM "$pid" 2>/dev/null || continue
		for ((i = 0; i < 100; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null
	done <"$PIDS"
	: >"$PIDS"
}
unstub_systemd() {
	if [ -n "$stub_at" ]; then
		if [ "$stub_at" = made ]; then rm -f /bin/systemctl; else umount "$stub_at"; fi
		stub_at=
	fi
	case "$made_run_systemd" in
	all)	rm -rf /run/systemd ;;
	system)	rmdir /run/systemd/system ;;
	esac
	made_run_systemd=
}
# Undo everything, whatever state the test got to.
deb_cleanup() {
	local k
	mountpoint -q "$MNT" && { timeout 60 umount "$MNT" || umount -l "$MNT"; }
	mountpoint -q "$WORK/tmpfs" && umount "$WORK/tmpfs"
	unstub_systemd
	stop_stub_daemons
	[ -n "$saved_fstab" ] && cat "$saved_fstab" >/etc/fstab
	if [ -n "$made_default" ]; then
		if [ -e "$made_default" ]; then cp -p "$made_default" /etc/default/s3cachefsd
		else rm -f /etc/default/s3cachefsd; fi
	fi
	[ -d /sys/module/s3cachefs ] && timeout 60 rmmod s3cachefs
	if installed s3cachefs || installed s3cachefs-dkms; then
		echo "t_deb: cleanup: dpkg --purge" >&2
		DEBIAN_FRONTEND=noninteractive timeout 300 dpkg --purge \
			--force-depends,remove-reinstreq s3cachefs s3cachefs-dkms >&2
	fi
	if [ -e /var/lib/dkms/s3cachefs ] || [ -e "/usr/src/s3cachefs-$VER" ] ||
			compgen -G "/lib/modules/*/updates/dkms/s3cachefs.ko*" >/dev/null; then
		echo "t_deb: cleanup: removing what DKMS left" >&2
		timeout 120 dkms remove -m s3cachefs -v "$VER" --all >&2
		rm -rf /var/lib/dkms/s3cachefs "/usr/src/s3cachefs-$VER"
		for k in /lib/modules/*/updates/dkms/s3cachefs.ko*; do
			[ -e "$k" ] || continue
			rm -f "$k"
			k=${k#/lib/modules/}
			depmod -a "${k%%/*}"
		done
	fi
	test_cleanup
}
trap deb_cleanup EXIT
trap 'exit 143' TERM INT

# refused DESC WANT... -- CMD...: CMD exits 32 with every WANT in its
# stderr (the helper's or the module's own words), without mount(8)'s
# generic line, and nothing is mounted.
refused() {
	local desc=$1 wants=() out rc w bad=
	shift
	while [ "$1" != -- ]; do wants+=("$1"); shift; done
	shift
	out=$(timeout -k 5 120 "$@" 2>&1 >/dev/null)
	rc=$?
	for w in "${wants[@]}"; do
		grep -qF -- "$w" <<<"$out" || bad+=" no '$w';"
	done
	grep -q 'wrong fs type' <<<"$out" && bad+=" mount(8)'s generic line;"
	if mountpoint -q "$MNT"; then
		umount "$MNT"
		bad+=" something was mounted;"
	fi
	if [ "$rc" = 32 ] && [ -z "$bad" ]; then
		ok "$desc"
	else
		not_ok "$desc" "exit $rc (want 32);$bad stderr:
$out"
	fi
}

# --- install: DKMS builds the module --------------------------------------
t0=$SECONDS
if DEBIAN_FRONTEND=noninteractive timeout 1500 unshare -m --propagation private \
		bash -c 'mount --bind "$1" /boot && shift && exec dpkg -i "$@"' _ \
		"$WORK/boot" "$DEB_DKMS" "$DEB_USER" >"$LOGS/deb-dpkg-i.log" 2>&1; then
	ok "dpkg -i s3cachefs-dkms_${VER}_all.deb s3cachefs_${VER}_$ARCH.deb ($((SECONDS - t0)) s, the DKMS build included)"
else
	not_ok "dpkg -i s3cachefs-dkms_${VER}_all.deb s3cachefs_${VER}_$ARCH.deb" \
		"$(tail -n 20 "$LOGS/deb-dpkg-i.log")"
	cp /var/lib/dkms/s3cachefs/"$VER"/build/make.log "$LOGS/deb-dkms-make.log" 2>/dev/null &&
		diag "the DKMS build's log: $LOGS/deb-dkms-make.log"
fi
st=$(dkms status -m s3cachefs -v "$VER" -k "$KVER" 2>&1)
if grep -q "^s3cachefs/$VER, $KVER, [^:]*: installed" <<<"$st"; then
	ok "dkms status: s3cachefs/$VER installed for $KVER"
else
	not_ok "dkms status: s3cachefs/$VER installed for $KVER" "$st"
fi
path=$(modinfo -n s3cachefs 2>&1)
got=$(modinfo -F version s3cachefs 2>&1)
case "$path" in
"/lib/modules/$KVER/updates/dkms/s3cachefs.ko"*)
	is "$got" "$VER" "modinfo: the DKMS module (${path##*/}) has version $VER" ;;
*)	not_ok "modinfo: the DKMS module has version $VER" "modinfo -n: $path" ;;
esac
# A module of the build tree left loaded by an earlier test goes first.
[ -d /sys/module/s3cachefs ] && timeout 60 rmmod s3cachefs 2>"$WORK/modprobe.err"
if [ ! -d /sys/module/s3cachefs ] && timeout 120 modprobe s3cachefs 2>>"$WORK/modprobe.err" &&
		[ "$(cat /sys/module/s3cachefs/srcversion 2>/dev/null)" = "$(modinfo -F srcversion s3cachefs 2>/dev/null)" ]; then
	ok "modprobe s3cachefs loads the DKMS module"
	loaded=1
else
	not_ok "modprobe s3cachefs loads the DKMS module" "$(cat "$WORK/modprobe.err")"
	loaded=
fi
bad=
for f in /usr/sbin/s3cachefsd /usr/sbin/s3cachectl /sbin/mount.s3cachefs; do
	"$f" --version 2>&1 | grep -qw -- "$VER" || bad+=" $f --version;"
done
[ -f /lib/systemd/system/s3cachefsd.service ] || bad+=" no unit;"
[ -L /etc/systemd/system/multi-user.target.wants/s3cachefsd.service ] || bad+=" unit not enabled;"
is "$bad" "" "s3cachefsd, s3cachectl, mount.s3cachefs ($VER) and the enabled unit installed"

# --- the mount helper -------------------------------------------------------
if [ -z "$loaded" ]; then
	skip_n 13 "the mount helper and fstab" "the module did not load"
else
	OPTS=cache=$CACHE,fetch_timeout=20
	refused "a bad option: the module's 'Unknown parameter', exit 32" \
		"Unknown parameter 'bogus'" -- mount -t s3cachefs -o "$OPTS,bogus" "$SRC" "$MNT"
	mount -t tmpfs tmpfs "$WORK/tmpfs"
	refused "a cache on tmpfs: the module's reason, exit 32" \
		"is on tmpfs: the cache must be on ext4 or xfs" -- \
		mount -t s3cachefs -o "cache=$WORK/tmpfs" "$SRC" "$MNT"
	umount "$WORK/tmpfs"
	refused "no daemon, no systemd: 'not running', 'start s3cachefsd first', exit 32" \
		"s3cachefsd is not running" "start s3cachefsd first" -- \
		mount -t s3cachefs -o "$OPTS" "$SRC" "$MNT"

	# systemd, as the helper sees it: /run/systemd/system and a
	# systemctl that does what the unit says (EnvironmentFile=,
	# ExecStart=).
	cat >"$STUB" <<EOF
#!/bin/bash
echo "\$*" >>"$CALLS"
[ "\$*" = "start s3cachefsd.service" ] || exit 1
set -a
. /etc/default/s3cachefsd
set +a
exec_start=\$(sed -n 's/^ExecStart=//p' /lib/systemd/system/s3cachefsd.service)
eval "set -- \$exec_start"
setsid "\$@" </dev/null >>"$LOGS/s3cachefsd-deb-unit.log" 2>&1 &
echo \$! >>"$PIDS"
echo \$! >>"${S3CFS_PIDFILE:-/dev/null}"
EOF
	chmod 755 "$STUB"
	made_default=$WORK/default.orig
	[ -e /etc/default/s3cachefsd ] && cp -p /etc/default/s3cachefsd "$made_default"
	cat >/etc/default/s3cachefsd <<EOF
S3CACHEFSD_ARGS="--endpoint $S3_ENDPOINT --region $S3_REGION --allow-http --path-style -v"
AWS_ACCESS_KEY_ID=$S3_AK
AWS_SECRET_ACCESS_KEY=$S3_SK
EOF
	if [ -e /bin/systemctl ]; then
		stub_at=$(readlink -f /bin/systemctl)
		mount --bind "$STUB" "$stub_at" || stub_at=
	else
		stub_at=made
		cp "$STUB" /bin/systemctl
	fi
	if [ ! -d /run/systemd ]; then
		made_run_systemd=all
	elif [ ! -d /run/systemd/system ]; then
		made_run_systemd=system
	fi
	mkdir -p /run/systemd/system
	out=$(timeout -k 5 120 mount -t s3cachefs -o "$OPTS" "$SRC" "$MNT" 2>&1)
	rc=$?
	if [ $rc = 0 ] && mountpoint -q "$MNT" && [ "$(cat "$CALLS")" = "start s3cachefsd.service" ] &&
			grep -q 'starting s3cachefsd.service' <<<"$out"; then
		ok "systemd: the helper starts s3cachefsd.service and mounts once it registers"
	else
		not_ok "systemd: the helper starts s3cachefsd.service and mounts once it registers" \
			"exit $rc; systemctl called with: $(cat "$CALLS"); stderr:
$out"
	fi
	# Out of the way of dpkg's maintainer scripts (systemctl daemon-reload).
	unstub_systemd
	pid=$(head -n 1 "$PIDS")
	is "$(readlink "/proc/${pid:-0}/exe" 2>/dev/null)" /usr/sbin/s3cachefsd \
		"the daemon the unit started is the installed /usr/sbin/s3cachefsd"
	umount_s3 "$MNT"

	out=$(timeout -k 5 120 mount -s -t s3cachefs -o "$OPTS,ro,noexec,nosuid,no_such_option=1" \
		"$SRC" "$MNT" 2>&1)
	rc=$?
	if [ $rc = 0 ] && mountpoint -q "$MNT"; then
		ok "-s: an option the module does not know is left out, the mount made"
	else
		not_ok "-s: an option the module does not know is left out, the mount made" "exit $rc: $out"
	fi
	flags=$(awk -v m="$MNT" '$5 == m { print $6 }' /proc/self/mountinfo)
	miss=
	for f in ro noexec nosuid; do
		[[ ,$flags, == *,$f,* ]] || miss+=" $f"
	done
	is "$miss" "" "ro, noexec, nosuid in /proc/self/mountinfo ($flags)"
	out=$(timeout -k 5 120 mount -o remount,fetch_timeout=30 "$MNT" 2>&1) || diag "remount: $out"
	is "$(mnt_stat fetch_timeout_ms 2>&1)" 30000 "-o remount,fetch_timeout=30: fetch_timeout_ms is 30000"
	check "umount" umount_s3 "$MNT"

	# --- README's fstab line, with mount -a ---------------------------
	doc=$(grep -o "s3://mybucket/datasets /mnt/ds s3cachefs [^ ]* 0 0" "$REPO/README.md" | head -n 1)
	if [[ $doc == *cache=/var/cache/s3cachefs/ds,* && $doc == *_netdev* &&
			$doc == *x-systemd.requires=s3cachefsd.service* ]]; then
		ok "README's fstab line: cache=, _netdev, x-systemd.requires=s3cachefsd.service"
	else
		not_ok "README's fstab line: cache=, _netdev, x-systemd.requires=s3cachefsd.service" "found: '$doc'"
	fi
	line=${doc/s3:\/\/mybucket\/datasets/$SRC}
	line=${line/ \/mnt\/ds / $MNT }
	line=${line/\/var\/cache\/s3cachefs\/ds/$CACHE}
	saved_fstab=$WORK/fstab.orig
	cp /etc/fstab "$saved_fstab"
	echo "$line" >>/etc/fstab
	diag "fstab: $line"
	# -t s3cachefs: not the host's own lines (this guest's root is its
	# root, read-only, under an overlay).
	out=$(timeout -k 5 120 mount -a -t s3cachefs 2>&1)
	rc=$?
	if [ $rc = 0 ] && [ "$(findmnt -n -o FSTYPE "$MNT")" = s3cachefs ]; then
		ok "mount -a mounts the fstab line (mount(8) runs /sbin/mount.s3cachefs)"
	else
		not_ok "mount -a mounts the fstab line (mount(8) runs /sbin/mount.s3cachefs)" "exit $rc: $out"
	fi
	check "a file read through it is the object's bytes" cmp "$WORK/f.bin" "$MNT/f.bin"
	check "umount $MNT" umount_s3 "$MNT"
	cat "$saved_fstab" >/etc/fstab
	saved_fstab=
fi
stop_stub_daemons

# --- removal ----------------------------------------------------------------
check "rmmod s3cachefs" bash -c '[ ! -d /sys/module/s3cachefs ] || rmmod s3cachefs'
cp -p /sbin/mount.s3cachefs "$WORK/mount.s3cachefs" 2>/dev/null
if DEBIAN_FRONTEND=noninteractive timeout 600 dpkg --purge s3cachefs s3cachefs-dkms \
		>"$LOGS/deb-dpkg-purge.log" 2>&1; then
	ok "dpkg --purge s3cachefs s3cachefs-dkms"
else
	not_ok "dpkg --purge s3cachefs s3cachefs-dkms" "$(tail -n 20 "$LOGS/deb-dpkg-purge.log")"
fi
left=$(ls /lib/modules/"$KVER"/updates/dkms/s3cachefs.ko* 2>/dev/null)
modprobe -n -q s3cachefs 2>/dev/null && left+=" (modprobe -n finds one)"
is "$left" "" "purged: no s3cachefs.ko under /lib/modules/$KVER/updates/dkms, none for modprobe"
is "$(ls -d /usr/src/s3cachefs-* /var/lib/dkms/s3cachefs 2>/dev/null)" "" \
	"purged: /usr/src/s3cachefs-* and /var/lib/dkms/s3cachefs are gone"
is "$(ls -d /usr/sbin/s3cachefsd /usr/sbin/s3cachectl /sbin/mount.s3cachefs \
	/lib/systemd/system/s3cachefsd.service \
	/etc/systemd/system/multi-user.target.wants/s3cachefsd.service 2>/dev/null)" "" \
	"purged: the programs, the unit and its enablement are gone"
if [ -x "$WORK/mount.s3cachefs" ]; then
	refused "no module to load: the helper says the module is not loaded, exit 32" \
		"kernel module is not loaded" -- \
		"$WORK/mount.s3cachefs" "$SRC" "$MNT" -o "cache=$CACHE"
else
	not_ok "no module to load: the helper says the module is not loaded, exit 32" \
		"no /sbin/mount.s3cachefs was installed"
fi
tap_done
