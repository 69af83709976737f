"""The MLP 784-256-10 SGD step (batch 64) written in Python on tinyddp, against the same step through the C++ API
(bench_python_step, the C++ objects the binding forwards to): what the Python layer costs.

    cmake --build build --target tinyddp_python tinyddp_python_package bench_python_step
    /usr/bin/python3 bench/python_step.py [--build build] [--rounds 9] [--steps 200]   # needs NumPy

Check, then time: from one set of weights (NumPy, seed 1234) both sides run 20 steps and must give the same
losses bit for bit (the same engine calls). Then `--rounds` rounds, each timing `--steps` steps (after 10
warm-up steps) of each side in its own process, one thread each (OMP_NUM_THREADS=1), the order alternating
from round to round so that load changes hit both sides alike. Prints ms per step as the median over rounds
(min-max) and the ratio Python/C++ (median of the per-round ratios; the target is <= 1.10). Results:
bench/README.md. Against PyTorch the engine is measured by bench_autograd / bench_autograd_torch (LibTorch).

The script is also its own worker: `--worker --weights FILE --mode check|time --steps N` runs the Python side.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

B, D, H, C = 64, 784, 256, 10
LR = 0.01         # bench_autograd's kLearningRate: the loss decreases at every step on this batch
CHECK_STEPS = 20
WARMUP_STEPS = 10


# ---------------------------------------------------------------- the worker: one side, the PyTorch-style step

def worker(weights_path, mode, steps):
    import time
    import numpy as np
    import tinyddp as torch
    import tinyddp.nn as nn
    import tinyddp.nn.functional as F

    raw = np.fromfile(weights_path, dtype=np.uint8)
    arrays, offset = [], 0
    for dtype, shape in ((np.float32, (B, D)), (np.int64, (B,)), (np.float32, (H, D)), (np.float32, (H,)),
                         (np.float32, (C, H)), (np.float32, (C,))):
        n = int(np.prod(shape)) * np.dtype(dtype).itemsize
        arrays.append(raw[offset:offset + n].view(dtype).reshape(shape).copy())
        offset += n
    x, y = torch.from_numpy(arrays[0]), torch.from_numpy(arrays[1])
    model = nn.Sequential(nn.Linear(D, H), nn.ReLU(), nn.Linear(H, C))
    with torch.no_grad():
        for p, a in zip(model.parameters(), arrays[2:]):
            p.copy_(torch.from_numpy(a))
    opt = torch.optim.SGD(model.parameters(), lr=LR)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    if mode == "check":
        for _ in range(steps):
            print(f"{step().item():.9g}")
        return
    for _ in range(WARMUP_STEPS):
        step()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    print(f"{(time.perf_counter() - start) / steps:.9g}")


# ---------------------------------------------------------------- the driver

def write_weights(path):
    import numpy as np
    rng = np.random.RandomState(1234)

    def uniform(shape, fan_in):   # nn.Linear's default init bounds
        bound = 1.0 / np.sqrt(fan_in)
        return rng.uniform(-bound, bound, size=shape).astype(np.float32)

    x = rng.standard_normal((B, D)).astype(np.float32)
    y = rng.randint(0, C, size=(B,)).astype(np.int64)
    with open(path, "wb") as f:
        for a in (x, y, uniform((H, D), D), uniform((H,), D), uniform((C, H), H), uniform((C,), H)):
            f.write(a.tobytes())


def run(cmd, env):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env)
    return [float(v) for v in out.stdout.split()]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default=os.path.join(os.path.dirname(__file__), "..", "build"))
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument("--steps", type=int, default=200, help="timed steps per side and round")
    p.add_argument("--worker", action="store_true", help="run the Python side (used by the driver)")
    p.add_argument("--weights")
    p.add_argument("--mode", choices=["check", "time"])
    a = p.parse_args()
    if a.worker:
        worker(a.weights, a.mode, a.steps)
        return 0

    build = os.path.abspath(a.build)
    binary = os.path.join(build, "bench", "bench_python_step")
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               PYTHONPATH=os.path.join(build, "python"), PYTHONDONTWRITEBYTECODE="1")
    with tempfile.TemporaryDirectory() as tmp:
        weights = os.path.join(tmp, "mlp.bin")
        write_weights(weights)
        me = os.path.abspath(__file__)
        sides = {"C++": lambda mode, n: [binary, weights, mode, str(n)],
                 "Python": lambda mode, n: [sys.executable, me, "--worker", "--weights", weights,
                                            "--mode", mode, "--steps", str(n)]}

        losses = {name: run(cmd("check", CHECK_STEPS), env) for name, cmd in sides.items()}
        ok = losses["Python"] == losses["C++"]
        print(f"losses over {CHECK_STEPS} steps: C++ {losses['C++'][0]:.6f} -> {losses['C++'][-1]:.6f}; "
              f"Python {'identical' if ok else 'DIFFER: ' + str(losses['Python'])}")
        if not ok:
            print("MISMATCH: not timing")
            return 1
        print("All results match. Starting benchmarks.")

        names = list(sides)
        times = {name: [] for name in names}
        for r in range(a.rounds):
            for name in names[r % len(names):] + names[:r % len(names)]:
                times[name].append(run(sides[name]("time", a.steps), env)[0] * 1e3)
    print(f"\nms per step, median of {a.rounds} rounds of {a.steps} steps (min-max); one thread each")
    for name in names:
        t = times[name]
        print(f"  {name:<8} {statistics.median(t):8.3f}  ({min(t):.3f}-{max(t):.3f})")
    ratios = [p / c for p, c in zip(times["Python"], times["C++"])]
    print(f"  Python / C++      {statistics.median(ratios):.3f}  ({min(ratios):.3f}-{max(ratios):.3f})  target <= 1.10")
    return 0


if __name__ == "__main__":
    sys.exit(main())
