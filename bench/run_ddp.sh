#!/usr/bin/env bash
# Runs the DDP and allreduce benchmarks, tinyddp and the PyTorch peer interleaved, and prints medians (min-max)
# and tinyddp / PyTorch ratios; then a scaling table. Builds nothing. Usage:
#   bench/run_ddp.sh [build dir, default build]
#   RUNS=5 bench/run_ddp.sh build            # 5 rounds (default 3); SCALING=0 skips the scaling table
#   ITERS=10 SCALING_ITERS=5 bench/run_ddp.sh # shorter: timed iterations per DDP variant, per scaling cell
# Build first (Release):
#   cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release && ninja -C build bench_allreduce bench_ddp
# Fair on a shared machine: round by round, never all of one side first. Each round runs the allreduce of
# every backend (thread: bench_allreduce --algorithm ring; mpi: under mpirun -np 2; gloo: bench/ddp_pytorch.py
# --only allreduce, when /usr/bin/python3 can import torch), then the DDP step of every backend, and the order
# within each group rotates from round to round (thread mpi gloo, mpi gloo thread, ...). A ratio is taken
# within each round, then the median (min-max) over rounds. Each run writes JSON into $OUT_DIR (default
# <build>/bench/ddp-results); a standard-library python3 summarizes.
# Scaling table (thread backend, SCALING=1, the default): bench_ddp --variants scaling for ranks 2, 3, 4 and
# hidden widths 192, 400, 768 (0.30M, 0.96M, 2.97M parameters): parallel efficiency = step(one process on
# N x 64) / step(ddp cap 25), per round inside each run, median (min-max).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
bin="$build/bench"
runs="${RUNS:-3}"
iters="${ITERS:-30}"
scaling="${SCALING:-1}"
scaling_iters="${SCALING_ITERS:-10}"
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
((have_torch)) || echo "PyTorch peer skipped: /usr/bin/python3 cannot import torch (apt-get install python3-torch)"

# One benchmark of one backend, in round $k: allreduce|ddp thread|mpi|gloo.
one() {
  local what=$1 backend=$2 k=$3
  case "$what/$backend" in
    allreduce/thread) "$bin/bench_allreduce" --algorithm ring --json "$out/allreduce_thread.$k.json" ;;
    ddp/thread) "$bin/bench_ddp" --iterations "$iters" --json "$out/ddp_thread.$k.json" ;;
    allreduce/mpi) ((have_mpi)) && { "${mpi[@]}" "$bin/bench_allreduce" --json "$out/allreduce_mpi.$k.json" \
      || echo "mpi allreduce failed or not built; skipped"; } ;;
    ddp/mpi) ((have_mpi)) && { "${mpi[@]}" "$bin/bench_ddp" --iterations "$iters" --json "$out/ddp_mpi.$k.json" \
      || echo "mpi bench_ddp failed or not built; skipped"; } ;;
    allreduce/gloo) ((have_torch)) && { timeout "$peer_timeout" /usr/bin/python3 "$root/bench/ddp_pytorch.py" \
      --only allreduce --json "$out/allreduce_gloo.$k.json" || echo "gloo allreduce failed or hung; skipped"; } ;;
    ddp/gloo) ((have_torch)) && { timeout "$peer_timeout" /usr/bin/python3 "$root/bench/ddp_pytorch.py" --only ddp \
      --iterations "$iters" --json "$out/ddp_gloo.$k.json" || echo "gloo DDP failed or hung; skipped"; } ;;
  esac
  return 0
}

# A gloo worker whose peer died spins until gloo's own 30-minute timeout: the peer gets PEER_TIMEOUT seconds
# (default 300), and a round without it is left out of its ratios.
peer_timeout="${PEER_TIMEOUT:-300}"
backends=(thread mpi gloo)
for ((k = 1; k <= runs; ++k)); do
  echo "=== round $k of $runs ==="
  for what in allreduce ddp; do
    for ((j = 0; j < 3; ++j)); do one "$what" "${backends[$(((j + k - 1) % 3))]}" "$k"; done
  done
done

if [[ "$scaling" == 1 ]]; then
  echo "=== scaling table (thread backend) ==="
  for ranks in 2 3 4; do
    for hidden in 192 400 768; do
      "$bin/bench_ddp" --ranks "$ranks" --hidden "$hidden" --variants scaling --iterations "$scaling_iters" \
        --json "$out/scaling_r${ranks}_h${hidden}.json" > /dev/null
    done
  done
fi

python3 - "$out" "$runs" <<'PY'
import glob, json, os, re, statistics, sys
out, runs = sys.argv[1], int(sys.argv[2])

def load(kind):
    """{round: json} for kind.<round>.json"""
    got = {}
    for p in glob.glob(os.path.join(out, kind + ".*.json")):
        got[int(p.rsplit(".", 2)[-2])] = json.load(open(p))
    return got

ar = {"thread": load("allreduce_thread"), "mpi": load("allreduce_mpi"),
      "gloo": {k: j["allreduce"] for k, j in load("allreduce_gloo").items()}}
ddp = {"thread": load("ddp_thread"), "mpi": load("ddp_mpi"),
       "gloo": {k: j["ddp"] for k, j in load("ddp_gloo").items() if j.get("ddp")}}
BACKENDS = ("thread", "mpi", "gloo")

def stat(values, spec):
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    return f"{format(statistics.median(values), spec)} ({format(min(values), spec)}-{format(max(values), spec)})"

def ar_row(backend, k, size):
    j = ar[backend].get(k)
    return next((r for r in j["rows"] if r["bytes"] == size), None) if j else None

def ddp_row(backend, k, name):
    j = ddp[backend].get(k)
    return next((r for r in j["rows"] if r["name"] == name), None) if j else None

def per_round(f):
    """f(k) for every round where it is defined."""
    return [v for v in (f(k) for k in range(1, runs + 1)) if v is not None]

def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b

print(f"\n##### summary: {runs} round(s), backends interleaved round by round; median (min-max) over rounds; "
      "ratio = tinyddp time / PyTorch gloo time within each round (< 1: tinyddp faster)")
print("\n# allreduce time (us) per backend, busbw / roofline of the thread backend (roofline: its memcpy)")
sizes = sorted({r["bytes"] for b in BACKENDS for j in ar[b].values() for r in j["rows"]})
cols = ["thread us", "mpi us", "gloo us", "thread busbw/roof", "thread/gloo", "mpi/gloo"]
print(f"{'size(B)':>10} " + " ".join(f"{c:>24}" for c in cols))
for s in sizes:
    t = lambda b: per_round(lambda k: (ar_row(b, k, s) or {}).get("time_us"))
    roof = per_round(lambda k: (lambda r: r and r["busbw_gbs"] / r["roofline_gbs"])(ar_row("thread", k, s)))
    rat = lambda b: per_round(lambda k: ratio((ar_row(b, k, s) or {}).get("time_us"),
                                              (ar_row("gloo", k, s) or {}).get("time_us")))
    cells = [stat(t("thread"), ".1f"), stat(t("mpi"), ".1f"), stat(t("gloo"), ".1f"), stat(roof, ".3f"),
             stat(rat("thread"), ".3f"), stat(rat("mpi"), ".3f")]
    print(f"{s:>10} " + " ".join(f"{c:>24}" for c in cells))

any_ddp = next((j for b in BACKENDS for j in ddp[b].values()), None)
if any_ddp:
    zero = any_ddp.get("zero_grad", "set_to_none=False")
    print(f"\n# DDP step (ms): forward + backward incl. communication, slowest rank; zero_grad({zero}) on every side")
    names = [r["name"] for r in any_ddp["rows"]]
    print(f"{'variant':<24} {'buckets':>7} " + " ".join(f"{c:>22}" for c in
          ("thread", "mpi", "gloo", "thread/gloo", "mpi/gloo")))
    for name in names:
        st = lambda b: per_round(lambda k: (ddp_row(b, k, name) or {}).get("step_ms"))
        rat = lambda b: per_round(lambda k: ratio((ddp_row(b, k, name) or {}).get("step_ms"),
                                                  (ddp_row("gloo", k, name) or {}).get("step_ms")))
        nb = next((r["buckets"] for b in ("thread", "mpi") for j in ddp[b].values() for r in j["rows"]
                   if r["name"] == name), None)
        cells = [stat(st("thread"), ".2f"), stat(st("mpi"), ".2f"), stat(st("gloo"), ".2f"),
                 stat(rat("thread"), ".3f"), stat(rat("mpi"), ".3f")]
        print(f"{name:<24} {'-' if nb is None else nb:>7} " + " ".join(f"{c:>22}" for c in cells))

    d25, flat, local = "ddp cap 25 MB (default)", "flat allreduce", "local (no comm)"
    def derived(b, f):
        return per_round(lambda k: (lambda j: f(j, {r["name"]: r["step_ms"] for r in j["rows"]}) if j else None)(
            ddp[b].get(k)))
    print("\n# derived, within each round (then median (min-max) over rounds)")
    print(f"{'':<52} " + " ".join(f"{b:>22}" for b in BACKENDS))
    rows = [("reducer overhead: step(ddp 25) / step(flat)", lambda j, r: r[d25] / r[flat], ".3f"),
            ("DDP cost over compute: step(ddp 25) - local, ms", lambda j, r: r[d25] - r[local], ".2f"),
            ("flat comm: step(flat) - step(local), ms", lambda j, r: r[flat] - r[local], ".2f"),
            ("parallel efficiency: step(one process) / step(ddp 25)", lambda j, r: j.get("efficiency"), ".3f")]
    for label, f, spec in rows:
        print(f"{label:<52} " + " ".join(f"{stat(derived(b, f), spec):>22}" for b in BACKENDS))

scal = {}
for p in glob.glob(os.path.join(out, "scaling_r*_h*.json")):
    j = json.load(open(p))
    scal[(j["ranks"], j["hidden"])] = j
if scal:
    ranks = sorted({r for r, _ in scal})
    hiddens = sorted({h for _, h in scal})
    print(f"\n# scaling, thread backend: parallel efficiency = throughput of N ranks / throughput of one process on "
          f"N x 64 = step(one process) / step(ddp cap 25), per round, median (min-max); {os.cpu_count()} cores; "
          "the one process is one thread, so the ideal is min(N, cores), not 1")
    print(f"{'params':>10} {'hidden':>6} " + " ".join(f"{f'{r} ranks':>22}" for r in ranks))
    for h in hiddens:
        params = next(j["params"] for (r, hh), j in scal.items() if hh == h)
        cells = []
        for r in ranks:
            j = scal.get((r, h))
            cells.append("-" if not j else f"{j['efficiency']:.3f} ({j['efficiency_min']:.3f}-{j['efficiency_max']:.3f})")
        print(f"{params / 1e6:>9.2f}M {h:>6} " + " ".join(f"{c:>22}" for c in cells))
    print(f"{'':>17} " + " ".join(f"{'step ddp/one (ms)':>22}" for _ in ranks))
    for h in hiddens:
        cells = []
        for r in ranks:
            j = scal.get((r, h))
            rows = {x["name"]: x["step_ms"] for x in j["rows"]} if j else {}
            cells.append("-" if not j else f"{rows['ddp cap 25 MB (default)']:.1f} / {rows['one process, N x B']:.1f}")
        print(f"{'':>10} {h:>6} " + " ".join(f"{c:>22}" for c in cells))
PY
