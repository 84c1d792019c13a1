#!/bin/sh
# Runs the whole comparison of bench/compare on this machine, loopback only:
# builds ahp and the driver, builds Open Policy Agent from the Go module
# proxy into a temporary directory (never a dependency of this module),
# then races every configuration, ROUNDS rounds interleaved, and writes the
# table to stdout, the raw runs to $OUT/results.json (default: the temporary
# directory, removed at exit) and the chart to $SVG (bench/compare.svg).
# Bounded: the driver gives up after 30 minutes.
#
#   bench/compare/run.sh                 # 5 rounds
#   ROUNDS=3 DURATION=1s bench/compare/run.sh
set -eu
cd "$(dirname "$0")/../.."

OPA_VERSION=${OPA_VERSION:-v1.22.2}
ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-2s}
AGENTS=${AGENTS:-1,16}
SVG=${SVG:-bench/compare.svg}
work=$(mktemp -d)
OUT=${OUT:-$work}
trap 'rm -rf "$work"' EXIT

echo "building ahp, the driver and opa $OPA_VERSION in $work" >&2
go build -o "$work/ahp" ./cmd/ahp
go build -o "$work/compare" ./bench/compare
# Outside the module, so that go.mod and go.sum stay as they are.
(cd "$work" && GOBIN="$work" go install "github.com/open-policy-agent/opa@$OPA_VERSION")
git diff --quiet -- go.mod go.sum || { echo "go.mod or go.sum changed: OPA must not become a dependency" >&2; exit 1; }

"$work/opa" version | head -1 >&2
python3 --version >&2
"$work/compare" -ahp "$work/ahp" -opa "$work/opa" -python python3 -dir bench/compare \
	-rounds "$ROUNDS" -d "$DURATION" -agents "$AGENTS" -protocol-only -timeout 30m \
	-out "$OUT/results.json" -svg "$SVG"
