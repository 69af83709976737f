#!/usr/bin/env bash
# Packs the build dependencies that a bare GPU machine lacks into .gpudeps/ (git-ignored), for machines
# that cannot install packages (the lent GPU machine of bench/gpu_check.sh has no network). It copies the
# files of this machine's Debian packages, keeping their layout under /usr, so their CMake config files
# find everything relative to the prefix:
#
#   bash scripts/gpu_deps.sh                    # here, after scripts/setup.sh
#   bash scripts/gpu_deps.sh --prebuilt build   # also the GPU check's binaries from a CUDA build dir
#   bash bench/gpu_check.sh                     # there: picks .gpudeps/ up as CMAKE_PREFIX_PATH
#
# Header-only libraries, GoogleTest's static libraries and Google Benchmark's shared library: about 15 MB.
# With --prebuilt, .gpudeps/prebuilt/ holds the check's binaries and the shared libraries they need beyond
# the C library and the CUDA ones (Open MPI's, Google Benchmark's): gpu_check.sh falls back to them when the
# build there fails (build them with -DTINYDDP_NATIVE=OFF: the other machine's CPU may differ).
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
if [ "${1:-}" = "--prebuilt" ]; then
  build=${2:?usage: gpu_deps.sh --prebuilt BUILD_DIR}
  mkdir -p .gpudeps/prebuilt/bin .gpudeps/prebuilt/lib
  for exe in tests/test_cuda tests/test_kernels bench/bench_gpu bench/bench_kernels; do
    [ -x "$build/$exe" ] || { echo "gpu_deps: $build/$exe is missing; build it first" >&2; exit 1; }
    strip -o ".gpudeps/prebuilt/bin/$(basename "$exe")" "$build/$exe"
    # Shared libraries outside glibc, the compiler's runtime and CUDA's (those come with the GPU machine).
    ldd "$build/$exe" | awk '/=> \//{print $3}' |
      grep -vE '/(libc|libm|libdl|librt|libpthread|libgcc_s|libstdc\+\+|ld-linux[^/]*|libcu[A-Za-z]*|libnccl)\.so' |
      while read -r lib; do cp -L "$lib" .gpudeps/prebuilt/lib/; done || true   # none is fine
  done
fi
du -sh .gpudeps
