#!/usr/bin/env bash
# Installs what tinyddp needs on Debian 12 (as root), then configures and builds into build/.
# Idempotent: packages already present are not reinstalled; an existing build is reused.
#   bash scripts/setup.sh            # packages + configure + build
# Environment: BUILD_DIR (default build), BUILD_TYPE (default Release), JOBS (default nproc).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  cmake ninja-build g++ pkg-config
  libeigen3-dev          # CPU kernels
  libgtest-dev           # tests
  libbenchmark-dev       # bench/
  nlohmann-json3-dev     # JSON (golden data, --json)
  libcli11-dev           # the tinyddp command line
  libopenmpi-dev openmpi-bin   # the mpi process group
  pybind11-dev python3-dev     # the Python front end (python/)
  python3-pytest python3-numpy # its tests (tests/python)
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: missing Debian packages and not root; run as root or install: ${missing[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

BUILD_DIR=${BUILD_DIR:-build}
BUILD_TYPE=${BUILD_TYPE:-Release}
JOBS=${JOBS:-$(nproc)}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE"
cmake --build "$BUILD_DIR" -j "$JOBS"
