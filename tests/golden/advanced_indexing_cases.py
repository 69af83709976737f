"""How an advanced_indexing case runs, shared by gen_advanced_indexing.py (with torch) and
tests/python/test_advanced_indexing.py (with tinyddp): snippet_cases.py's run with NumPy in scope as `np` (a snippet
builds its inputs from literals, NumPy arrays, or randn after manual_seed, which tinyddp reproduces bitwise),
results as they are, warnings by their text.
"""
import numpy as np

from snippet_cases import backward_and_leaf_grads, execute, flatten


def run(torch_module, code):
    """Runs a case's snippet with `torch_module` as `torch`: (its results, flattened; the gradients of its leaves by
    name; the texts of the warnings it raised), or raises the case's error."""
    scope, caught = execute(torch_module, code, np=np)
    outs = flatten(scope["out"])
    return outs, backward_and_leaf_grads(torch_module, outs, scope), [str(w.message) for w in caught]
