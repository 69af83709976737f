"""Golden data: PyTorch 1.13 CPU DDP scripts as users write them, run as they are -> scripts_ddp.json.

The scripts of tests/python/scripts_ddp/ (2 ranks over gloo under torch.multiprocessing.spawn, as the tutorials
launch them: the official DDP tutorial with its checkpoint, DistributedSampler over epochs, no_sync accumulation,
state dicts and the "module." prefix, all_reduce'd evaluation metrics, SyncBatchNorm on a CPU model, unused
parameters, static_graph and _set_static_graph(), the multi-task two-backward error and the fixes users find) run as
every script folder runs (gen_scripts.generate): in a fresh interpreter through tests/python/scripts/_harness.py
with a stand-in `tinyddp` that resolves to `torch`, recording stdout, how each ended and the main thread's warnings.
tests/python/test_scripts_ddp.py runs them on tinyddp and compares all three. Run by hand, then commit
scripts_ddp.json (deterministic):
    /usr/bin/python3 tests/golden/gen_scripts_ddp.py [NAME...]
"""
import os
import sys

sys.dont_write_bytecode = True  # keep __pycache__ out of tests/golden
from gen_scripts import generate  # noqa: E402

SCRIPTS_DDP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python", "scripts_ddp")

if __name__ == "__main__":
    generate(SCRIPTS_DDP, "scripts_ddp.json")
