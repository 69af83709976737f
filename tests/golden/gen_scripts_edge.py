"""Golden data: PyTorch 1.13 scripts whose code meets the edges (empty batches and masks selecting nothing, an
untrained model whose logits all tie, 0-dim losses and scalars, torch.cat of nothing caught, sequence lengths sorted
with many ties, running maxima, NaN in statistics) -> scripts_edge.json.

The scripts of tests/python/scripts_edge/ run exactly as gen_scripts.py runs tests/python/scripts/: each in a fresh
interpreter through tests/python/scripts/_harness.py, with a stand-in `tinyddp` that resolves to `torch`, recording
stdout, how it ended and the main thread's warnings. tests/python/test_scripts_edge.py runs the same scripts on
tinyddp and compares all three. Run by hand, then commit scripts_edge.json (deterministic):
    /usr/bin/python3 tests/golden/gen_scripts_edge.py
"""
import os
import sys
import tempfile

import torch

sys.dont_write_bytecode = True  # keep __pycache__ out of tests/golden
import gen_scripts_more  # noqa: E402  (its runner, pointed at scripts_edge/)
from gen_scripts import TORCH_AS_TINYDDP  # noqa: E402
from gen_tdp_params import here, write_json  # noqa: E402

gen_scripts_more.SCRIPTS_MORE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python",
                                             "scripts_edge")


def main():
    out = {"torch_version": torch.__version__, "scripts": {}}
    with tempfile.TemporaryDirectory() as stand_in:
        os.mkdir(os.path.join(stand_in, "tinyddp"))
        with open(os.path.join(stand_in, "tinyddp", "__init__.py"), "w") as f:
            f.write(TORCH_AS_TINYDDP)
        for name in gen_scripts_more.script_names():
            out["scripts"][name] = gen_scripts_more.run(name, stand_in)
            print(name, "ok", flush=True)
    write_json(out, here("scripts_edge.json"))


if __name__ == "__main__":
    main()
