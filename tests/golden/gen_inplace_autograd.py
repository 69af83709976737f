"""Golden data: in-place ops under autograd in PyTorch 1.13, through the Python front end -> inplace_autograd.json.

`cases`: the snippets of inplace_autograd_cases.py (every in-place method and operator, setitem with every index
kind, on leaves, non-leaves, views of every kind, views made under no_grad or inference mode, tensors that do not
require grad receiving values that do; saved tensors changed before the backward; retain_grad and hooks across
in-place ops; in-place view ops; RNG fills; in-place activations and modules; custom Functions with and without
ctx.mark_dirty; module backward hooks; checkpoint), each run by inplace_autograd_cases.run, which records per result
its values, grad_fn and next_functions (two levels), _version, is_leaf, requires_grad and .grad, the leaves'
gradients, the warnings, and the error's type and text. tests/python/test_inplace_autograd.py runs the same
snippets through tinyddp.

`scripts`: the user scripts of tests/python/scripts_inplace/ (a ResNet block with ReLU(inplace=True) and
`out += identity`, attention with masked_fill_ and an in-place dropout, custom in-place Functions, two-rank DDP over
a forward that writes in place), run as gen_scripts.py runs its scripts (a fresh interpreter, the harness of
tests/python/scripts/, a stand-in `tinyddp` that resolves to torch): stdout, exception, main-thread warnings.

Run by hand from anywhere, then commit inplace_autograd.json (deterministic; about half a minute):
    /usr/bin/python3 tests/golden/gen_inplace_autograd.py
"""
import os
import sys
import tempfile

import torch

sys.dont_write_bytecode = True  # keep __pycache__ out of tests/golden
from gen_scripts import TORCH_AS_TINYDDP  # noqa: E402  (also puts tests/python/scripts on sys.path)
from gen_tdp_params import here, write_json  # noqa: E402
from _harness import run_script, script_names  # noqa: E402
from inplace_autograd_cases import CASES, run  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "..", "python", "scripts_inplace")
def main():
    cases = [dict(id=id_, code=code, **run(torch, code)) for id_, code in CASES]
    scripts = {}
    with tempfile.TemporaryDirectory() as stand_in:
        os.mkdir(os.path.join(stand_in, "tinyddp"))
        with open(os.path.join(stand_in, "tinyddp", "__init__.py"), "w") as f:
            f.write(TORCH_AS_TINYDDP)
        for name in script_names(SCRIPTS):
            scripts[name] = run_script(SCRIPTS, name, [stand_in], 300)
            print(name, "ok", flush=True)
    write_json({"torch_version": torch.__version__, "cases": cases, "scripts": scripts},
               here("inplace_autograd.json"))


if __name__ == "__main__":
    main()
