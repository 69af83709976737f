#!/usr/bin/env bash
# Runs bench_autograd (checks first, then the benchmarks, one thread on each side) ROUNDS times, tinyddp and
# LibTorch interleaved, and prints medians (min-max) over the rounds and the tinyddp/LibTorch ratios. Usage:
#   bench/run_autograd.sh [build dir, default build-bench] [extra Google Benchmark flags...]
#   ROUNDS=9 bench/run_autograd.sh build --benchmark_filter=chain
# The build dir must be a Release build:
#   cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release && ninja -C build-bench bench_autograd
# Fair on a shared machine: each round is one run of the binary with one repetition of every benchmark, and
# the binary runs each graph's pair back to back (tinyddp, then LibTorch), so the two sides alternate round by
# round (ABAB...) instead of all of one side's repetitions before the other's; load that comes and goes hits
# both. A ratio is taken within each round, then the median (min-max) over rounds.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build-bench}"
shift || true
binary="$build/bench/bench_autograd"
[[ -x "$binary" ]] || { echo "error: $binary not found; build it first (see the header of $0)" >&2; exit 1; }
rounds="${ROUNDS:-5}"
out="$build/bench/autograd-results"
mkdir -p "$out"
rm -f "$out"/round.*.json

# One thread each: OpenBLAS (LibTorch's BLAS) and LibTorch's OpenMP pool read these at load time, before
# main() can call at::set_num_threads(1). tinyddp's Eigen kernels are built without OpenMP (one thread).
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
for ((k = 1; k <= rounds; ++k)); do
  echo "=== round $k of $rounds ==="
  "$binary" --benchmark_repetitions=1 --benchmark_out="$out/round.$k.json" --benchmark_out_format=json "$@"
done

python3 - "$out" <<'PY'
import glob, json, os, statistics, sys
out = sys.argv[1]
rounds = [json.load(open(p))["benchmarks"] for p in sorted(glob.glob(os.path.join(out, "round.*.json")))]
to_ms = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}
def ms(r, key):
    return r[key] * to_ms[r["time_unit"]]
CHAIN_OPS = 10000   # kChainOps in bench/bench_autograd.h
# Rows per graph: (label, value of one run, unit). Wall times are what the benchmark measures; CPU times are
# steadier on a loaded machine (a descheduled thread stops its CPU clock but not the wall clock).
metrics = {
    "chain10k": [("per node, wall", lambda r: r["ns_per_node"], "ns"),
                 ("  forward", lambda r: r["fwd_ns_per_node"], "ns"),
                 ("  backward", lambda r: r["bwd_ns_per_node"], "ns"),
                 ("per node, CPU", lambda r: ms(r, "cpu_time") * 1e6 / CHAIN_OPS, "ns")],
    "mlp_step": [("per step, wall", lambda r: ms(r, "real_time"), "ms"),
                 ("per step, CPU", lambda r: ms(r, "cpu_time"), "ms")],
    # The step's two large GEMMs alone (Eigen vs LibTorch's OpenBLAS): time per product, and its rate.
    "gemm_fwd": [("per product", lambda r: ms(r, "real_time") * 1e3, "us"),
                 ("  GFLOP/s", lambda r: r["GFLOPs"], "GF")],
    "gemm_wgrad": [("per product", lambda r: ms(r, "real_time") * 1e3, "us"),
                   ("  GFLOP/s", lambda r: r["GFLOPs"], "GF")],
}
def by_name(run):
    return {r["name"].removesuffix("/real_time"): r for r in run if r.get("run_type", "iteration") == "iteration"}
runs = [by_name(run) for run in rounds]
def stat(values, spec):
    if not values:
        return "-"
    return f"{format(statistics.median(values), spec)} ({format(min(values), spec)}-{format(max(values), spec)})"
SPEC = {"ns": ".0f", "ms": ".3f", "us": ".1f", "GF": ".1f"}
print(f"\n{len(runs)} rounds, tinyddp and LibTorch interleaved; median (min-max) over rounds; "
      "ratio = tinyddp / LibTorch within each round (> 1: tinyddp slower)")
print(f"{'benchmark':<26}{'tinyddp':>30}{'LibTorch':>30}{'ratio':>24}")
for graph, rows in metrics.items():
    for label, get, unit in rows:
        ours = [get(r[graph + "/tinyddp"]) for r in runs if graph + "/tinyddp" in r]
        theirs = [get(r[graph + "/libtorch"]) for r in runs if graph + "/libtorch" in r]
        ratios = [get(r[graph + "/tinyddp"]) / get(r[graph + "/libtorch"]) for r in runs
                  if graph + "/tinyddp" in r and graph + "/libtorch" in r and unit != "GF"]   # rates: no ratio
        if not ours:
            continue
        theirs_text = stat(theirs, SPEC[unit]) + " " + unit if theirs else "-"
        print(f"{graph + ' ' + label:<26}{stat(ours, SPEC[unit]) + ' ' + unit:>30}{theirs_text:>30}"
              f"{stat(ratios, '.3f'):>24}")

# The compute roofline (bench/fma_roofline.h): one core's FMA rate, measured in the same rounds. Each side's
# GEMM rate as a fraction of it, and the MLP step's floor: its GEMM flops at the roofline (two products of
# B*D*H multiply-adds, three of B*H*C: bench_autograd.h), everything else free.
peaks = [r["fma_roofline"]["GFLOPs"] for r in runs if "fma_roofline" in r]
if peaks:
    B, D, H, C = 64, 784, 256, 10
    mlp_gemm_flops = 2 * (2 * B * D * H) + 3 * (2 * B * H * C)
    print(f"\nFMA roofline, one core: {stat(peaks, '.1f')} GFLOP/s")
    for graph in ("gemm_fwd", "gemm_wgrad"):
        for side in ("tinyddp", "libtorch"):
            fractions = [r[f"{graph}/{side}"]["GFLOPs"] / r["fma_roofline"]["GFLOPs"]
                         for r in runs if f"{graph}/{side}" in r and "fma_roofline" in r]
            if fractions:
                print(f"  {graph} {side:<9} at {stat(fractions, '.3f')} of the roofline")
    def floor_ms(r):   # GFLOPs is a rate in GFLOP/s
        return mlp_gemm_flops / (r["fma_roofline"]["GFLOPs"] * 1e9) * 1e3
    floors = [floor_ms(r) for r in runs if "fma_roofline" in r]
    print(f"  mlp_step floor (its GEMMs at the roofline, nothing else): {stat(floors, '.3f')} ms")
    for side in ("tinyddp", "libtorch"):
        ratios = [ms(r[f"mlp_step/{side}"], "real_time") / floor_ms(r)
                  for r in runs if f"mlp_step/{side}" in r and "fma_roofline" in r]
        if ratios:
            print(f"  mlp_step {side:<9} at {stat(ratios, '.3f')} x that floor")
PY
