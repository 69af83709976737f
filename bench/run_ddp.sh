#!/usr/bin/env bash
# Runs the DDP and allreduce benchmarks and prints tinyddp / PyTorch ratios. Builds nothing. Usage:
#   bench/run_ddp.sh [build dir, default build]
#   RUNS=3 bench/run_ddp.sh build-bench      # the whole sequence 3 times; the summary shows medians of runs
# Build first (Release):
#   cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release && ninja -C build bench_allreduce bench_ddp
# Per run, in this order: bench_allreduce (thread, 2 ranks), bench_allreduce under mpirun -np 2 (mpi),
# bench_ddp (thread), bench_ddp under mpirun -np 2 (mpi), and bench/ddp_pytorch.py (gloo) when
# /usr/bin/python3 can import torch. Each writes JSON into $OUT_DIR (default <build>/bench/ddp-results);
# a standard-library python3 summarizes.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
bin="$build/bench"
runs="${RUNS:-1}"
out="${OUT_DIR:-$bin/ddp-results}"
for b in bench_allreduce bench_ddp; do
  [[ -x "$bin/$b" ]] || { echo "error: $bin/$b not found; build it first (see the header of $0)" >&2; exit 1; }
done
mkdir -p "$out"
rm -f "$out"/*.json

# One thread per rank everywhere: 2 ranks on a 2-core machine (tinyddp's Eigen kernels are single-threaded;
# PyTorch's OpenMP pool and OpenBLAS read these at load time).
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
# Open MPI refuses to run as root unless told.
if [[ $(id -u) == 0 ]]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
mpi=(mpirun --oversubscribe -np 2)
have_mpi=0
command -v mpirun > /dev/null && have_mpi=1
have_torch=0
[[ -x /usr/bin/python3 ]] && /usr/bin/python3 -c "import torch" 2> /dev/null && have_torch=1

for ((k = 1; k <= runs; ++k)); do
  echo "=== run $k of $runs ==="
  "$bin/bench_allreduce" --json "$out/allreduce_thread.$k.json"
  if ((have_mpi)); then
    "${mpi[@]}" "$bin/bench_allreduce" --json "$out/allreduce_mpi.$k.json" || echo "mpi allreduce failed or not built; skipped"
  fi
  "$bin/bench_ddp" --json "$out/ddp_thread.$k.json"
  if ((have_mpi)); then
    "${mpi[@]}" "$bin/bench_ddp" --json "$out/ddp_mpi.$k.json" || echo "mpi bench_ddp failed or not built; skipped"
  fi
  if ((have_torch)); then
    /usr/bin/python3 "$root/bench/ddp_pytorch.py" --json "$out/pytorch.$k.json"
  else
    echo "PyTorch peer skipped: /usr/bin/python3 cannot import torch (apt-get install python3-torch)"
  fi
done

python3 - "$out" "$runs" <<'PY'
import glob, json, os, statistics, sys
out, runs = sys.argv[1], int(sys.argv[2])

def load(kind):
    return [json.load(open(p)) for p in sorted(glob.glob(os.path.join(out, kind + ".*.json")))]

def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None

ar = {"thread": load("allreduce_thread"), "mpi": load("allreduce_mpi")}
ddp = {"thread": load("ddp_thread"), "mpi": load("ddp_mpi")}
pt = load("pytorch")
ar["gloo"] = [p["allreduce"] for p in pt]
ddp["gloo"] = [p["ddp"] for p in pt]

def fmt(x, spec):
    return "-" if x is None else format(x, spec)

def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b

print(f"\n##### summary: medians over {runs} run(s); ratio = tinyddp time / PyTorch gloo time (< 1: tinyddp faster)")
print("\n# allreduce time (us) and busbw (GB/s) per backend")
sizes = sorted({r["bytes"] for runs_ in ar.values() for j in runs_ for r in j["rows"]})
def ar_stat(backend, size, key):
    return med([r[key] for j in ar[backend] for r in j["rows"] if r["bytes"] == size])
print(f"{'size(B)':>10} {'thread us':>10} {'mpi us':>10} {'gloo us':>10} {'thread bw':>10} {'mpi bw':>8} {'gloo bw':>8}"
      f" {'roof':>7} {'thread/gloo':>12} {'mpi/gloo':>9}")
for s in sizes:
    t, m, g = (ar_stat(b, s, "time_us") for b in ("thread", "mpi", "gloo"))
    tb, mb, gb = (ar_stat(b, s, "busbw_gbs") for b in ("thread", "mpi", "gloo"))
    roof = ar_stat("thread", s, "roofline_gbs")
    print(f"{s:>10} {fmt(t, '.1f'):>10} {fmt(m, '.1f'):>10} {fmt(g, '.1f'):>10} {fmt(tb, '.3f'):>10} {fmt(mb, '.3f'):>8}"
          f" {fmt(gb, '.3f'):>8} {fmt(roof, '.1f'):>7} {fmt(ratio(t, g), '.3f'):>12} {fmt(ratio(m, g), '.3f'):>9}")

print("\n# DDP step (ms): forward + backward incl. communication, slowest rank, median")
names = [r["name"] for r in (ddp["thread"] or ddp["mpi"] or ddp["gloo"])[0]["rows"]] if any(ddp.values()) else []
def step(backend, name, key="step_ms"):
    return med([r[key] for j in ddp[backend] for r in j["rows"] if r["name"] == name])
print(f"{'variant':<24} {'buckets':>7} {'thread':>8} {'mpi':>8} {'gloo':>8} {'thread/gloo':>12} {'mpi/gloo':>9}")
for name in names:
    t, m, g = (step(b, name) for b in ("thread", "mpi", "gloo"))
    nb = next((r["buckets"] for j in ddp["thread"] + ddp["mpi"] for r in j["rows"] if r["name"] == name), None)
    print(f"{name:<24} {fmt(nb, 'd'):>7} {fmt(t, '.2f'):>8} {fmt(m, '.2f'):>8} {fmt(g, '.2f'):>8}"
          f" {fmt(ratio(t, g), '.3f'):>12} {fmt(ratio(m, g), '.3f'):>9}")

def per_run(backend, a, b, op):
    """Median over runs of op(step of variant a, step of variant b) computed within each run."""
    vals = []
    for j in ddp[backend]:
        rows = {r["name"]: r["step_ms"] for r in j["rows"]}
        if a in rows and b in rows:
            vals.append(op(rows[a], rows[b]))
    return med(vals)
d25, flat, local = "ddp cap 25 MB (default)", "flat allreduce", "local (no comm)"
print("\n# derived, within each run (then median of runs)")
print(f"{'':<44} {'thread':>8} {'mpi':>8} {'gloo':>8}")
rows = [("reducer overhead: step(ddp 25) / step(flat)", lambda a, b: a / b, d25, flat, ".3f"),
        ("DDP cost over compute: step(ddp 25) - local, ms", lambda a, b: a - b, d25, local, ".2f"),
        ("flat comm: step(flat) - step(local), ms", lambda a, b: a - b, flat, local, ".2f")]
for label, op, a, b, spec in rows:
    print(f"{label:<44} " + " ".join(f"{fmt(per_run(be, a, b, op), spec):>8}" for be in ("thread", "mpi", "gloo")))
PY
