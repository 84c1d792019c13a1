#!/usr/bin/env bash
# Release build of ahp: a static binary (CGO_ENABLED=0), -trimpath,
# stripped, with its version, commit and date stamped into main.version,
# main.commit and main.date (cmd/ahp/version.go; `ahp version` prints them).
#
#   packaging/release.sh [-o OUTPUT]        (default: dist/ahp)
#
# VERSION, COMMIT and DATE are taken from the environment when set (the
# Dockerfile passes them: its build has no .git), otherwise from git: the
# version is `git describe --tags --always --dirty` ("dev-" before a bare
# commit hash when there is no tag), the commit is HEAD, the date is HEAD's
# commit time in UTC, so that two builds of one commit are the same bytes.
# GOOS and GOARCH pass through to go build (e.g. GOOS=darwin GOARCH=arm64).
#
# A CGO_ENABLED=0 binary reads no Python code through tree-sitter: agents'
# Python is then an unknown effect, held for a human (docs/effects.md).
set -euo pipefail
cd "$(dirname "$0")/.."

out=dist/ahp
while [ $# -gt 0 ]; do
	case "$1" in
	-o) out=${2:?-o needs a path}; shift 2 ;;
	-o=*) out=${1#-o=}; shift ;;
	-h | --help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "release.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
	esac
done

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

mkdir -p "$(dirname "$out")"
CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags="$ldflags" -o "$out" ./cmd/ahp
echo "built $out: ahp $VERSION${COMMIT:+ commit $COMMIT}${DATE:+ $DATE}" >&2
