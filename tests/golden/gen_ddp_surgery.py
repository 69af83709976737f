"""Behavioural reference for gradient surgery under DDP (issue 16): the public PCGrad/MGDA loop (one
backward(retain_graph=True) per task through one DDP forward, then the projection of .grad) and the per-task
autograd.grad recipe, as plans of `tinyddp repro` (apps/tinyddp/repro/plan.h), run on real PyTorch 1.13.1
DistributedDataParallel (gloo, 2 ranks on 127.0.0.1) by gen_ddp_scenarios.py's machinery, with the same
model, data and record format as ddp_scenarios.json. The model's three outputs a, b, t are the three tasks.

The naive loop raises at its second backward, before any projection would run, so the plans stop there:
the projection of .grad changes nothing DDP sees.

Writes ddp_surgery.json next to this script. Run by hand, from anywhere:

    /usr/bin/python3 tests/golden/gen_ddp_surgery.py            # all runs
    /usr/bin/python3 tests/golden/gen_ddp_surgery.py --only ID  # one run, JSON to stdout
"""
import os
import sys

sys.dont_write_bytecode = True  # keep __pycache__ out of tests/golden
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import gen_ddp_patterns as pat  # noqa: E402
import gen_ddp_scenarios as scen  # noqa: E402

NAIVE = "forward; backward(a, retain); backward(b, retain); backward(t, retain); step"
RECIPE = "forward; grad(a, retain); grad(b, retain); grad(t, retain); backward(a+b+t); step"

RUNS = [
    pat.R("pcgrad-naive", NAIVE,
          "WeiChengTseng/Pytorch-PCGrad's pc_backward and LibMTL's per-task gradients: one "
          "backward(retain_graph=True) per task through one DDP forward, collecting .grad after each"),
    pat.R("pcgrad-naive/find-unused", NAIVE,
          "as pcgrad-naive with find_unused_parameters=True", find_unused_parameters=True),
    pat.R("pcgrad-per-task-grad", RECIPE,
          "per-task gradients by torch.autograd.grad (no DDP hook fires), then one backward of the summed "
          "loss: the DDP-visible structure of tinyddp's recipe (the allreduce of the per-task gradients and "
          "the surgery happen between the grads and the backward and touch no parameter)"),
]

NOTES = dict(pat.NOTES)
NOTES["runs"] = ("id is 'scenario/variant'; note says what the user wrote. Plans and options: `tinyddp repro "
                 "--help` (apps/tinyddp/repro/plan.h); every option is spelled out")


if __name__ == "__main__":
    scen.main(RUNS, NOTES, "tests/golden/gen_ddp_surgery.py", "ddp_surgery.json")
