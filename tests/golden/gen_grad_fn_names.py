"""The autograd nodes PyTorch 1.13 records for the ops tinyddp has (tests/golden/grad_fn_cases.py): per case, each
result's grad_fn name and its next_functions (name and input_nr, one level), shape and values, the gradients of
the leaves and, for the cases of DOUBLE, the second derivatives through the recorded nodes.

Run by hand from anywhere: /usr/bin/python3 tests/golden/gen_grad_fn_names.py
Writes grad_fn_names.json next to this script (deterministic; a few seconds). tests/python/test_grad_fn_names.py runs
the same cases through tinyddp.

Layout: {"torch_version", "cases": [{"id", "code", "outs": [{"grad_fn", "next": [[name, input_nr], ...] or null,
"shape", "values"} or null for a result that is not a tensor], "grads": {leaf: values}, "second": {leaf: values}}]}.
"""
import sys
import warnings

import torch

sys.dont_write_bytecode = True  # keep __pycache__ out of tests/golden
from gen_tdp_params import here, write_json
from grad_fn_cases import CASES, DOUBLE, node_name, run


def encode(value):
    if not isinstance(value, torch.Tensor):
        return None
    fn = value.grad_fn
    return {"grad_fn": node_name(fn),
            "next": [[node_name(n), nr] for n, nr in fn.next_functions] if fn is not None else None,
            "shape": list(value.shape), "values": value.detach().reshape(-1).tolist()}


def main():
    cases = []
    for id_, code in CASES:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            outs, grads, second = run(torch, code, double=id_ in DOUBLE)
        cases.append({"id": id_, "code": code, "outs": [encode(o) for o in outs],
                      "grads": {k: g.reshape(-1).tolist() for k, g in grads.items()},
                      "second": {k: g.reshape(-1).tolist() for k, g in second.items()}})
    write_json({"torch_version": torch.__version__, "cases": cases}, here("grad_fn_names.json"))


if __name__ == "__main__":
    main()
