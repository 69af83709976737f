#!/usr/bin/env bash
# The GPU check: on a machine with one NVIDIA GPU, builds tinyddp with CUDA, runs the CUDA tests and the
# GPU benchmarks, and writes logs and JSON under $OUT (default ./gpu-check-out). Sized to finish within
# 8 minutes on a 16-core H200 machine; each stage has its own time limit and a failed stage does not stop
# the ones after it. Exit status: 0 when every stage passed. $OUT gets few files (a lent machine returns at
# most 8): summary.txt (machine and verdicts), stages.log (every stage's output), and the JSON results.
#
#   bash bench/gpu_check.sh                      # needs the packages of scripts/setup.sh, or .gpudeps/
#   OUT=/tmp/r bash bench/gpu_check.sh           # results elsewhere
#   TINYDDP_GPU_CHECK_CMAKE_ARGS="-DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON" bash bench/gpu_check.sh
#
# Machines that cannot install packages (no network) take the dependencies packed by scripts/gpu_deps.sh
# in .gpudeps/; if the build fails there and .gpudeps/prebuilt/ exists (scripts/gpu_deps.sh --prebuilt),
# the check runs those binaries instead and says so. NCCL is looked for in the CUDA toolkit and, failing
# that, in a Python NCCL wheel (nvidia-nccl-cu13, as PyTorch installs it); without NCCL the nccl tests and
# benchmark skip.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-check-out}
BUILD=${BUILD:-build-gpu}
mkdir -p "$OUT"
summary="$OUT/summary.txt"
stages="$OUT/stages.log"
logs=$(mktemp -d)
: >"$summary"
: >"$stages"
status=0

stage() {   # stage NAME SECONDS COMMAND...: runs with a time limit, logs to $logs/NAME.log and stages.log
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS
  echo "===== $name: $*" >>"$stages"
  timeout --kill-after=10 "$limit" "$@" 2>&1 | tee "$logs/$name.log" >>"$stages"
  local rc=${PIPESTATUS[0]}
  local verdict=ok
  [ $rc -eq 0 ] || { verdict="FAILED (exit $rc$([ $rc -eq 124 ] && echo ', time limit'))"; status=1; }
  printf '%-16s %4ds  %s\n' "$name" $((SECONDS - t0)) "$verdict" | tee -a "$summary"
  return $rc
}

{
  echo "date: $(date -u)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv 2>&1
  echo "nvcc: $(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null)"; nvcc --version 2>/dev/null | tail -1
  echo "cmake: $(cmake --version | head -1)"; echo "cxx: $(c++ --version | head -1)"; echo "cores: $(nproc)"
} >>"$summary" 2>&1
cat "$summary"

cmake_args=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=${CUDA_ARCH:-90})
command -v nvcc >/dev/null || [ ! -x /usr/local/cuda/bin/nvcc ] || cmake_args+=(-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc)
if [ -d .gpudeps ]; then
  cmake_args+=(-DCMAKE_PREFIX_PATH="$PWD/.gpudeps")
  export LD_LIBRARY_PATH="$PWD/.gpudeps/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
# NCCL: the toolkit's, else a Python wheel's (headers and libnccl.so.2 side by side under nvidia/nccl).
nccl_h=$(ls /usr/local/cuda/include/nccl.h /usr/include/nccl.h 2>/dev/null | head -1)
if [ -z "$nccl_h" ]; then
  nccl_h=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "include", "nccl.h"))' 2>/dev/null)
  [ -f "$nccl_h" ] || nccl_h=$(find /usr /opt -name nccl.h -path '*nvidia*' 2>/dev/null | head -1)
  if [ -n "$nccl_h" ] && [ -f "$nccl_h" ]; then
    nccl_lib=$(ls "$(dirname "$nccl_h")"/../lib/libnccl.so* 2>/dev/null | head -1)
    cmake_args+=(-DNCCL_INCLUDE_DIR="$(dirname "$nccl_h")" ${nccl_lib:+-DNCCL_LIBRARY="$nccl_lib"})
    [ -n "$nccl_lib" ] && export LD_LIBRARY_PATH="$(dirname "$nccl_lib"):${LD_LIBRARY_PATH:-}"
  fi
fi
echo "nccl.h: ${nccl_h:-not found}" | tee -a "$summary"
# shellcheck disable=SC2206
cmake_args+=(${TINYDDP_GPU_CHECK_CMAKE_ARGS:-})
# Shared CUDA libraries the binaries load (cuBLAS, NCCL): where the loader does not know them, find them.
for lib in libcublas.so.13 libcublasLt.so.13 libnccl.so.2; do
  ldconfig -p 2>/dev/null | grep -q "$lib" && continue
  found=$(find /usr/local /usr/lib /opt -name "$lib" 2>/dev/null | head -1)
  [ -n "$found" ] && export LD_LIBRARY_PATH="$(dirname "$found")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
echo "LD_LIBRARY_PATH: ${LD_LIBRARY_PATH:-}" >>"$summary"

targets=(test_cuda test_kernels bench_gpu bench_kernels)
bin_test="$BUILD/tests" bin_bench="$BUILD/bench"
if ! { stage configure 90 cmake -S . -B "$BUILD" "${cmake_args[@]}" &&
       stage build 200 cmake --build "$BUILD" -j "$(nproc)" --target "${targets[@]}"; }; then
  grep -B2 -A12 -E "error|Error" "$logs/configure.log" "$logs/build.log" 2>/dev/null | head -60
  [ -d .gpudeps/prebuilt ] || exit 1
  echo "the build failed here: running the binaries of .gpudeps/prebuilt/ instead" | tee -a "$summary"
  bin_test=.gpudeps/prebuilt/bin bin_bench=.gpudeps/prebuilt/bin
  export LD_LIBRARY_PATH="$PWD/.gpudeps/prebuilt/lib:${LD_LIBRARY_PATH:-}"
fi
grep -E "tinyddp:" "$logs/configure.log" 2>/dev/null | tee -a "$summary"

stage test_cuda 150 "$bin_test/test_cuda" --gtest_brief=1 --gtest_output="json:$OUT/test_cuda.json"
stage test_kernels 60 "$bin_test/test_kernels" --gtest_brief=1 --gtest_output="json:$OUT/test_kernels.json"
stage bench_gpu 90 "$bin_bench/bench_gpu" --json "$OUT/bench_gpu.json"
stage bench_kernels 120 "$bin_bench/bench_kernels" --benchmark_filter='gpu/' --benchmark_repetitions=5 \
  --benchmark_report_aggregates_only=true --benchmark_out="$OUT/bench_kernels.json" --benchmark_out_format=json

echo "== tails =="
for f in test_cuda test_kernels bench_gpu bench_kernels; do echo "--- $f"; tail -30 "$logs/$f.log"; done
echo "== summary =="; cat "$summary"
exit $status
