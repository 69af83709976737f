"""Golden data: PyTorch 1.13's random numbers for a seed, which tinyddp's generator reproduces bitwise.

Each case seeds torch's default generator (or a torch.Generator of its own), then runs its steps in order on that
one stream, so the file also pins down how the draws follow one another: the cached second value of a
double-precision Box-Muller pair, the redrawn tail of a float32 normal fill, Linear's weight-then-bias init.
Values are written in full (a float32 value is exactly a double, and repr() round-trips). Big tensors are
written as a count, a sum and the SHA-256 of their little-endian bytes.

Read by tests/engine/random_golden_test.cpp (the C++ ops) and tests/python/test_random.py (the Python front end).
Run by hand, then commit random.json:
    /usr/bin/python3 tests/golden/gen_random.py
"""
import hashlib
import sys

import numpy as np
import torch

sys.dont_write_bytecode = True  # keep __pycache__ out of tests/golden
from gen_tdp_params import here, write_json
from random_cases import run_step

BIG = 4096   # tensors with more elements are written as a digest


def record(t):
    a = t.detach().contiguous().numpy()
    out = {"shape": list(a.shape), "dtype": str(t.dtype)[len("torch."):]}
    flat = a.reshape(-1)
    if flat.size > BIG:
        out["digest"] = {"numel": int(flat.size), "sum": float(flat.astype(np.float64).sum()),
                         "sha256": hashlib.sha256(flat.astype(flat.dtype.newbyteorder("<")).tobytes()).hexdigest()}
    elif t.dtype.is_floating_point:
        out["values"] = [float(v) for v in flat]   # exact: a float32 is a double, and JSON keeps repr()
    else:
        out["values"] = [int(v) for v in flat]
    return out


CASES = [
    {"name": "randn_float32_sizes", "seed": 3, "steps": [
        {"op": "randn", "shape": [n]} for n in (1, 5, 15, 16, 17, 31, 100, 1000)] + [
        {"op": "randn", "shape": [3, 7]}]},
    {"name": "randn_float64_sizes", "seed": 5, "steps": [
        {"op": "randn", "shape": [n], "dtype": "float64"} for n in (3, 3, 16, 40, 15)]},
    {"name": "randn_big_float32", "seed": 123456789, "steps": [{"op": "randn", "shape": [256, 784]}]},
    {"name": "rand_both_dtypes", "seed": 7, "steps": [
        {"op": "rand", "shape": [9]}, {"op": "rand", "shape": [4], "dtype": "float64"},
        {"op": "rand", "shape": [2, 3]}]},
    {"name": "randint_ranges", "seed": 2, "steps": [
        {"op": "randint", "low": 0, "high": 10, "shape": [8]}, {"op": "randint", "low": -5, "high": 5, "shape": [6]},
        {"op": "randint", "low": 0, "high": 2 ** 33, "shape": [3]},
        {"op": "randint", "low": 3, "high": 4, "shape": [2]}]},
    {"name": "randperm_sizes", "seed": 3, "steps": [{"op": "randperm", "n": n} for n in (0, 1, 5, 30, 1000)]},
    {"name": "normal_mean_std", "seed": 11, "steps": [
        {"op": "normal_", "shape": [5], "args": [1.5, 0.5]}, {"op": "normal_", "shape": [20], "args": [1.5, 0.5]},
        {"op": "normal_", "shape": [20], "dtype": "float64", "args": [-2.0, 3.0]},
        {"op": "normal_", "shape": [4, 5], "args": [0.0, 2.0], "transposed": True}]},
    {"name": "uniform_from_to", "seed": 12, "steps": [
        {"op": "uniform_", "shape": [10], "args": [-2.0, 3.0]},
        {"op": "uniform_", "shape": [6], "dtype": "float64", "args": [-0.125, 0.5]}]},
    {"name": "bernoulli_and_random_", "seed": 9, "steps": [
        {"op": "bernoulli_", "shape": [50], "args": [0.3]}, {"op": "random_", "shape": [3], "dtype": "int64"},
        {"op": "bernoulli_", "shape": [5], "dtype": "float64", "args": [0.5]}]},
    {"name": "linear_init", "seed": 11, "steps": [
        {"op": "linear", "in": 7, "out": 3}, {"op": "linear", "in": 4, "out": 2, "bias": False},
        {"op": "linear", "in": 3, "out": 2, "dtype": "float64"}, {"op": "randn", "shape": [2, 7]}]},
    {"name": "linear_init_big", "seed": 0, "steps": [{"op": "linear", "in": 784, "out": 256}]},
    {"name": "embedding_and_nn_init", "seed": 21, "steps": [
        {"op": "embedding", "num": 10, "dim": 4}, {"op": "embedding", "num": 3, "dim": 2},
        {"op": "init", "name": "kaiming_uniform_", "shape": [5, 6], "kwargs": {"a": 0.1}},
        {"op": "init", "name": "xavier_normal_", "shape": [4, 8]},
        {"op": "init", "name": "normal_", "shape": [3], "kwargs": {"mean": 1.0, "std": 0.02}}]},
    {"name": "dropout_mask", "seed": 9, "steps": [
        {"op": "dropout", "shape": [50], "p": 0.3}, {"op": "dropout", "shape": [4, 4], "p": 0.5}]},
    {"name": "generator_object", "seed": 1, "generator_seed": 4, "steps": [
        {"op": "randperm", "n": 10}, {"op": "randn", "shape": [4]}, {"op": "rand", "shape": [3]}]},
]


def main():
    cases = []
    for case in CASES:
        torch.manual_seed(case["seed"])
        gen = None
        if "generator_seed" in case:
            gen = torch.Generator()
            gen.manual_seed(case["generator_seed"])
        steps = []
        for step in case["steps"]:
            steps.append(dict(step, outputs=[record(t) for t in run_step(torch, step, gen)]))
        out = dict(case, steps=steps)
        if gen is not None:   # the default generator was not touched: its next draw is the seed's first
            out["default_after"] = record(torch.rand(3))
        cases.append(out)
    write_json({"torch": torch.__version__, "cases": cases}, here("random.json"))


if __name__ == "__main__":
    main()
