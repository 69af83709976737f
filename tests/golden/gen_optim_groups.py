"""torch.optim as training scripts use it, on real PyTorch 1.13: parameter groups, per-group hyperparameters and
their changes between steps, add_param_group, state_dict()/load_state_dict() (a checkpoint and resume),
AdamW, and the lr_scheduler schedules (chainable step() and the closed form of step(epoch)); plus the texts of
the errors and warnings of these APIs.

Run by hand from anywhere: /usr/bin/python3 tests/golden/gen_optim_groups.py
Writes optim_groups.json next to this script (deterministic, well under a second).

Each run is data: its parameters' initial values and, per step, every parameter's gradient (written out here,
not drawn, so that tinyddp's random streams play no part; a parameter missing from a step has .grad None), the
optimizer with its groups, the schedulers, and edits made between steps (a group's value changed, a group
added, the optimizer and schedulers rebuilt from their state_dicts). optim_cases.py interprets them, here on
torch and in tests/python/test_optim.py on tinyddp. A step is: edits for this step, set the grads, optimizer.step(), each scheduler's
step(); then record every parameter, each group's lr, get_last_lr() of each scheduler, the optimizer's
state_dict() (after steps 0, 3 and the last; else null) and each scheduler's state_dict().

Layout: {"torch_version", "runs": [{"name", "dtype", "params": {name: {"shape", "values"}}, "optimizer",
"groups" (a list of names, or of {"params": [names], hyperparameters...}), "kwargs", "schedulers" ([[class name,
kwargs]], "lr_lambda" naming a function of LAMBDAS), "steps": [{"grads": {name: values}, "edits": [...]}],
"records": [per step {"params": {name: values}, "lrs", "last_lrs", "state_dict", "scheduler_state_dicts"}],
"repr"}], "schedules": [{"name", "lrs" (per step, get_last_lr()), "warnings"}], "errors": [{"name", "type",
"message"}], "warnings": [{"name", "warnings": [[message, category]]}]}. Values that JSON cannot tell apart are
tagged (optim_cases.py's encode): tensors {"tensor", "dtype"}, tuples {"tuple"}, dicts {"dict": [[key, value]]} (keys keep
their type and order), Counters {"counter": [[key, count]]}.
"""
import contextlib
import io
import json
import math
import sys

import torch

sys.dont_write_bytecode = True  # keep __pycache__ out of tests/golden
from gen_tdp_params import here
from optim_cases import cases

C = cases(torch)   # the interpreter and the tables test_optim.py runs on tinyddp


def values(seed, n):
    """n fixed values in [-1, 1) from a tiny LCG (the data is written to the JSON; only this file draws it)."""
    out, x = [], seed
    for _ in range(n):
        x = (1103515245 * x + 12345) % 2 ** 31
        out.append(round(x / 2 ** 30 - 1.0, 6))
    return out


SHAPES = {"a": [2, 3], "b": [4], "c": [3]}


def make_params(names=("a", "b", "c"), seed=1):
    return {n: {"shape": SHAPES[n], "values": values(seed + i, math.prod(SHAPES[n]))} for i, n in enumerate(names)}


def make_steps(n, names=("a", "b", "c"), seed=100, missing=()):
    """Per step the gradients; `missing` lists (step, name) pairs whose .grad is None at that step."""
    steps = []
    for s in range(n):
        grads = {name: values(seed + 10 * s + i, math.prod(SHAPES[name])) for i, name in enumerate(names)
                 if (s, name) not in missing}
        steps.append({"grads": grads, "edits": []})
    return steps


def run_spec(name, optimizer, groups, kwargs, schedulers=(), dtype="float32", n_steps=6, params=None, steps=None,
             edits=None):
    params = params or make_params()
    steps = steps or make_steps(n_steps, names=tuple(params))
    for at, edit in (edits or []):
        steps[at]["edits"].append(edit)
    return {"name": name, "dtype": dtype, "params": params, "optimizer": optimizer, "groups": groups,
            "kwargs": kwargs, "schedulers": [list(s) for s in schedulers], "steps": steps}


RUNS = [
    # SGD: two groups, the second with its own lr, momentum and Nesterov; StepLR halves every 2 steps
    run_spec("sgd-groups-steplr", "SGD",
             [{"params": ["a"]}, {"params": ["b", "c"], "lr": 0.01, "momentum": 0.5, "nesterov": True}],
             {"lr": 0.1, "momentum": 0.9, "weight_decay": 1e-3}, [["StepLR", {"step_size": 2, "gamma": 0.5}]]),
    # dampening and maximize; a milestone listed twice multiplies by gamma ** 2
    run_spec("sgd-dampening-maximize-multisteplr", "SGD", ["a", "b"],
             {"lr": 0.05, "momentum": 0.8, "dampening": 0.3, "maximize": True},
             [["MultiStepLR", {"milestones": [2, 4, 4], "gamma": 0.3}]], params=make_params(("a", "b"))),
    # float64, so that the comparison can be tight; plain SGD with LinearLR warm-up
    run_spec("sgd-f64-linearlr", "SGD", ["a", "c"], {"lr": 0.2},
             [["LinearLR", {"start_factor": 0.25, "total_iters": 4}]], dtype="float64",
             params=make_params(("a", "c"))),
    # a group's values changed between steps (what schedulers do): lr at step 2, momentum 0 at step 3 (the
    # buffer stays in the state, unused), weight decay at step 4
    run_spec("sgd-edit-group-values", "SGD", ["a", "b"], {"lr": 0.1, "momentum": 0.9},
             params=make_params(("a", "b")),
             edits=[(2, ["set", 0, "lr", 0.05]), (3, ["set", 0, "momentum", 0.0]),
                    (4, ["set", 0, "weight_decay", 0.01])]),
    # Adam: amsgrad in one group, other betas, lr and L2 weight decay in the other; ExponentialLR
    run_spec("adam-groups-exponentiallr", "Adam",
             [{"params": ["a"], "amsgrad": True}, {"params": ["b"], "lr": 0.01, "betas": (0.8, 0.9),
                                                     "weight_decay": 0.1}],
             {"lr": 0.003}, [["ExponentialLR", {"gamma": 0.9}]], params=make_params(("a", "b"))),
    # c has no grad at steps 0-2: its state appears at step 3, with its own step count
    run_spec("adam-late-grad", "Adam", ["a", "c"], {"lr": 0.05, "eps": 1e-6}, params=make_params(("a", "c")),
             steps=make_steps(6, ("a", "c"), missing={(0, "c"), (1, "c"), (2, "c"), (4, "a")})),
    # AdamW with its default weight_decay 1e-2; CosineAnnealingLR past T_max (the restart branch at epoch 5)
    run_spec("adamw-cosine", "AdamW", ["a", "b", "c"], {"lr": 0.01},
             [["CosineAnnealingLR", {"T_max": 4, "eta_min": 1e-4}]], n_steps=7),
    # AdamW amsgrad + maximize, per-group weight decay; LambdaLR with one function per group
    run_spec("adamw-amsgrad-maximize-lambdalr", "AdamW",
             [{"params": ["a"]}, {"params": ["b"], "weight_decay": 0.5}],
             {"lr": 0.02, "amsgrad": True, "maximize": True},
             [["LambdaLR", {"lr_lambda": ["inverse", "decay09"]}]], params=make_params(("a", "b"))),
    # AdamW in float64
    run_spec("adamw-f64", "AdamW", ["a"], {"lr": 0.1, "betas": (0.5, 0.6), "weight_decay": 0.3},
             dtype="float64", params=make_params(("a",))),
    # add_param_group after step 2: the new group takes the defaults it does not set, the scheduler's lrs
    # cover only the groups it saw (1.13: it writes zip(groups, values))
    run_spec("adam-add-param-group", "Adam", ["a"], {"lr": 0.01}, [["MultiplicativeLR", {"lr_lambda": "times095"}]],
             params=make_params(("a", "b")),
             steps=make_steps(6, ("a", "b"), missing={(0, "b"), (1, "b")}),
             edits=[(2, ["add_group", {"params": ["b"], "lr": 0.1, "betas": (0.5, 0.7)}])]),
    # checkpoint and resume: after step 3 a new optimizer and scheduler over new parameter tensors (with the
    # current values) load the state_dicts, and the run goes on as if uninterrupted
    run_spec("sgd-resume", "SGD", [{"params": ["a"]}, {"params": ["b"], "momentum": 0.5}],
             {"lr": 0.1, "momentum": 0.9}, [["StepLR", {"step_size": 2, "gamma": 0.5}]],
             params=make_params(("a", "b")), edits=[(3, ["resume"])]),
    run_spec("adam-resume", "Adam", ["a", "b"], {"lr": 0.01, "amsgrad": True},
             [["LambdaLR", {"lr_lambda": "half_every_2"}]], params=make_params(("a", "b")), edits=[(3, ["resume"])]),
    run_spec("adamw-resume-cosine", "AdamW", ["a"], {"lr": 0.01}, [["CosineAnnealingLR", {"T_max": 3}]],
             params=make_params(("a",)), edits=[(2, ["resume"])]),
    # OneCycleLR cycles SGD's momentum and Adam's beta1 in the groups: the next step must use the new values
    run_spec("sgd-onecycle-momentum", "SGD", [{"params": ["a"]}, {"params": ["b"], "nesterov": True}],
             {"lr": 0.1, "momentum": 0.9}, [["OneCycleLR", {"max_lr": 0.5, "total_steps": 6}]],
             params=make_params(("a", "b"))),
    run_spec("adam-onecycle-betas", "Adam", ["a", "b"], {"lr": 0.01},
             [["OneCycleLR", {"max_lr": 0.05, "total_steps": 8, "pct_start": 0.5}]], params=make_params(("a", "b"))),
    # two schedulers on one optimizer, stepped in turn (their chainable updates compose)
    run_spec("sgd-two-schedulers", "SGD", ["a"], {"lr": 1.0},
             [["ExponentialLR", {"gamma": 0.9}], ["StepLR", {"step_size": 3, "gamma": 0.1}]],
             params=make_params(("a",))),
]


def check_resume_is_seamless(runs):
    """A resumed run must match the same run without the resume (else the test would pin a broken golden)."""
    for run in runs:
        if not any(e[0] == "resume" for s in run["steps"] for e in s["edits"]):
            continue
        plain = json.loads(json.dumps(run))
        for s in plain["steps"]:
            s["edits"] = [e for e in s["edits"] if e[0] != "resume"]
        records, _ = C.execute(plain)
        assert [r["params"] for r in records] == [r["params"] for r in run["records"]], run["name"]


# ReduceLROnPlateau: step(metric) with these metrics
PLATEAU_METRICS = [1.0, 0.9, 0.95, 0.95, 0.95, 0.89, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9]
# step(epoch): the closed forms, jumping around
CLOSED_FORM_EPOCHS = [1, 2, 5, 3, 3, 8, 0, 4]
CLOSED_FORMS = ["StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR", "LinearLR", "ConstantLR",
                "PolynomialLR", "LambdaLR", "CosineAnnealingWarmRestarts", "CosineAnnealingWarmRestarts-Tmult1"]
# CosineAnnealingWarmRestarts takes fractional epochs
FRACTIONAL_EPOCHS = [0.5, 1.5, 2.0, 3.7, 9.2, 4.0, 0.0, 10.0]


def main():
    runs = []
    for run in RUNS:
        run = json.loads(json.dumps(run))   # what the test reads: tuples are lists there too
        run["records"], run["repr"] = C.execute(run)
        runs.append(run)
    check_resume_is_seamless(runs)
    schedules = [{"name": name, "scheduler": name, **C.lr_trace(make)} for name, make in C.SCHEDULES.items()]
    schedules += [{"name": name + "-closed-form", "scheduler": name, "epochs": CLOSED_FORM_EPOCHS,
                   **C.lr_trace(C.SCHEDULES[name], epochs=CLOSED_FORM_EPOCHS)} for name in CLOSED_FORMS]
    schedules += [{"name": name + "-fractional-epochs", "scheduler": name, "epochs": FRACTIONAL_EPOCHS,
                   **C.lr_trace(C.SCHEDULES[name], epochs=FRACTIONAL_EPOCHS)}
                  for name in ("CosineAnnealingWarmRestarts", "CosineAnnealingWarmRestarts-Tmult1")]
    for name, make in C.PLATEAUS.items():
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            trace = C.lr_trace(make, metrics=PLATEAU_METRICS)
        schedules.append({"name": name, "scheduler": name, "metrics": PLATEAU_METRICS, **trace,
                          "stdout": printed.getvalue()})
    errors = []
    for name, fn in C.ERRORS.items():
        try:
            fn()
        except Exception as e:   # noqa: BLE001 -- the golden records whatever 1.13 raises
            errors.append({"name": name, "type": type(e).__name__, "message": str(e)})
        else:
            raise AssertionError(f"{name}: PyTorch raised nothing")
    warned = []
    for name, fn in C.WARNINGS.items():
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            w = C.recorded(fn)
        warned.append({"name": name, "warnings": w, "stdout": printed.getvalue()})
    # one line per entry of each list (not write_json's one line per number: the file would be 3x larger)
    golden = {"torch_version": torch.__version__, "runs": runs, "schedules": schedules, "errors": errors,
              "warnings": warned}
    with open(here("optim_groups.json"), "w") as f:
        f.write("{\n" + ",\n".join(
            json.dumps(k) + ": " + (json.dumps(v) if not isinstance(v, list) else
                                    "[\n" + ",\n".join(" " + json.dumps(e) for e in v) + "\n]")
            for k, v in golden.items()) + "\n}\n")


if __name__ == "__main__":
    main()
