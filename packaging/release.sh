#!/usr/bin/env bash
# Release build of ahp: a binary that reads the Python code agents run
# (tree-sitter-python, through cgo), -trimpath, stripped, with its version,
# commit and date stamped into main.version, main.commit and main.date
# (cmd/ahp/version.go; `ahp version` prints them and whether Python is read).
#
#   packaging/release.sh [-o OUTPUT] [--no-python]     (default: dist/ahp)
#
# VERSION, COMMIT and DATE are taken from the environment when set (the
# Dockerfile passes them: its build has no .git), otherwise from git: the
# version is `git describe --tags --always --dirty` ("dev-" before a bare
# commit hash when there is no tag), the commit is HEAD, the date is HEAD's
# commit time in UTC, so that two builds of one commit are the same bytes.
#
# Targets: GOOS and GOARCH pass through to go build (default: this machine).
# The build uses cgo, so it needs a C compiler for the target: $CC when set,
# else the Go default for this machine's own target, else for linux/arm64
# and linux/amd64 Debian's cross compiler (aarch64-linux-gnu-gcc from
# gcc-aarch64-linux-gnu and libc6-dev-arm64-cross; x86_64-linux-gnu-gcc from
# gcc-x86-64-linux-gnu and libc6-dev-amd64-cross). A linux binary is linked
# statically (glibc, -extldflags -static, with the netgo and osusergo tags so
# that nothing needs glibc's run-time loader) and checked to be static; a
# darwin binary links the system's libSystem (macOS has no static libc) and
# is built on a Mac, or with CC naming a macOS cross compiler. A target with
# no C compiler fails the build: it never ships quietly without the reader.
# Each binary that can run here (this machine's target, or linux/arm64 under
# qemu-aarch64) is run once: `ahp version` must say "python: read".
#
# --no-python builds without cgo (CGO_ENABLED=0) for a target that cannot
# have a C compiler: such a binary reads no Python code, holds every piece
# of it for a human, and says "python: NOT read" in `ahp version`. Setting
# CGO_ENABLED=0 in the environment without --no-python is refused.
set -euo pipefail
cd "$(dirname "$0")/.."

out=dist/ahp
python=1
while [ $# -gt 0 ]; do
	case "$1" in
	-o) out=${2:?-o needs a path}; shift 2 ;;
	-o=*) out=${1#-o=}; shift ;;
	--no-python) python=0; shift ;;
	-h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
	*) echo "release.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
done
fail() { echo "release.sh: $*" >&2; exit 1; }

if [ -z "${VERSION:-}${COMMIT:-}${DATE:-}" ] && git rev-parse --git-dir >/dev/null 2>&1; then
	COMMIT=$(git rev-parse HEAD)
	DATE=$(TZ=UTC git show -s --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ HEAD)
	VERSION=$(git describe --tags --always --dirty 2>/dev/null || true)
	case "$VERSION" in
	v[0-9]*) ;;
	*) VERSION="dev-$VERSION" ;;
	esac
fi
VERSION=${VERSION:-dev}

ldflags="-s -w -X main.version=$VERSION"
[ -n "${COMMIT:-}" ] && ldflags="$ldflags -X main.commit=$COMMIT"
[ -n "${DATE:-}" ] && ldflags="$ldflags -X main.date=$DATE"

goos=$(go env GOOS)
goarch=$(go env GOARCH)
native=0
[ "$goos/$goarch" = "$(go env GOHOSTOS)/$(go env GOHOSTARCH)" ] && native=1
tags=""
if [ "$python" = 0 ]; then
	export CGO_ENABLED=0
	echo "release.sh: --no-python: $goos/$goarch built without cgo; it reads no Python code (every piece of it is held for a human)" >&2
else
	[ "${CGO_ENABLED:-1}" = 1 ] || fail "CGO_ENABLED=$CGO_ENABLED in the environment: the release build reads Python through cgo; use --no-python to build without the Python reader"
	export CGO_ENABLED=1
	if [ -z "${CC:-}" ] && [ "$native" = 0 ]; then
		case "$(go env GOHOSTOS)/$goos/$goarch" in
		linux/linux/arm64) CC=aarch64-linux-gnu-gcc ;;
		linux/linux/amd64) CC=x86_64-linux-gnu-gcc ;;
		*) fail "no C compiler known for $goos/$goarch from $(go env GOHOSTOS)/$(go env GOHOSTARCH): set CC to one (the Python reader is C, through cgo), build on a $goos/$goarch machine, or pass --no-python to build one that reads no Python" ;;
		esac
	fi
	[ -n "${CC:-}" ] && export CC
	cc=$(go env CC)
	command -v "${cc%% *}" >/dev/null 2>&1 ||
		fail "C compiler $cc for $goos/$goarch not found (Debian: gcc for this machine, gcc-aarch64-linux-gnu and libc6-dev-arm64-cross for linux/arm64); or pass --no-python to build one that reads no Python"
	tags=netgo,osusergo
	if [ "$goos" = linux ]; then
		ldflags="$ldflags -linkmode external -extldflags -static"
	fi
fi

mkdir -p "$(dirname "$out")"
go build -trimpath -buildvcs=false ${tags:+-tags "$tags"} -ldflags="$ldflags" -o "$out" ./cmd/ahp

# The artifact: static on linux, and, where it can run here, reading Python.
if [ "$goos" = linux ] && command -v readelf >/dev/null 2>&1; then
	segs=$(LC_ALL=C readelf -l "$out") || fail "readelf -l $out failed"
	case "$segs" in *"program interpreter"*) fail "$out is dynamically linked" ;; esac
fi
run=()
if [ "$native" = 1 ]; then
	run=("$out")
elif [ "$goos/$goarch" = linux/arm64 ] && [ "$(go env GOHOSTOS)" = linux ] && command -v qemu-aarch64 >/dev/null 2>&1; then
	run=(qemu-aarch64 "$out")
fi
want="python: read"
[ "$python" = 1 ] || want="python: NOT read"
if [ "${#run[@]}" -gt 0 ]; then
	v=$("${run[@]}" version) || fail "$out version failed"
	printf '%s\n' "$v" | grep -q "^$want" || fail "$out does not say \"$want\": $v"
	reads="$want (checked: ${run[*]} version)"
else
	reads="$want (not run here: no way to run $goos/$goarch)"
fi
echo "built $out: ahp $VERSION${COMMIT:+ commit $COMMIT}${DATE:+ $DATE}, $goos/$goarch, $reads" >&2
