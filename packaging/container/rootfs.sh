#!/usr/bin/env bash
# Lays out the file system of the container image under ROOT: the release
# binary, a passwd/group naming the non-root user ahp (65532), the CA
# certificates of the build machine (for TLS to PostgreSQL or an OTLP
# collector), /tmp, and the data directory /var/lib/ahp owned by ahp with
# mode 0700. The Dockerfile's build stage runs it; .ci/run runs it too, to
# build and test the same image without the Go base image (see
# packaging/container/smoke.sh).
#
#   packaging/container/rootfs.sh ROOT
#
# Needs root for the ownership of /var/lib/ahp (it says so otherwise).
set -euo pipefail
root=${1:?usage: rootfs.sh ROOT}
cd "$(dirname "$0")/../.."

uid=65532
mkdir -p "$root/usr/local/bin" "$root/etc/ssl/certs" "$root/var/lib/ahp" "$root/tmp"
packaging/release.sh -o "$root/usr/local/bin/ahp"
printf 'root:x:0:0:root:/root:/sbin/nologin\nahp:x:%d:%d:ahp harness:/var/lib/ahp:/sbin/nologin\n' "$uid" "$uid" >"$root/etc/passwd"
printf 'root:x:0:\nahp:x:%d:\n' "$uid" >"$root/etc/group"
if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
	cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/"
fi
chmod 1777 "$root/tmp"
chmod 0700 "$root/var/lib/ahp"
if [ "$(id -u)" = 0 ]; then
	chown "$uid:$uid" "$root/var/lib/ahp"
else
	echo "rootfs.sh: not root: $root/var/lib/ahp stays owned by $(id -un), not $uid" >&2
fi
