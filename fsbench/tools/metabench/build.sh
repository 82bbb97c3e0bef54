#!/bin/sh
# Build metabench from its one C file into DEST.
#   build.sh SOURCE DEST
# Needs a C compiler (cc or gcc) and the C library's headers: on Debian/Ubuntu gcc libc6-dev, on
# Fedora/RHEL and SUSE gcc glibc-devel. Used by install.sh on the controller and uploaded by
# `fsbench deploy` to hosts that must build metabench themselves. Prints the built version last.
set -eu
src=$1
dest=$2
cc=$(command -v cc || command -v gcc) || { echo "build.sh: no C compiler (cc or gcc): install gcc" >&2; exit 3; }
out=$(mktemp "${TMPDIR:-/tmp}/metabench-build.XXXXXX")
trap 'rm -f "$out"' EXIT INT TERM
"$cc" -std=gnu11 -O2 -Wall -Wextra -pthread -o "$out" "$src" -lm
mkdir -p "$(dirname "$dest")"
install -m 755 "$out" "$dest"
"$dest" --version
