"""Capture the exact RuntimeError messages PyTorch raises for autograd misuse.

Writes autograd_errors.json next to this script: {case_name: str(e), ...,
"torch_version": torch.__version__}. float32 default dtype, seed 0 per case.
Run: /usr/bin/python3 tests/golden/gen_autograd_errors.py
"""
import sys

import torch

sys.dont_write_bytecode = True  # keep __pycache__ out of tests/golden
from gen_tdp_params import here, write_json

randn = torch.randn


def backward_twice():
    x = randn(3, requires_grad=True)
    y = (x.exp()).sum()
    y.backward()
    y.backward()  # graph buffers already freed


def allow_unused():
    x = randn(3, requires_grad=True)
    z = randn(3, requires_grad=True)
    y = (x * x).sum()
    torch.autograd.grad(y, [x, z])  # z not in the graph


def non_scalar_implicit():
    x = randn(3, requires_grad=True)
    y = x * 2
    y.backward()  # no grad_output for a non-scalar


def inplace_saved_leaf():
    w = randn(3, requires_grad=True)
    x = randn(3)
    y = (w * x).sum()  # mul saves x (needed for dL/dw)
    x.mul_(2)          # bumps x's version 0 -> 1
    y.backward()


def inplace_saved_param_after_step():
    w = randn(3, requires_grad=True)
    y = (w.exp() * w).sum()  # w is saved by mul
    with torch.no_grad():
        w.add_(1.0)          # "optimizer step" before backward
    y.backward()


def no_requires_grad():
    x = randn(3)
    (x * 2).sum().backward()


def grad_no_requires_grad():
    x = randn(3)
    y = (x * 2).sum()
    torch.autograd.grad(y, [x])


def leaf_inplace():
    w = randn(3, requires_grad=True)
    w.add_(1.0)  # in-place on a grad-requiring leaf outside no_grad


def grad_of_nonscalar_implicit_grad():
    x = randn(3, requires_grad=True)
    torch.autograd.grad(x * 2, [x])


def anomaly_nan_gradient():
    x = randn(3, requires_grad=True)  # seed 0: two of the three values are negative
    with torch.autograd.detect_anomaly():
        x.sqrt().sum().backward()  # sqrt of a negative is NaN, and so is its gradient


def queue_callback_outside():
    torch.autograd.Variable._execution_engine.queue_callback(lambda: None)


CASES = [backward_twice, allow_unused, non_scalar_implicit, inplace_saved_leaf,
         inplace_saved_param_after_step, no_requires_grad, grad_no_requires_grad,
         leaf_inplace, grad_of_nonscalar_implicit_grad, queue_callback_outside, anomaly_nan_gradient]


def main():
    torch.set_default_dtype(torch.float32)
    out = {}
    for case in CASES:
        torch.manual_seed(0)
        try:
            case()
        except RuntimeError as e:
            out[case.__name__] = str(e)
        else:
            raise AssertionError(f"{case.__name__} did not raise")
    out["torch_version"] = torch.__version__
    write_json(out, here("autograd_errors.json"))


if __name__ == "__main__":
    main()
