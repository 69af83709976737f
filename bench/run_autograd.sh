#!/usr/bin/env bash
# Runs bench_autograd (checks first, then 5 repetitions of each benchmark, one thread on each side) and
# prints the medians and the tinyddp/LibTorch ratios. Usage, from anywhere:
#   bench/run_autograd.sh [build dir, default build-bench] [extra Google Benchmark flags...]
# The build dir must be a Release build:
#   cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release && ninja -C build-bench bench_autograd
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build-bench}"
shift || true
binary="$build/bench/bench_autograd"
[[ -x "$binary" ]] || { echo "error: $binary not found; build it first (see the header of $0)" >&2; exit 1; }
out="$build/bench/bench_autograd.json"

# One thread each: OpenBLAS (LibTorch's BLAS) and LibTorch's OpenMP pool read these at load time, before
# main() can call at::set_num_threads(1). tinyddp's Eigen kernels are built without OpenMP (one thread).
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
"$binary" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
  --benchmark_out="$out" --benchmark_out_format=json "$@"

python3 - "$out" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))["benchmarks"]
def by(agg):
    return {r["run_name"].removesuffix("/real_time"): r for r in runs if r.get("aggregate_name") == agg}
med, cv = by("median"), by("cv")
to_ms = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}
def ms(r, key):
    return r[key] * to_ms[r["time_unit"]]
CHAIN_OPS = 10000   # kChainOps in bench/bench_autograd.h
# Rows per graph: (label, value of a median run, unit). Wall times are what the benchmark measures; CPU
# times are steadier on a loaded machine (a descheduled thread stops its CPU clock but not the wall clock).
metrics = {
    "chain10k": [("per node, wall", lambda r: r["ns_per_node"], "ns"),
                 ("  forward", lambda r: r["fwd_ns_per_node"], "ns"),
                 ("  backward", lambda r: r["bwd_ns_per_node"], "ns"),
                 ("per node, CPU", lambda r: ms(r, "cpu_time") * 1e6 / CHAIN_OPS, "ns")],
    "mlp_step": [("per step, wall", lambda r: ms(r, "real_time"), "ms"),
                 ("per step, CPU", lambda r: ms(r, "cpu_time"), "ms")],
}
print("\nmedians of the repetitions; ratio = tinyddp / LibTorch (> 1: tinyddp slower); cv = spread of wall time")
print(f"{'benchmark':<26}{'tinyddp':>13}{'LibTorch':>13}{'ratio':>8}{'cv tinyddp':>12}{'cv LibTorch':>13}")
for graph, rows in metrics.items():
    ours, theirs = med.get(graph + "/tinyddp"), med.get(graph + "/libtorch")
    if ours is None:
        continue
    for label, get, unit in rows:
        a, b = get(ours), get(theirs) if theirs else None
        spread = [f"{cv[n]['real_time'] * 100:.1f}%" if n in cv and label.startswith("per") and "wall" in label else ""
                  for n in (graph + "/tinyddp", graph + "/libtorch")]
        print(f"{graph + ' ' + label:<26}{f'{a:.4g} {unit}':>13}{(f'{b:.4g} {unit}' if b else '-'):>13}"
              f"{(f'{a / b:.2f}' if b else '-'):>8}{spread[0]:>12}{spread[1]:>13}")
PY
