"""Sequence models of tinyddp.nn under real PyTorch 1.13: RNN, LSTM, GRU and their cells, MultiheadAttention,
TransformerEncoder(Layer), TransformerDecoder(Layer) and Transformer (the cases of nn_sequence_cases.py).

Run by hand from anywhere: /usr/bin/python3 tests/golden/gen_nn_sequence.py
Writes nn_sequence.json next to this script (deterministic; a few seconds).

Layout (tensors as {"shape", "values"}; lists of them may hold null):
  "cases": [{"id", "inputs", "repr", "state_dict_keys", "param_names", "initial" (parameters right after
      construction under manual_seed), "outs", "x_grads", "param_grads" (absent without grad)}],
  "errors": {expression: {"type", "message"}}, "warnings": {expression: [[category, message], ...]},
  "attributes": {expression: repr(value)}.
"""
import os
import sys
import warnings

import torch

sys.dont_write_bytecode = True  # keep __pycache__ out of tests/golden
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_tdp_params import here, tensor_json, write_json  # noqa: E402
import nn_sequence_cases as cases  # noqa: E402


def tensors_json(ts):
    return [None if t is None else tensor_json(t) for t in ts]


def main():
    out = {"cases": [], "errors": {}, "warnings": {}, "attributes": {}}
    for k, case in enumerate(cases.CASES):
        gen = torch.Generator().manual_seed(1000 + k)
        inputs = [torch.randn(*shape, generator=gen) for shape in case["shapes"]]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # the nested-tensor prototype warning: tested by the scripts golden
            r = cases.run_case(torch, case, inputs)
        entry = {"id": case["id"], "inputs": tensors_json(inputs), "repr": r["repr"],
                 "state_dict_keys": r["state_dict_keys"], "param_names": r["param_names"],
                 "initial": tensors_json(r["initial"]), "outs": tensors_json(r["outs"])}
        if "x_grads" in r:
            entry["x_grads"] = tensors_json(r["x_grads"])
            entry["param_grads"] = tensors_json(r["param_grads"])
        out["cases"].append(entry)
    env = {"torch": torch, "nn": torch.nn}
    for expr in cases.ERRORS:
        try:
            eval(expr, env)
        except Exception as e:  # noqa: BLE001  (recorded, then compared)
            out["errors"][expr] = {"type": type(e).__name__, "message": str(e)}
        else:
            raise AssertionError(f"no error from {expr}")
    for expr in cases.WARNINGS:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            eval(expr, env)
        out["warnings"][expr] = [[w.category.__name__, str(w.message)] for w in caught]
    for expr in cases.ATTRIBUTES:
        torch.manual_seed(0)
        out["attributes"][expr] = repr(eval(expr, env))
    write_json(out, here("nn_sequence.json"))


if __name__ == "__main__":
    main()
