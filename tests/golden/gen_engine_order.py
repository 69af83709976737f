"""The order in which PyTorch 1.13's engine runs the AccumulateGrad nodes of a backward: the order DDP's
reducer hooks fire in, hence the order buckets are rebuilt in.

Run by hand from anywhere: /usr/bin/python3 tests/golden/gen_engine_order.py
Writes engine_order.json next to this script: {case: [parameter names, in the order their AccumulateGrad ran],
"torch_version"}. Recorded by a post hook on each parameter's AccumulateGrad node, where DDP's reducer puts its
hook. float64, seed 3 (the values do not change the order).
"""
import sys

import torch
import torch.nn.functional as F

sys.dont_write_bytecode = True  # keep __pycache__ out of tests/golden
from gen_tdp_params import here, write_json


def record(named):
    order = []
    hold = []  # the AccumulateGrad nodes live as long as a reference to them does
    for name, p in named:
        acc = p.expand_as(p).grad_fn.next_functions[0][0]
        acc.register_hook(lambda grad_inputs, grad_outputs, n=name: order.append(n))
        hold.append(acc)
    return order, hold


def two_linear():
    """Two Linear layers as PyTorch builds them, addmm(bias, x, W.t()), a ReLU between, MSE against 0."""
    torch.manual_seed(3)
    x = torch.randn(5, 3, dtype=torch.float64)
    w1 = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
    b1 = torch.randn(4, dtype=torch.float64, requires_grad=True)
    w2 = torch.randn(2, 4, dtype=torch.float64, requires_grad=True)
    b2 = torch.randn(2, dtype=torch.float64, requires_grad=True)
    order, _hold = record([("layer1.weight", w1), ("layer1.bias", b1), ("layer2.weight", w2), ("layer2.bias", b2)])
    h = torch.relu(torch.addmm(b1, x, w1.t()))
    out = torch.addmm(b2, h, w2.t())
    F.mse_loss(out, torch.zeros(5, 2, dtype=torch.float64)).backward()
    return order


def two_terms(first):
    """sum(small * 1) + sum(large * 2), the term named `first` built first (tests/dist/reducer_order_test.cpp)."""
    small = torch.zeros(4, dtype=torch.float64, requires_grad=True)
    large = torch.zeros(6, dtype=torch.float64, requires_grad=True)
    order, _hold = record([("small", small), ("large", large)])
    terms = {}
    for name in (first, "large" if first == "small" else "small"):
        terms[name] = (small * 1.0).sum() if name == "small" else (large * 2.0).sum()
    (terms["small"] + terms["large"]).backward()
    return order


def main():
    out = {"two_linear": two_linear(), "two_terms_small_first": two_terms("small"),
           "two_terms_large_first": two_terms("large"), "torch_version": torch.__version__}
    write_json(out, here("engine_order.json"))


if __name__ == "__main__":
    main()
