"""Golden data: more PyTorch 1.13 CPU training and evaluation scripts, run as they are -> scripts_more.json.

The scripts of tests/python/scripts_more/ (mixed precision as written for CUDA and run on a CPU, evaluation under
inference_mode with metrics, gradient norms and clipping, early stopping with checkpoints, a CNN, an LSTM with
truncated backpropagation, DDP under spawn with AMP flags, dtype and settings queries) run exactly as
gen_scripts.py runs tests/python/scripts/: each in a fresh interpreter through tests/python/scripts/_harness.py,
with a stand-in `tinyddp` that resolves to `torch`, recording stdout, how it ended and the main thread's warnings.
tests/python/test_scripts_more.py runs the same scripts on tinyddp and compares all three. Run by hand, then commit
scripts_more.json (deterministic):
    /usr/bin/python3 tests/golden/gen_scripts_more.py [NAME...]
"""
import os
import sys

sys.dont_write_bytecode = True  # keep __pycache__ out of tests/golden
from gen_scripts import generate  # noqa: E402

SCRIPTS_MORE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python", "scripts_more")

if __name__ == "__main__":
    generate(SCRIPTS_MORE, "scripts_more.json")
