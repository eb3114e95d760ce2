# SPDX-License-Identifier: GPL-2.0
# Test data.
#
#   make_fixture FILE SIZE [SEED]   FILE gets SIZE bytes of pseudo-random data
#                                   (the same for the same SEED); prints its
#                                   sha256. SIZE takes K/M/G suffixes (binary).
#   sha256 FILE                     the sha256 of FILE
#   to_bytes SIZE                   "1M" -> 1048576
#
# The generator is build/tests/mkdata (xorshift64*, built by tests/run.sh)
# or, without it, AES-128-CTR over zeros keyed from SEED (slow under TCG);
# either way a fixture can be regenerated instead of stored.

to_bytes() {
	local s=$1 n
	case "$s" in
	*K) n=$(( ${s%K} << 10 )) ;;
	*M) n=$(( ${s%M} << 20 )) ;;
	*G) n=$(( ${s%G} << 30 )) ;;
	*)  n=$s ;;
	esac
	echo "$n"
}

sha256() {
	sha256sum <"$1" | cut -d' ' -f1
}

make_fixture() {
	local file=$1 size seed=${3:-$1} key
	size=$(to_bytes "$2")
	key=$(printf '%s' "$seed" | sha256sum | cut -c1-32)
	mkdir -p "$(dirname "$file")" || return 1
	if [ "$size" = 0 ]; then
		: >"$file"
	elif [ -x "${S3CFS_HELPERS:-}/mkdata" ]; then
		"$S3CFS_HELPERS/mkdata" "$size" "$seed" >"$file"
	else
		openssl enc -aes-128-ctr -K "$key" -iv 0 -nosalt </dev/zero 2>/dev/null |
			head -c "$size" >"$file"
	fi
	[ "$(stat -c %s "$file")" = "$size" ] || { echo "make_fixture: short $file" >&2; return 1; }
	sha256 "$file"
}
