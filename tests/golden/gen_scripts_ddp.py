"""Golden data: PyTorch 1.13 CPU DDP scripts as users write them, run as they are -> scripts_ddp.json.

The scripts of tests/python/scripts_ddp/ (2 ranks over gloo: torch.multiprocessing.spawn as the tutorials do,
torchrun-style launches through RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT and init_method="env://" that the script
starts itself, one under mpirun; the official DDP tutorial, DistributedSampler, no_sync accumulation, state dicts,
all_reduce'd metrics, SyncBatchNorm, unused parameters, static_graph, a GAN, two backwards, freezing, join, comm
hooks, buffers, object collectives, schedulers and optimizer state, the errors users meet) run as gen_scripts_more.py
runs its folder: in a fresh interpreter through tests/python/scripts/_harness.py with a stand-in `tinyddp` that
resolves to `torch`, recording stdout, how each ended and the main thread's warnings. tests/python/test_scripts_ddp.py
runs them on tinyddp and compares all three. Run by hand, then commit scripts_ddp.json (deterministic):
    /usr/bin/python3 tests/golden/gen_scripts_ddp.py [NAME...]
"""
import os
import sys

sys.dont_write_bytecode = True  # keep __pycache__ out of tests/golden
from gen_scripts_more import main  # noqa: E402

SCRIPTS_DDP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python", "scripts_ddp")

if __name__ == "__main__":
    main(SCRIPTS_DDP, "scripts_ddp.json", timeout=300)
