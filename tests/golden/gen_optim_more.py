"""torch.optim's other optimizers on real PyTorch 1.13: RMSprop (plain, centered, momentum), Adagrad (lr_decay,
initial accumulator), Adamax, NAdam, RAdam (both sides of its rho_t > 5 switch), Adadelta, Rprop and ASGD, with
parameter groups, weight decay, maximize, a scheduler, checkpoint and resume; plus their argument checks.

Run by hand from anywhere: /usr/bin/python3 tests/golden/gen_optim_more.py
Writes optim_more.json next to this script (deterministic, well under a second).

The runs have gen_optim_groups.py's layout and go through the same interpreter (optim_cases.py): per step the
gradients are data, the records are every parameter, each group's lr, the schedulers' last lrs and the
optimizer's state_dict (after steps 0, 3 and the last), and the optimizer's repr at the end. The checks that must
raise are optim_more_cases.py's; the golden holds their types and texts.
"""
import json
import sys

import torch

sys.dont_write_bytecode = True  # keep __pycache__ out of tests/golden
from gen_optim_groups import make_params, make_steps, run_spec
from gen_tdp_params import here
from optim_cases import cases
from optim_more_cases import errors

C = cases(torch)
AB = make_params(("a", "b"))

RUNS = [
    run_spec("rmsprop", "RMSprop", ["a", "b", "c"], {"lr": 0.01}, n_steps=5),
    run_spec("rmsprop-centered-momentum-groups", "RMSprop",
             [{"params": ["a"], "centered": True}, {"params": ["b"], "momentum": 0.9, "alpha": 0.9}],
             {"lr": 0.02, "weight_decay": 0.01}, [["StepLR", {"step_size": 2, "gamma": 0.5}]], params=AB),
    run_spec("rmsprop-centered-momentum-maximize", "RMSprop", ["a", "c"],
             {"lr": 0.005, "momentum": 0.5, "centered": True, "maximize": True}, params=make_params(("a", "c"))),
    run_spec("rmsprop-resume", "RMSprop", ["a", "b"], {"lr": 0.01, "momentum": 0.9, "centered": True},
             params=AB, edits=[(3, ["resume"])]),
    run_spec("adagrad", "Adagrad", ["a", "b", "c"], {"lr": 0.1}),
    run_spec("adagrad-decay-init-wd-maximize", "Adagrad", [{"params": ["a"]}, {"params": ["b"], "lr": 0.3}],
             {"lr": 0.1, "lr_decay": 0.05, "initial_accumulator_value": 0.1, "weight_decay": 0.1, "maximize": True},
             [["ExponentialLR", {"gamma": 0.9}]], params=AB),
    run_spec("adagrad-resume", "Adagrad", ["a", "b"], {"lr": 0.1, "lr_decay": 0.01}, params=AB,
             edits=[(2, ["resume"])]),
    run_spec("adamax", "Adamax", ["a", "b", "c"], {}),
    run_spec("adamax-groups-wd-maximize", "Adamax",
             [{"params": ["a"], "betas": (0.8, 0.9)}, {"params": ["b"], "weight_decay": 0.1}],
             {"lr": 0.01, "maximize": True}, [["CosineAnnealingLR", {"T_max": 4}]], params=AB),
    run_spec("nadam", "NAdam", ["a", "b", "c"], {}),
    run_spec("nadam-wd-momentum-decay", "NAdam", [{"params": ["a"]}, {"params": ["b"], "momentum_decay": 0.01}],
             {"lr": 0.01, "weight_decay": 0.05, "betas": (0.85, 0.95)}, params=AB),
    run_spec("nadam-resume", "NAdam", ["a", "b"], {"lr": 0.01}, params=AB, edits=[(3, ["resume"])]),
    # beta2 = 0.999 keeps rho_t <= 5 for the first 5 steps (the momentum branch); beta2 = 0.5 crosses at once
    run_spec("radam", "RAdam", ["a", "b", "c"], {"lr": 0.01}, n_steps=8),
    run_spec("radam-rectified-wd", "RAdam", [{"params": ["a"], "betas": (0.9, 0.5)}, {"params": ["b"]}],
             {"lr": 0.01, "weight_decay": 0.1}, [["LinearLR", {"start_factor": 0.5, "total_iters": 3}]],
             params=AB, n_steps=8),
    run_spec("adadelta", "Adadelta", ["a", "b", "c"], {}),
    run_spec("adadelta-groups-wd-maximize", "Adadelta", [{"params": ["a"]}, {"params": ["b"], "rho": 0.5}],
             {"lr": 0.5, "weight_decay": 0.1, "maximize": True, "eps": 1e-4}, params=AB),
    run_spec("rprop", "Rprop", ["a", "b", "c"], {}, n_steps=8),
    run_spec("rprop-etas-clamp-maximize", "Rprop", [{"params": ["a"]}, {"params": ["b"], "lr": 0.5}],
             {"lr": 0.1, "etas": (0.3, 2.0), "step_sizes": (0.01, 0.4), "maximize": True}, params=AB, n_steps=8),
    run_spec("asgd", "ASGD", ["a", "b", "c"], {}),
    # t0 = 2: the averaging starts (mu < 1) from step 3
    run_spec("asgd-t0-wd-maximize", "ASGD", [{"params": ["a"]}, {"params": ["b"], "lr": 0.05}],
             {"lr": 0.1, "lambd": 0.01, "alpha": 0.5, "t0": 2, "weight_decay": 0.1, "maximize": True},
             [["StepLR", {"step_size": 2, "gamma": 0.5}]], params=AB, n_steps=7),
    run_spec("asgd-resume", "ASGD", ["a"], {"lr": 0.1, "t0": 1}, params=make_params(("a",)),
             edits=[(3, ["resume"])]),
    run_spec("rmsprop-f64", "RMSprop", ["a"], {"lr": 0.01, "centered": True, "momentum": 0.5}, dtype="float64",
             params=make_params(("a",))),
    run_spec("nadam-f64", "NAdam", ["a"], {"lr": 0.01}, dtype="float64", params=make_params(("a",))),
    # c has no grad at steps 0-2: its state appears at step 3
    run_spec("radam-late-grad", "RAdam", ["a", "c"], {"lr": 0.05, "betas": (0.9, 0.6)},
             params=make_params(("a", "c")),
             steps=make_steps(6, ("a", "c"), missing={(0, "c"), (1, "c"), (2, "c"), (4, "a")})),
]


def main():
    runs = []
    for run in RUNS:
        run = json.loads(json.dumps(run))   # what the test reads: tuples are lists there too
        run["records"], run["repr"] = C.execute(run)
        runs.append(run)
    errs = []
    for name, fn in errors(torch).items():
        try:
            fn()
        except Exception as e:   # noqa: BLE001 -- the golden records whatever 1.13 raises
            errs.append({"name": name, "type": type(e).__name__, "message": str(e)})
        else:
            raise AssertionError(f"{name}: PyTorch raised nothing")
    golden = {"torch_version": torch.__version__, "runs": runs, "errors": errs}
    with open(here("optim_more.json"), "w") as f:
        f.write("{\n" + ",\n".join(
            json.dumps(k) + ": " + (json.dumps(v) if not isinstance(v, list) else
                                    "[\n" + ",\n".join(" " + json.dumps(e) for e in v) + "\n]")
            for k, v in golden.items()) + "\n}\n")


if __name__ == "__main__":
    main()
