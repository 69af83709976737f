#!/usr/bin/env bash
# Packs the build dependencies that a bare GPU machine lacks into .gpudeps/ (git-ignored), for machines
# that cannot install packages (the lent GPU machine of bench/gpu_check.sh has no network). It copies the
# files of this machine's Debian packages, keeping their layout under /usr, so their CMake config files
# find everything relative to the prefix:
#
#   bash scripts/gpu_deps.sh            # here, after scripts/setup.sh
#   bash bench/gpu_check.sh             # there: picks .gpudeps/ up as CMAKE_PREFIX_PATH
#
# Header-only libraries, GoogleTest's static libraries and Google Benchmark's shared library: about 15 MB.
set -euo pipefail
cd "$(dirname "$0")/.."
packages=(libeigen3-dev nlohmann-json3-dev libcli11-dev libgtest-dev libbenchmark-dev libbenchmark1debian)
rm -rf .gpudeps
mkdir -p .gpudeps
for pkg in "${packages[@]}"; do
  dpkg -L "$pkg" >/dev/null 2>&1 || { echo "gpu_deps: package $pkg is not installed; run scripts/setup.sh first" >&2; exit 1; }
  dpkg -L "$pkg" | grep '^/usr/' | grep -vE '^/usr/(share/(doc|man|lintian)|src)/' | while read -r path; do
    [ -f "$path" ] || [ -L "$path" ] || continue
    mkdir -p ".gpudeps/$(dirname "${path#/usr/}")"
    cp -P "$path" ".gpudeps/${path#/usr/}"
  done
done
du -sh .gpudeps
