#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# test-tls.sh - the S3 client (s3cachectl ls/head/cat, s3cachefsd
# --selftest) verifies the server's TLS certificate. Host only, no module,
# no network: a throwaway CA signs a certificate for 127.0.0.1/localhost;
# nginx (tools/setup.sh installs nginx-light) terminates TLS on loopback
# and proxies to tests/s3server/fakes3.py. Proves:
#   a) --ca-bundle with the right CA: ls, head, cat work, bytes match;
#   b) an unrelated CA: refused with a certificate error, exit non-zero;
#   c) no bundle (the system store): the private CA is not trusted;
#   d) $AWS_CA_BUNDLE works as --ca-bundle does (and --ca-bundle wins);
#   e) a name the certificate does not carry is refused (127.0.0.2, and a
#      certificate issued to another host name).
# Prints TAP; exit 1 if anything failed. nginx and fakes3 are stopped on
# every exit path.
#
#   tests/tls/test-tls.sh
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
ctl=${S3CTL:-$repo/tools/s3cachectl/s3cachectl}
daemon=${S3CFSD:-$repo/daemon/s3cachefsd}
work=$(mktemp -d "${TMPDIR:-/tmp}/s3d-tls.XXXXXX")
bucket=tlsbucket

n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
	n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"
	[ -n "${2:-}" ] && sed 's/^/# /' <<<"$2"
	return 0
}

nginx_pid= s3_pid=
cleanup() {
	local p
	for p in $nginx_pid $s3_pid; do
		kill "$p" 2>/dev/null
	done
	for p in $nginx_pid $s3_pid; do
		wait "$p" 2>/dev/null
	done
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
bail() {
	echo "Bail out! $1"
	[ -n "${2:-}" ] && sed 's/^/# /' <<<"$2"
	exit 1
}

# Free loopback ports (bound and released: a race only with other tests).
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

for t in openssl nginx curl python3; do
	command -v "$t" >/dev/null || bail "$t is not installed (tools/setup.sh)"
done
if [ ! -x "$ctl" ] && ! make -s -C "$repo/tools/s3cachectl" s3cachectl >"$work/build.log" 2>&1; then
	bail "cannot build s3cachectl" "$(tail -n 20 "$work/build.log")"
fi
if [ ! -x "$daemon" ] && ! make -s -C "$repo/daemon" s3cachefsd >"$work/build.log" 2>&1; then
	bail "cannot build s3cachefsd" "$(tail -n 20 "$work/build.log")"
fi

# --- certificates ---------------------------------------------------------
mkca() {	# NAME CN
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout "$work/$1.key" -out "$work/$1.pem" -days 2 -subj "/CN=$2" \
		-addext basicConstraints=critical,CA:TRUE \
		-addext keyUsage=critical,keyCertSign,cRLSign
}
mkcert() {	# NAME CA SAN
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout "$work/$1.key" -out "$work/$1.csr" -subj "/CN=$1" &&
	printf 'subjectAltName=%s\nbasicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n' \
		"$3" >"$work/$1.ext" &&
	openssl x509 -req -in "$work/$1.csr" -CA "$work/$2.pem" -CAkey "$work/$2.key" \
		-set_serial "0x$(openssl rand -hex 8)" -days 2 -extfile "$work/$1.ext" \
		-out "$work/$1.pem"
}
{
	mkca ca "s3cachefs test CA" &&
	mkca otherca "unrelated test CA" &&
	mkcert server ca "IP:127.0.0.1,DNS:localhost" &&
	mkcert other ca "DNS:s3.other.example"
} >"$work/openssl.log" 2>&1 || bail "openssl could not make the test certificates" "$(tail -n 20 "$work/openssl.log")"

# --- fakes3 behind nginx --------------------------------------------------
# The objects, and each one's bytes in $work/obj/MD5-OF-KEY for expect().
mkdir -p "$work/obj"
python3 - "$work" "$bucket" <<'EOF'
import hashlib, json, sys
objs = {
    "hello.txt": "hello over TLS\n",
    "dir/with space é.txt": "a key that needs encoding\n",
    "dir/big.txt": "".join("line %07d of the TLS test object\n" % i for i in range(40000)),
}
json.dump({"bucket": sys.argv[2], "objects": objs}, open(sys.argv[1] + "/manifest.json", "w"))
for k, v in objs.items():
    open(sys.argv[1] + "/obj/" + hashlib.md5(k.encode()).hexdigest(), "wb").write(v.encode())
EOF
s3port=$(free_port)
python3 "$repo/tests/s3server/fakes3.py" "$s3port" "$work/manifest.json" \
	--log "$work/fakes3.log" </dev/null >/dev/null 2>&1 &
s3_pid=$!

port=$(free_port)
port2=$(free_port)
[ "$port" != "$port2" ] || port2=$(free_port)
mkdir -p "$work/nginx"
# As root nginx would hand its workers to "nobody", who cannot read $work.
user=
[ "$(id -u)" = 0 ] && user="user $(id -un) $(id -gn);"
cat >"$work/nginx.conf" <<EOF
$user
daemon off;
worker_processes 1;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log info;
events { worker_connections 64; }
http {
	access_log $work/nginx/access.log;
	client_body_temp_path $work/nginx/body;
	proxy_temp_path $work/nginx/proxy;
	fastcgi_temp_path $work/nginx/fastcgi;
	uwsgi_temp_path $work/nginx/uwsgi;
	scgi_temp_path $work/nginx/scgi;
	ssl_protocols TLSv1.2 TLSv1.3;
	proxy_http_version 1.1;
	proxy_set_header Host \$http_host;
	proxy_set_header Connection "";
	proxy_buffering off;
	server {
		listen 127.0.0.1:$port ssl;
		listen 127.0.0.2:$port ssl;
		ssl_certificate $work/server.pem;
		ssl_certificate_key $work/server.key;
		location / { proxy_pass http://127.0.0.1:$s3port; }
	}
	server {
		listen 127.0.0.1:$port2 ssl;
		ssl_certificate $work/other.pem;
		ssl_certificate_key $work/other.key;
		location / { proxy_pass http://127.0.0.1:$s3port; }
	}
}
EOF
nginx -p "$work/nginx" -e "$work/nginx/error.log" -c "$work/nginx.conf" \
	</dev/null >"$work/nginx.out" 2>&1 &
nginx_pid=$!

up=
for ((i = 0; i < 100; i++)); do
	if curl -sf -o /dev/null -m 2 --cacert "$work/ca.pem" \
		"https://127.0.0.1:$port/$bucket?list-type=2"; then
		up=1
		break
	fi
	kill -0 "$nginx_pid" 2>/dev/null && kill -0 "$s3_pid" 2>/dev/null || break
	sleep 0.1
done
if [ -n "$up" ]; then
	ok "setup: nginx serves fakes3 over TLS on 127.0.0.1:$port (curl --cacert agrees)"
else
	bail "nginx or fakes3 did not come up" "$(cat "$work/nginx.out" "$work/nginx/error.log" 2>/dev/null | tail -n 20)"
fi

# --- the client -----------------------------------------------------------
# Clean environment: no AWS_* or OpenSSL overrides from the caller; fakes3
# does not check signatures, but the client signs.
cenv=(env -u AWS_CA_BUNDLE -u AWS_PROFILE -u AWS_SESSION_TOKEN -u SSL_CERT_FILE
      -u SSL_CERT_DIR -u CURL_CA_BUNDLE AWS_ACCESS_KEY_ID=AKIDTLSTEST
      AWS_SECRET_ACCESS_KEY=tlstestsecret AWS_REGION=us-east-1
      AWS_SHARED_CREDENTIALS_FILE=/nonexistent)
ep=https://127.0.0.1:$port
# Requests fakes3 has answered so far (a refused client must add none).
served() { grep -cE '"(GET|HEAD) ' "$work/fakes3.log" 2>/dev/null; }
# [VAR=VALUE...] PROGRAM ARGS...: stdout to $work/out, stderr to $work/err.
client() {
	local pre=()
	while [[ "${1:-}" == *=* && "${1:-}" != -* ]]; do
		pre+=("$1"); shift
	done
	served_before=$(served)
	timeout 60 "${cenv[@]}" "${pre[@]}" "$@" >"$work/out" 2>"$work/err"
}
s3ctl() {	# [VAR=VALUE...] s3cachectl ARGS...
	local pre=()
	while [[ "${1:-}" == *=* && "${1:-}" != -* ]]; do
		pre+=("$1"); shift
	done
	client "${pre[@]}" "$ctl" "$@"
}
expect() {	# KEY: the object's bytes
	cat "$work/obj/$(printf %s "$1" | md5sum | cut -d' ' -f1)"
}
# DESC: the last s3ctl/selftest run worked and printed what $work/want holds.
check_out() {
	local rc=$1 desc=$2
	if [ "$rc" = 0 ] && cmp -s "$work/out" "$work/want"; then
		ok "$desc"
	else
		not_ok "$desc" "exit $rc; stderr: $(head -c 2000 "$work/err")
$(cmp "$work/out" "$work/want" 2>&1)"
	fi
}
# DESC: the last run failed, printed nothing, said why (the certificate)
# and sent no request over the connection it refused.
check_refused() {
	local rc=$1 desc=$2
	if [ "$rc" != 0 ] && [ ! -s "$work/out" ] && [ "$(served)" = "$served_before" ] &&
	   grep -qiE "certificate|SSL peer|subject name" "$work/err"; then
		ok "$desc"
		grep -iE -m1 "certificate|SSL peer|subject name" "$work/err" | sed 's/^/#   /'
	else
		not_ok "$desc" "exit $rc; stdout $(wc -c <"$work/out") bytes; requests served $served_before -> $(served); stderr: $(head -c 2000 "$work/err")"
	fi
}

# a) the right CA
s3ctl ls -r --endpoint "$ep" --path-style --ca-bundle "$work/ca.pem" "s3://$bucket/"
rc=$?
if [ $rc = 0 ] && grep -q ' hello.txt$' "$work/out" && grep -q ' dir/big.txt$' "$work/out" &&
   grep -q ' dir/with space é.txt$' "$work/out"; then
	ok "a) ls -r with --ca-bundle (right CA) lists the bucket"
else
	not_ok "a) ls -r with --ca-bundle (right CA) lists the bucket" "exit $rc
$(cat "$work/out" "$work/err")"
fi
s3ctl head --endpoint "$ep" --path-style --ca-bundle "$work/ca.pem" "s3://$bucket/dir/big.txt"
rc=$?
etag=\"$(expect dir/big.txt | md5sum | cut -d' ' -f1)\"
if [ $rc = 0 ] && grep -qx "Size: $(expect dir/big.txt | wc -c)" "$work/out" &&
   grep -qxF "ETag: $etag" "$work/out"; then
	ok "a) head with --ca-bundle: size and ETag"
else
	not_ok "a) head with --ca-bundle: size and ETag" "exit $rc
$(cat "$work/out" "$work/err")"
fi
for key in hello.txt "dir/with space é.txt" dir/big.txt; do
	expect "$key" >"$work/want"
	s3ctl cat --endpoint "$ep" --path-style --ca-bundle "$work/ca.pem" "s3://$bucket/$key"
	check_out $? "a) cat $key with --ca-bundle: $(wc -c <"$work/want") bytes match"
done
# The same for the daemon's client (its S3 options are parsed apart).
expect dir/big.txt >"$work/want"
client "$daemon" --endpoint "$ep" --path-style \
	--ca-bundle "$work/ca.pem" --selftest get "$bucket" dir/big.txt
check_out $? "a) s3cachefsd --selftest get with --ca-bundle: bytes match"
s3ctl cat --endpoint https://localhost:$port --path-style --ca-bundle "$work/ca.pem" "s3://$bucket/hello.txt"
expect hello.txt >"$work/want"
check_out $? "a) cat via https://localhost (the certificate's DNS name)"

# b) an unrelated CA
s3ctl ls --endpoint "$ep" --path-style --ca-bundle "$work/otherca.pem" "s3://$bucket/"
check_refused $? "b) ls with an unrelated CA is refused"
s3ctl head --endpoint "$ep" --path-style --ca-bundle "$work/otherca.pem" "s3://$bucket/hello.txt"
check_refused $? "b) head with an unrelated CA is refused"
s3ctl cat --endpoint "$ep" --path-style --ca-bundle "$work/otherca.pem" "s3://$bucket/hello.txt"
check_refused $? "b) cat with an unrelated CA is refused"
client "$daemon" --endpoint "$ep" --path-style \
	--ca-bundle "$work/otherca.pem" --selftest head "$bucket" hello.txt
check_refused $? "b) s3cachefsd --selftest head with an unrelated CA is refused"

# c) the system store does not know the test CA
s3ctl cat --endpoint "$ep" --path-style "s3://$bucket/hello.txt"
check_refused $? "c) cat without a bundle (system store) is refused"
s3ctl ls --endpoint "$ep" --path-style "s3://$bucket/"
check_refused $? "c) ls without a bundle (system store) is refused"

# d) $AWS_CA_BUNDLE
expect dir/big.txt >"$work/want"
s3ctl AWS_CA_BUNDLE="$work/ca.pem" cat --endpoint "$ep" --path-style "s3://$bucket/dir/big.txt"
check_out $? "d) cat with AWS_CA_BUNDLE (right CA): bytes match"
client AWS_CA_BUNDLE="$work/ca.pem" "$daemon" --endpoint "$ep" --path-style \
	--selftest get "$bucket" dir/big.txt
check_out $? "d) s3cachefsd --selftest get with AWS_CA_BUNDLE: bytes match"
s3ctl AWS_CA_BUNDLE="$work/otherca.pem" cat --endpoint "$ep" --path-style "s3://$bucket/hello.txt"
check_refused $? "d) cat with AWS_CA_BUNDLE (unrelated CA) is refused"
expect hello.txt >"$work/want"
s3ctl AWS_CA_BUNDLE="$work/otherca.pem" cat --endpoint "$ep" --path-style \
	--ca-bundle "$work/ca.pem" "s3://$bucket/hello.txt"
check_out $? "d) --ca-bundle wins over AWS_CA_BUNDLE"

# e) names the certificate does not carry
s3ctl cat --endpoint "https://127.0.0.2:$port" --path-style --ca-bundle "$work/ca.pem" "s3://$bucket/hello.txt"
check_refused $? "e) cat via 127.0.0.2 (not in the certificate) is refused"
s3ctl cat --endpoint "https://127.0.0.1:$port2" --path-style --ca-bundle "$work/ca.pem" "s3://$bucket/hello.txt"
check_refused $? "e) cat from a server whose certificate names s3.other.example is refused"
client "$daemon" --endpoint "https://127.0.0.2:$port" --path-style \
	--ca-bundle "$work/ca.pem" --selftest head "$bucket" hello.txt
check_refused $? "e) s3cachefsd --selftest head via 127.0.0.2 is refused"

echo "1..$n"
[ "$failed" = 0 ]
