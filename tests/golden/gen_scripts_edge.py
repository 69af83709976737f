"""Golden data: PyTorch 1.13 scripts whose code meets the edges (empty batches and masks selecting nothing, an
untrained model whose logits all tie, 0-dim losses and scalars, torch.cat of nothing caught, sequence lengths sorted
with many ties, running maxima, NaN in statistics) -> scripts_edge.json.

The scripts of tests/python/scripts_edge/ run as every script folder runs (gen_scripts.generate): each in a fresh
interpreter through tests/python/scripts/_harness.py, with a stand-in `tinyddp` that resolves to `torch`, recording
stdout, how it ended and the main thread's warnings. tests/python/test_scripts_edge.py runs the same scripts on tinyddp and
compares all three. Run by hand, then commit scripts_edge.json (deterministic):
    /usr/bin/python3 tests/golden/gen_scripts_edge.py [NAME...]
"""
import os
import sys

sys.dont_write_bytecode = True  # keep __pycache__ out of tests/golden
from gen_scripts import generate  # noqa: E402

SCRIPTS_EDGE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python", "scripts_edge")

if __name__ == "__main__":
    generate(SCRIPTS_EDGE, "scripts_edge.json")
