#!/bin/sh
# Build IOR (mdtest, ior, md-workbench) from a release tarball into PREFIX.
#   build-ior.sh TARBALL PREFIX [JOBS]
# Needs a C compiler, make and an MPI with its compiler wrapper (mpicc): on Debian/Ubuntu
# gcc make libopenmpi-dev openmpi-bin; on Fedora/RHEL gcc make openmpi-devel; on SUSE gcc make
# openmpi4-devel. Used by install.sh on the controller and uploaded by `fsbench deploy` to hosts
# that must build mdtest themselves. Prints the installed mdtest's path on its last line.
set -eu
tarball=$1
prefix=$2
jobs=${3:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)}

# distributions that keep MPI outside PATH (Fedora, RHEL, SUSE) put mpicc under their MPI prefix
if ! command -v mpicc >/dev/null 2>&1; then
  for d in /usr/lib64/openmpi/bin /usr/lib/openmpi/bin /usr/lib64/mpi/gcc/openmpi4/bin /usr/lib64/mpi/gcc/openmpi/bin; do
    [ -x "$d/mpicc" ] && PATH="$d:$PATH" && export PATH && break
  done
fi
command -v mpicc >/dev/null 2>&1 || { echo "build-ior.sh: no mpicc: install the MPI development package" >&2; exit 3; }
command -v make >/dev/null 2>&1 || { echo "build-ior.sh: no make" >&2; exit 3; }

work=$(mktemp -d "${TMPDIR:-/tmp}/fsbench-ior-build.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
tar -xzf "$tarball" -C "$work"
src=$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -n 1)
[ -n "$src" ] && [ -x "$src/configure" ] || { echo "build-ior.sh: $tarball holds no configure script" >&2; exit 3; }
cd "$src"
./configure --prefix="$prefix" CC=mpicc >"$work/configure.log" 2>&1 || { tail -n 30 "$work/configure.log" >&2; exit 4; }
make -j"$jobs" >"$work/make.log" 2>&1 || { tail -n 30 "$work/make.log" >&2; exit 4; }
make install >"$work/install.log" 2>&1 || { tail -n 30 "$work/install.log" >&2; exit 4; }
echo "$prefix/bin/mdtest"
