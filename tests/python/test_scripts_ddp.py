"""PyTorch 1.13 CPU DDP scripts as users write them (tests/python/scripts_ddp/: the tutorial, samplers, no_sync,
checkpoints, metrics, SyncBatchNorm, unused parameters, static graphs, two backwards and their fixes) on tinyddp
against PyTorch (tests/golden/scripts_ddp.json, from gen_scripts_ddp.py): stdout, the exception and the main
thread's warnings must equal 1.13's exactly, as test_scripts.py compares its folder.
"""
import os

from test_scripts import HERE, check_scripts

test_every_script_has_a_golden, test_script_prints_and_ends_as_pytorch = check_scripts(
    os.path.join(HERE, "scripts_ddp"), "scripts_ddp.json", timeout=300)
