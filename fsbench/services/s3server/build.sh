#!/bin/sh
# Build fsbench-s3 (this folder's Go program) into DEST (default /usr/local/bin), with the Go toolchain
# found on PATH or in /usr/local/go. Needs Go >= 1.24 (gofakes3's go.mod) and the Go module proxy (or
# a filled module cache). Exit status 3: no suitable Go here (the s3 service then uses moto_server).
#   sh fsbench/services/s3server/build.sh [DEST]
set -eu
dest=${1:-/usr/local/bin}
here=$(cd "$(dirname "$0")" && pwd)
go=$(command -v go 2>/dev/null || true)
[ -n "$go" ] || { [ -x /usr/local/go/bin/go ] && go=/usr/local/go/bin/go; } || true
if [ -z "$go" ]; then
  echo "build.sh: no Go toolchain (go) found" >&2
  exit 3
fi
version=$("$go" env GOVERSION 2>/dev/null | sed 's/^go//')
major=$(echo "$version" | cut -d. -f1)
minor=$(echo "$version" | cut -d. -f2)
if [ "${major:-0}" -lt 1 ] || { [ "${major:-0}" -eq 1 ] && [ "${minor:-0}" -lt 24 ]; }; then
  echo "build.sh: Go $version is older than 1.24" >&2
  exit 3
fi
cd "$here"
mkdir -p "$dest"
GOFLAGS=-mod=mod CGO_ENABLED=0 "$go" build -trimpath -ldflags "-s -w" -o "$dest/fsbench-s3" .
echo "build.sh: $dest/fsbench-s3 built with Go $version" >&2
