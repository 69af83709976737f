"""tinyddp.optim against PyTorch 1.13 (tests/golden/optim_groups.json, from gen_optim_groups.py): parameter
groups and their per-step values, add_param_group, state_dict/load_state_dict and resuming, AdamW, the
lr_scheduler schedules in both forms, and the texts of their errors and warnings.

The golden's runs are data (initial values, per-step gradients, groups, schedulers, edits between steps); this
file interprets them with tinyddp as gen_optim_groups.py does with torch. Parameters, states and learning rates
must be equal bit for bit: models/optim fuses the multiply-adds PyTorch's CPU kernels fuse (add with alpha,
addcmul) and rounds the rest as they do.
"""
import collections
import contextlib
import io
import json
import math
import os
import warnings

import numpy as np
import pytest

import tinyddp as torch

GOLDEN = json.load(open(os.path.join(os.path.dirname(__file__), "..", "golden", "optim_groups.json")))
DTYPES = {"float32": torch.float32, "float64": torch.float64}
RTOL = {"float32": 0.0, "float64": 0.0}   # bitwise: the updates round as 1.13's CPU kernels (models/optim)
ATOL = {"float32": 0.0, "float64": 0.0}


class HalfEvery:
    def __init__(self, every):
        self.every = every

    def __call__(self, epoch):
        return 0.5 ** (epoch // self.every)


# gen_optim_groups.py's table
LAMBDAS = {
    "inverse": lambda e: 1.0 / (e + 1),
    "decay09": lambda e: 0.9 ** e,
    "half_every_2": HalfEvery(2),
    "times095": lambda e: 0.95,
}


def encode(x):
    """gen_optim_groups.encode, for tinyddp's values."""
    if isinstance(x, torch.Tensor):
        return {"tensor": x.tolist(), "dtype": repr(x.dtype)}
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


def assert_same(ours, golden, where, rtol, atol):
    """Equal structure, keys in the same order, equal non-tensor values of the same type; tensors close."""
    if isinstance(golden, dict) and "tensor" in golden:
        assert isinstance(ours, dict) and "tensor" in ours, f"{where}: {ours!r} is not a tensor"
        assert ours["dtype"] == golden["dtype"], where
        np.testing.assert_allclose(np.array(ours["tensor"], dtype=float), np.array(golden["tensor"], dtype=float),
                                   rtol=rtol, atol=atol, err_msg=where)
    elif isinstance(golden, dict):
        assert isinstance(ours, dict) and list(ours) == list(golden), f"{where}: {ours!r} != {golden!r}"
        for k in golden:
            assert_same(ours[k], golden[k], f"{where}.{k}", rtol, atol)
    elif isinstance(golden, list):
        assert isinstance(ours, list) and len(ours) == len(golden), f"{where}: {ours!r} != {golden!r}"
        for i, (o, g) in enumerate(zip(ours, golden)):
            assert_same(o, g, f"{where}[{i}]", rtol, atol)
    else:
        assert type(ours) is type(golden) and ours == golden, f"{where}: {ours!r} != {golden!r}"


def _group_args(v):
    return tuple(v) if isinstance(v, list) else v


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


@pytest.mark.parametrize("run", GOLDEN["runs"], ids=[r["name"] for r in GOLDEN["runs"]])
def test_runs_match_pytorch(run):
    dtype = DTYPES[run["dtype"]]
    rtol, atol = RTOL[run["dtype"]], ATOL[run["dtype"]]
    tensors = {n: torch.nn.Parameter(torch.tensor(p["values"], dtype=dtype).reshape(p["shape"]))
               for n, p in run["params"].items()}
    opt, scheds = build(run, tensors)
    for i, (step, want) in enumerate(zip(run["steps"], run["records"])):
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
        where = f"{run['name']} step {i}"
        for n, t in tensors.items():
            np.testing.assert_allclose(np.array(t.detach().reshape(-1).tolist()), np.array(want["params"][n]),
                                       rtol=rtol, atol=atol, err_msg=f"{where}: {n}")
        assert [g["lr"] for g in opt.param_groups] == want["lrs"], where
        assert [s.get_last_lr() for s in scheds] == want["last_lrs"], where
        if want["state_dict"] is not None:
            assert_same(encode(opt.state_dict()), want["state_dict"], f"{where} state_dict", rtol, atol)
        assert_same([encode(s.state_dict()) for s in scheds], want["scheduler_state_dicts"],
                    f"{where} scheduler state_dict", 0, 0)
    assert repr(opt) == run["repr"]


def recorded(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [[str(w.message), w.category.__name__] for w in caught]


def lr_trace(make_sched, n=8, epochs=None, metrics=None):
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
# gen_optim_groups.py's table
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


@pytest.mark.parametrize("golden", GOLDEN["schedules"], ids=[s["name"] for s in GOLDEN["schedules"]])
def test_schedules_match_pytorch(golden):
    make = {**SCHEDULES, **PLATEAUS}[golden["scheduler"]]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        ours = lr_trace(make, epochs=golden.get("epochs"), metrics=golden.get("metrics"))
    # exact: the same Python float operations in the same order (chainable and closed forms round differently)
    assert ours["lrs"] == golden["lrs"]
    assert_same(ours["state_dict"], golden["state_dict"], "state_dict", 0, 0)
    assert_same(ours["groups"], golden["groups"], "param_groups", 0, 0)
    assert ours["warnings"] == golden["warnings"]
    assert printed.getvalue() == golden.get("stdout", "")


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


# gen_optim_groups.py's table
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


@pytest.mark.parametrize("golden", GOLDEN["errors"], ids=[e["name"] for e in GOLDEN["errors"]])
def test_errors_match_pytorch(golden):
    with pytest.raises(Exception) as e:
        ERRORS[golden["name"]]()
    assert type(e.value).__name__ == golden["type"]
    assert str(e.value) == golden["message"]


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


# gen_optim_groups.py's table
WARNINGS = {
    "scheduler-before-optimizer": _scheduler_before_optimizer,
    "optimizer-step-replaced": _optimizer_step_replaced,
    "get-lr-directly": _get_lr_directly,
    "in-order": _in_order,
    "epoch-argument": _epoch_argument,
    "duplicate-in-group": _duplicate_in_group,
    "verbose": _verbose,
}


@pytest.mark.parametrize("golden", GOLDEN["warnings"], ids=[w["name"] for w in GOLDEN["warnings"]])
def test_warnings_match_pytorch(golden):
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        ours = recorded(WARNINGS[golden["name"]])
    assert ours == golden["warnings"]
    assert printed.getvalue() == golden["stdout"]


def test_golden_covers_the_api():
    # a regenerated golden must keep exercising what this file claims to test
    names = {r["name"] for r in GOLDEN["runs"]}
    assert {"sgd-resume", "adam-resume", "adamw-cosine", "adam-add-param-group", "sgd-edit-group-values",
            "sgd-onecycle-momentum", "adam-onecycle-betas"} <= names
    assert {r["optimizer"] for r in GOLDEN["runs"]} == {"SGD", "Adam", "AdamW"}
    assert len(GOLDEN["errors"]) == len(ERRORS) and len(GOLDEN["warnings"]) == len(WARNINGS)


# ---- behaviour the goldens do not pin down ----

def test_param_groups_are_the_dicts_given_and_defaults_fill_them():
    a, b = torch.nn.Parameter(torch.ones(2)), torch.nn.Parameter(torch.ones(3))
    group = {"params": b, "lr": 1e-3}
    opt = torch.optim.SGD([{"params": [a]}, group], lr=0.1, momentum=0.9)
    assert opt.param_groups[1] is group and group["params"] == [b]   # 1.13 keeps the caller's dict
    assert list(group) == ["params", "lr", "momentum", "dampening", "weight_decay", "nesterov", "maximize",
                           "foreach", "differentiable"]
    assert opt.defaults == {"lr": 0.1, "momentum": 0.9, "dampening": 0, "weight_decay": 0, "nesterov": False,
                            "maximize": False, "foreach": None, "differentiable": False}
    assert list(torch.optim.AdamW([a]).param_groups[0]) == ["params", "lr", "betas", "eps", "weight_decay", "amsgrad",
                                                            "foreach", "maximize", "capturable"]
    assert torch.optim.AdamW([a]).param_groups[0]["weight_decay"] == 1e-2


def test_state_dict_holds_the_optimizers_tensors_and_load_copies_them():
    p = torch.nn.Parameter(torch.tensor([1.0, 2.0]))
    opt = torch.optim.SGD([p], lr=0.1, momentum=0.9)
    p.grad = torch.tensor([1.0, 1.0])
    opt.step()
    sd = opt.state_dict()
    assert sd["state"][0]["momentum_buffer"] is opt.state[p]["momentum_buffer"]   # 1.13: no copy on save
    q = torch.nn.Parameter(torch.tensor([1.0, 2.0], dtype=torch.float64))
    other = torch.optim.SGD([q], lr=0.5)
    other.load_state_dict(sd)
    buf = other.state[q]["momentum_buffer"]
    assert buf is not sd["state"][0]["momentum_buffer"] and buf.dtype == torch.float64   # a copy, cast to q's dtype
    assert other.param_groups[0]["lr"] == 0.1 and other.param_groups[0]["params"][0] is q
    sd["state"][0]["momentum_buffer"].zero_()
    assert buf.tolist() == [1.0, 1.0]


def test_a_parameter_that_starts_requiring_grad_later_is_stepped():
    # 1.13 keeps every parameter and skips those whose .grad is None at each step
    frozen = torch.nn.Parameter(torch.tensor([1.0]), requires_grad=False)
    opt = torch.optim.SGD([frozen], lr=0.5)
    frozen.requires_grad_()
    (frozen * 2).sum().backward()
    opt.step()
    assert frozen.tolist() == [0.0]


def test_duplicate_parameter_is_stepped_per_occurrence_as_pytorch():
    # 1.13: each occurrence updates p (with no momentum: p -= lr * grad twice)
    p = torch.nn.Parameter(torch.tensor([1.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opt = torch.optim.SGD([p, p], lr=0.25)
    p.grad = torch.tensor([1.0])
    opt.step()
    assert p.tolist() == [0.5]


def test_adam_state_step_is_a_float32_tensor_and_a_loaded_number_becomes_one():
    p = torch.nn.Parameter(torch.tensor([1.0, -1.0]))
    opt = torch.optim.Adam([p], lr=0.1)
    p.grad = torch.tensor([0.5, 0.5])
    opt.step()
    step = opt.state[p]["step"]
    assert isinstance(step, torch.Tensor) and step.dtype == torch.float32 and step.item() == 1.0
    sd = opt.state_dict()
    sd["state"][0]["step"] = 1   # a checkpoint from an older PyTorch (1.13 converts it)
    q = torch.nn.Parameter(torch.tensor([1.0, -1.0]))
    other = torch.optim.Adam([q], lr=0.1)
    other.load_state_dict(sd)
    assert isinstance(other.state[q]["step"], torch.Tensor) and other.state[q]["step"].item() == 1.0


def test_loaded_state_of_the_wrong_shape_is_an_error_not_a_crash():
    p = torch.nn.Parameter(torch.ones(2))
    opt = torch.optim.Adam([p])
    opt.state[p] = {"step": torch.tensor(0.0), "exp_avg": torch.zeros(3), "exp_avg_sq": torch.zeros(2)}
    p.grad = torch.ones(2)
    with pytest.raises(RuntimeError, match="the state 'exp_avg' of a parameter of dtype float32 and shape"):
        opt.step()


def test_zero_grad_covers_every_group():
    a, b = torch.nn.Parameter(torch.ones(1)), torch.nn.Parameter(torch.ones(1))
    opt = torch.optim.SGD([{"params": [a]}, {"params": [b], "lr": 1.0}], lr=0.1)
    a.grad, b.grad = torch.ones(1), torch.ones(1)
    opt.zero_grad()
    assert a.grad.tolist() == [0.0] and b.grad.tolist() == [0.0]
    opt.zero_grad(set_to_none=True)
    assert a.grad is None and b.grad is None


def test_scheduler_drives_the_next_step():
    p = torch.nn.Parameter(torch.tensor([0.0]))
    opt = torch.optim.SGD([p], lr=1.0)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    moves = []
    for _ in range(3):
        before = p.item()
        p.grad = torch.tensor([1.0])
        opt.step()
        sched.step()
        moves.append(before - p.item())
    assert moves == [1.0, 0.5, 0.25] and sched.last_epoch == 3
    assert math.isclose(opt.param_groups[0]["initial_lr"], 1.0)


def test_a_subclass_step_calling_super_counts_once_for_the_scheduler():
    class Logged(torch.optim.SGD):
        def step(self, closure=None):
            return super().step(closure)
    p = torch.nn.Parameter(torch.ones(1))
    opt = Logged([p], lr=0.1)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1)
    opt.step()
    opt.step()
    assert opt._step_count == 2   # 1.13's counter wraps the instance's step, once
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sched.step()


@pytest.mark.parametrize("make", [lambda ps: torch.optim.SGD(ps, lr=0.1, differentiable=True),
                                  lambda ps: torch.optim.Adam(ps, fused=True),
                                  lambda ps: torch.optim.Adam(ps, capturable=True),
                                  lambda ps: torch.optim.AdamW(ps, capturable=True)])
def test_variants_without_an_implementation_say_so(make):
    with pytest.raises(NotImplementedError, match="leave"):
        make([torch.nn.Parameter(torch.ones(1))])
