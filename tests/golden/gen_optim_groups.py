"""torch.optim as training scripts use it, on real PyTorch 1.13: parameter groups, per-group hyperparameters and
their changes between steps, add_param_group, state_dict()/load_state_dict() (a checkpoint and resume),
AdamW, and the lr_scheduler schedules (chainable step() and the closed form of step(epoch)); plus the texts of
the errors and warnings of these APIs.

Run by hand from anywhere: /usr/bin/python3 tests/golden/gen_optim_groups.py
Writes optim_groups.json next to this script (deterministic, well under a second).

Each run is data: its parameters' initial values and, per step, every parameter's gradient (written out here,
not drawn, so that tinyddp's random streams play no part; a parameter missing from a step has .grad None), the
optimizer with its groups, the schedulers, and edits made between steps (a group's value changed, a group
added, the optimizer and schedulers rebuilt from their state_dicts). tests/python/test_optim.py interprets the
same data with tinyddp. A step is: edits for this step, set the grads, optimizer.step(), each scheduler's
step(); then record every parameter, each group's lr, get_last_lr() of each scheduler, the optimizer's
state_dict() (after steps 0, 3 and the last; else null) and each scheduler's state_dict().

Layout: {"torch_version", "runs": [{"name", "dtype", "params": {name: {"shape", "values"}}, "optimizer",
"groups" (a list of names, or of {"params": [names], hyperparameters...}), "kwargs", "schedulers" ([[class name,
kwargs]], "lr_lambda" naming a function of LAMBDAS), "steps": [{"grads": {name: values}, "edits": [...]}],
"records": [per step {"params": {name: values}, "lrs", "last_lrs", "state_dict", "scheduler_state_dicts"}],
"repr"}], "schedules": [{"name", "lrs" (per step, get_last_lr()), "warnings"}], "errors": [{"name", "type",
"message"}], "warnings": [{"name", "warnings": [[message, category]]}]}. Values that JSON cannot tell apart are
tagged (encode below): tensors {"tensor", "dtype"}, tuples {"tuple"}, dicts {"dict": [[key, value]]} (keys keep
their type and order), Counters {"counter": [[key, count]]}.
"""
import collections
import contextlib
import io
import json
import math
import sys
import warnings

import torch

sys.dont_write_bytecode = True  # keep __pycache__ out of tests/golden
from gen_tdp_params import here

DTYPES = {"float32": torch.float32, "float64": torch.float64}


class HalfEvery:
    """A callable object: LambdaLR saves its __dict__ in state_dict (a function is saved as None)."""

    def __init__(self, every):
        self.every = every

    def __call__(self, epoch):
        return 0.5 ** (epoch // self.every)


# LambdaLR/MultiplicativeLR functions, by name (test_optim.py has the same table)
LAMBDAS = {
    "inverse": lambda e: 1.0 / (e + 1),
    "decay09": lambda e: 0.9 ** e,
    "half_every_2": HalfEvery(2),
    "times095": lambda e: 0.95,
}


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


def encode(x):
    if torch.is_tensor(x):
        return {"tensor": x.tolist(), "dtype": str(x.dtype)}
    if isinstance(x, collections.Counter):
        return {"counter": [[k, v] for k, v in x.items()]}
    if isinstance(x, dict):
        return {"dict": [[encode(k), encode(v)] for k, v in x.items()]}
    if isinstance(x, tuple):
        return {"tuple": [encode(v) for v in x]}
    if isinstance(x, list):
        return [encode(v) for v in x]
    if callable(x):   # a function or bound method by name; CyclicLR's weakref.WeakMethod by its type
        return {"callable": getattr(x, "__name__", type(x).__name__)}
    assert x is None or isinstance(x, (bool, int, float, str)), type(x)
    return x


def _group_args(spec_value):
    """JSON lists back to the tuples 1.13 keeps (betas)."""
    return tuple(spec_value) if isinstance(spec_value, list) else spec_value


def build(run, tensors):
    groups = run["groups"]
    if isinstance(groups[0], str):
        params = [tensors[n] for n in groups]
    else:
        params = [{k: ([tensors[n] for n in v] if k == "params" else _group_args(v)) for k, v in g.items()}
                  for g in groups]
    kwargs = {k: _group_args(v) for k, v in run["kwargs"].items()}
    opt = getattr(torch.optim, run["optimizer"])(params, **kwargs)
    scheds = []
    for cls, skw in run["schedulers"]:
        skw = dict(skw)
        if "lr_lambda" in skw:
            f = skw["lr_lambda"]
            skw["lr_lambda"] = [LAMBDAS[n] for n in f] if isinstance(f, list) else LAMBDAS[f]
        scheds.append(getattr(torch.optim.lr_scheduler, cls)(opt, **skw))
    return opt, scheds


def execute(run):
    dtype = DTYPES[run["dtype"]]
    tensors = {n: torch.nn.Parameter(torch.tensor(p["values"], dtype=dtype).reshape(p["shape"]))
               for n, p in run["params"].items()}
    opt, scheds = build(run, tensors)
    records = []
    for i, step in enumerate(run["steps"]):
        for edit in step["edits"]:
            if edit[0] == "set":
                opt.param_groups[edit[1]][edit[2]] = edit[3]
            elif edit[0] == "add_group":
                opt.add_param_group({k: ([tensors[n] for n in v] if k == "params" else _group_args(v))
                                     for k, v in edit[1].items()})
            elif edit[0] == "resume":
                saved, saved_scheds = opt.state_dict(), [s.state_dict() for s in scheds]
                tensors = {n: torch.nn.Parameter(t.detach().clone()) for n, t in tensors.items()}
                opt, scheds = build(run, tensors)
                opt.load_state_dict(saved)
                for s, sd in zip(scheds, saved_scheds):
                    s.load_state_dict(sd)
        for n, t in tensors.items():
            g = step["grads"].get(n)
            t.grad = None if g is None else torch.tensor(g, dtype=dtype).reshape(t.shape)
        opt.step()
        for s in scheds:
            s.step()
        records.append({"params": {n: t.detach().reshape(-1).tolist() for n, t in tensors.items()},
                        "lrs": [g["lr"] for g in opt.param_groups],
                        "last_lrs": [s.get_last_lr() for s in scheds],
                        "state_dict": encode(opt.state_dict()) if i in (0, 3, len(run["steps"]) - 1) else None,
                        "scheduler_state_dicts": [encode(s.state_dict()) for s in scheds]})
    return records, repr(opt)


def check_resume_is_seamless(runs):
    """A resumed run must match the same run without the resume (else the test would pin a broken golden)."""
    for run in runs:
        if not any(e[0] == "resume" for s in run["steps"] for e in s["edits"]):
            continue
        plain = json.loads(json.dumps(run))
        for s in plain["steps"]:
            s["edits"] = [e for e in s["edits"] if e[0] != "resume"]
        records, _ = execute(plain)
        assert [r["params"] for r in records] == [r["params"] for r in run["records"]], run["name"]


def recorded(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [[str(w.message), w.category.__name__] for w in caught]


def lr_trace(make_sched, n=8, epochs=None, metrics=None):
    """get_last_lr() after each of n (optimizer.step(), scheduler.step()) pairs, on SGD over two groups with lrs
    0.1 and 0.05; with `epochs`, step(epoch) is called with those epochs (the closed form); with `metrics`,
    step(metric) (ReduceLROnPlateau). Also the scheduler's state_dict and the groups' values at the end, and what
    it warned."""
    a, b = torch.nn.Parameter(torch.ones(1)), torch.nn.Parameter(torch.ones(1))
    opt = torch.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.05}], lr=0.1)
    out = {}

    def go():
        sched = make_sched(opt)
        lrs = [sched.get_last_lr()] if metrics is None else []   # ReduceLROnPlateau has none before its step
        for i in range(n if metrics is None else len(metrics)):
            opt.step()
            if metrics is not None:
                sched.step(metrics[i])
            elif epochs is not None:
                sched.step(epochs[i])
            else:
                sched.step()
            # (1.13's ReduceLROnPlateau has no get_last_lr())
            lrs.append(sched.get_last_lr() if metrics is None else [g["lr"] for g in opt.param_groups])
        out["lrs"] = lrs
        out["state_dict"] = encode(sched.state_dict())
        out["groups"] = encode([{k: v for k, v in g.items() if k != "params"} for g in opt.param_groups])
    out["warnings"] = recorded(go)
    return out


S = torch.optim.lr_scheduler
SCHEDULES = {
    "StepLR": lambda o: S.StepLR(o, step_size=3, gamma=0.3),
    "MultiStepLR": lambda o: S.MultiStepLR(o, milestones=[1, 4, 4, 6], gamma=0.7),
    "ExponentialLR": lambda o: S.ExponentialLR(o, gamma=0.85),
    "CosineAnnealingLR": lambda o: S.CosineAnnealingLR(o, T_max=3, eta_min=0.001),
    "LinearLR": lambda o: S.LinearLR(o, start_factor=0.1, end_factor=0.9, total_iters=5),
    "ConstantLR": lambda o: S.ConstantLR(o, factor=0.25, total_iters=3),
    "PolynomialLR": lambda o: S.PolynomialLR(o, total_iters=6, power=2.0),
    "LambdaLR": lambda o: S.LambdaLR(o, lr_lambda=LAMBDAS["inverse"]),
    "MultiplicativeLR": lambda o: S.MultiplicativeLR(o, lr_lambda=[LAMBDAS["times095"], LAMBDAS["decay09"]]),
    "SequentialLR": lambda o: S.SequentialLR(o, [S.ConstantLR(o, factor=0.5, total_iters=2),
                                                 S.ExponentialLR(o, gamma=0.9)], milestones=[3]),
    "ChainedScheduler": lambda o: S.ChainedScheduler([S.ExponentialLR(o, gamma=0.9),
                                                      S.StepLR(o, step_size=2, gamma=0.5)]),
    "CosineAnnealingWarmRestarts": lambda o: S.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=2, eta_min=0.01),
    "CosineAnnealingWarmRestarts-Tmult1": lambda o: S.CosineAnnealingWarmRestarts(o, T_0=3),
    "OneCycleLR": lambda o: S.OneCycleLR(o, max_lr=[1.0, 0.5], total_steps=10),
    # resumed with last_epoch > 0 over groups that carry initial_lr (set by a first scheduler here)
    "CosineAnnealingLR-resumed": lambda o: (S.CosineAnnealingLR(o, T_max=6),
                                            S.CosineAnnealingLR(o, T_max=6, eta_min=0.01, last_epoch=4))[1],
    "StepLR-resumed": lambda o: (S.StepLR(o, 2), S.StepLR(o, step_size=2, gamma=0.5, last_epoch=3))[1],
    "CyclicLR": lambda o: S.CyclicLR(o, base_lr=0.01, max_lr=[0.1, 0.2], step_size_up=2, step_size_down=3),
    "CyclicLR-triangular2": lambda o: S.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=2, mode="triangular2",
                                                 cycle_momentum=False),
    "CyclicLR-exp-range": lambda o: S.CyclicLR(o, base_lr=[0.01, 0.02], max_lr=0.1, step_size_up=1, mode="exp_range",
                                               gamma=0.9, base_momentum=0.7, max_momentum=[0.8, 0.95]),
    "CyclicLR-scale-fn": lambda o: S.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=3, scale_fn=LAMBDAS["inverse"],
                                              scale_mode="iterations"),
    "OneCycleLR-three-phase-linear": lambda o: S.OneCycleLR(o, max_lr=0.8, epochs=3, steps_per_epoch=3,
                                                            pct_start=0.4, anneal_strategy="linear",
                                                            three_phase=True, base_momentum=0.8),
}
# ReduceLROnPlateau: step(metric) with these metrics
PLATEAU_METRICS = [1.0, 0.9, 0.95, 0.95, 0.95, 0.89, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9]
PLATEAUS = {
    "ReduceLROnPlateau": lambda o: S.ReduceLROnPlateau(o, patience=2, cooldown=1, factor=0.5, min_lr=[0.02, 0.0]),
    "ReduceLROnPlateau-max-abs": lambda o: S.ReduceLROnPlateau(o, mode="max", threshold_mode="abs", threshold=0.01,
                                                               patience=1, verbose=True),
}
# step(epoch): the closed forms, jumping around
CLOSED_FORM_EPOCHS = [1, 2, 5, 3, 3, 8, 0, 4]
CLOSED_FORMS = ["StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR", "LinearLR", "ConstantLR",
                "PolynomialLR", "LambdaLR", "CosineAnnealingWarmRestarts", "CosineAnnealingWarmRestarts-Tmult1"]
# CosineAnnealingWarmRestarts takes fractional epochs
FRACTIONAL_EPOCHS = [0.5, 1.5, 2.0, 3.7, 9.2, 4.0, 0.0, 10.0]


def _p():
    return torch.nn.Parameter(torch.ones(2))


def _sgd():
    return torch.optim.SGD([_p()], lr=0.1)


def _resumed_without_initial_lr():
    S.StepLR(_sgd(), step_size=1, last_epoch=3)


def _load_groups_mismatch():
    _sgd().load_state_dict(torch.optim.SGD([{"params": [_p()]}, {"params": [_p()]}], lr=0.1).state_dict())


def _onecycle_past_the_end():
    o = _sgd()
    s = S.OneCycleLR(o, max_lr=0.1, total_steps=2)
    for _ in range(3):
        o.step()
        s.step()


def _load_size_mismatch():
    _sgd().load_state_dict(torch.optim.SGD([_p(), _p()], lr=0.1).state_dict())


ERRORS = {
    "param-in-two-groups": lambda: (lambda p: torch.optim.SGD([{"params": [p]}, {"params": p}], lr=0.1))(_p()),
    "add-group-overlap": lambda: (lambda p: torch.optim.Adam([p]).add_param_group({"params": [p], "lr": 1.0}))(_p()),
    "missing-lr": lambda: torch.optim.SGD([{"params": [_p()]}]),
    "missing-lr-second-group": lambda: torch.optim.SGD([{"params": [_p()], "lr": 0.1}, {"params": [_p()]}]),
    "empty": lambda: torch.optim.AdamW([]),
    "set-of-params": lambda: torch.optim.SGD([{"params": {_p()}}], lr=0.1),
    "tensor-as-params": lambda: torch.optim.SGD(_p(), lr=0.1),
    "not-a-tensor": lambda: torch.optim.SGD([_p(), 3], lr=0.1),
    "dict-after-tensor": lambda: torch.optim.SGD([_p(), {"params": [_p()]}], lr=0.1),
    "non-leaf": lambda: torch.optim.SGD([_p() * 2], lr=0.1),
    "group-not-a-dict": lambda: _sgd().add_param_group([_p()]),
    "group-without-params": lambda: torch.optim.SGD([{"lr": 0.1}], lr=0.1),
    "load-groups-mismatch": _load_groups_mismatch,
    "load-size-mismatch": _load_size_mismatch,
    "adamw-negative-wd": lambda: torch.optim.AdamW([_p()], weight_decay=-0.1),
    "adamw-bad-beta": lambda: torch.optim.AdamW([_p()], betas=(0.9, 1.0)),
    "adamw-bad-eps": lambda: torch.optim.AdamW([_p()], eps=-1),
    "scheduler-not-optimizer": lambda: S.StepLR("opt", step_size=1),
    "scheduler-resume-without-initial-lr": _resumed_without_initial_lr,
    "lambdalr-count": lambda: S.LambdaLR(_sgd(), lr_lambda=[LAMBDAS["inverse"]] * 2),
    "constantlr-factor": lambda: S.ConstantLR(_sgd(), factor=1.5),
    "linearlr-start": lambda: S.LinearLR(_sgd(), start_factor=-0.1),
    "linearlr-end": lambda: S.LinearLR(_sgd(), end_factor=2),
    "sequentiallr-milestones": lambda: (lambda o: S.SequentialLR(o, [S.StepLR(o, 1)], milestones=[2]))(_sgd()),
    "sequentiallr-other-optimizer": lambda: (lambda o: S.SequentialLR(o, [S.StepLR(_sgd(), 1)], milestones=[]))(
        _sgd()),
    "plateau-factor": lambda: S.ReduceLROnPlateau(_sgd(), factor=1.0),
    "plateau-mode": lambda: S.ReduceLROnPlateau(_sgd(), mode="lowest"),
    "plateau-threshold-mode": lambda: S.ReduceLROnPlateau(_sgd(), threshold_mode="ratio"),
    "plateau-min-lrs": lambda: S.ReduceLROnPlateau(_sgd(), min_lr=[0.1, 0.2]),
    "warm-restarts-T0": lambda: S.CosineAnnealingWarmRestarts(_sgd(), T_0=0),
    "warm-restarts-Tmult": lambda: S.CosineAnnealingWarmRestarts(_sgd(), T_0=2, T_mult=1.5),
    "warm-restarts-negative-epoch": lambda: S.CosineAnnealingWarmRestarts(_sgd(), T_0=2).step(-1),
    "onecycle-no-length": lambda: S.OneCycleLR(_sgd(), max_lr=0.1),
    "onecycle-total-steps": lambda: S.OneCycleLR(_sgd(), max_lr=0.1, total_steps=0),
    "onecycle-pct-start": lambda: S.OneCycleLR(_sgd(), max_lr=0.1, total_steps=4, pct_start=1),
    "onecycle-strategy": lambda: S.OneCycleLR(_sgd(), max_lr=0.1, total_steps=4, anneal_strategy="exp"),
    "onecycle-max-lrs": lambda: S.OneCycleLR(_sgd(), max_lr=[0.1, 0.2], total_steps=4),
    "onecycle-past-the-end": _onecycle_past_the_end,
    "cyclic-mode": lambda: S.CyclicLR(_sgd(), base_lr=0.1, max_lr=1.0, mode="sawtooth"),
    "cyclic-no-momentum": lambda: S.CyclicLR(torch.optim.Adam([_p()]), base_lr=0.1, max_lr=1.0),
    "onecycle-no-momentum": lambda: S.OneCycleLR(torch.optim.Optimizer([_p()], {"lr": 0.1}), max_lr=1.0,
                                                 total_steps=3),
}


def _scheduler_before_optimizer():
    o = _sgd()
    s = S.StepLR(o, step_size=1)
    s.step()
    o.step()
    s.step()


def _optimizer_step_replaced():
    o = _sgd()
    s = S.ExponentialLR(o, gamma=0.5)
    o.step = lambda closure=None: None
    o.step()
    s.step()


def _get_lr_directly():
    S.StepLR(_sgd(), step_size=1).get_lr()


def _in_order():
    o = _sgd()
    s = S.StepLR(o, step_size=1)
    for _ in range(3):
        o.step()
        s.step()


def _epoch_argument():
    o = _sgd()
    s = S.StepLR(o, step_size=1)
    o.step()
    s.step(4)


def _duplicate_in_group():
    p = _p()
    torch.optim.SGD([{"params": [p, p]}], lr=0.1)


def _verbose():
    o = _sgd()
    s = S.StepLR(o, step_size=1, verbose=True)
    o.step()
    s.step()
    s.step(3)


WARNINGS = {
    "scheduler-before-optimizer": _scheduler_before_optimizer,
    "optimizer-step-replaced": _optimizer_step_replaced,
    "get-lr-directly": _get_lr_directly,
    "in-order": _in_order,
    "epoch-argument": _epoch_argument,
    "duplicate-in-group": _duplicate_in_group,
    "verbose": _verbose,
}


def main():
    runs = []
    for run in RUNS:
        run = json.loads(json.dumps(run))   # what the test reads: tuples are lists there too
        run["records"], run["repr"] = execute(run)
        runs.append(run)
    check_resume_is_seamless(runs)
    schedules = [{"name": name, "scheduler": name, **lr_trace(make)} for name, make in SCHEDULES.items()]
    schedules += [{"name": name + "-closed-form", "scheduler": name, "epochs": CLOSED_FORM_EPOCHS,
                   **lr_trace(SCHEDULES[name], epochs=CLOSED_FORM_EPOCHS)} for name in CLOSED_FORMS]
    schedules += [{"name": name + "-fractional-epochs", "scheduler": name, "epochs": FRACTIONAL_EPOCHS,
                   **lr_trace(SCHEDULES[name], epochs=FRACTIONAL_EPOCHS)}
                  for name in ("CosineAnnealingWarmRestarts", "CosineAnnealingWarmRestarts-Tmult1")]
    for name, make in PLATEAUS.items():
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            trace = lr_trace(make, metrics=PLATEAU_METRICS)
        schedules.append({"name": name, "scheduler": name, "metrics": PLATEAU_METRICS, **trace,
                          "stdout": printed.getvalue()})
    errors = []
    for name, fn in ERRORS.items():
        try:
            fn()
        except Exception as e:   # noqa: BLE001 -- the golden records whatever 1.13 raises
            errors.append({"name": name, "type": type(e).__name__, "message": str(e)})
        else:
            raise AssertionError(f"{name}: PyTorch raised nothing")
    warned = []
    for name, fn in WARNINGS.items():
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            w = recorded(fn)
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
