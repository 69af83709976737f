"""tinyddp.optim against PyTorch 1.13 (tests/golden/optim_groups.json, from gen_optim_groups.py): parameter
groups and their per-step values, add_param_group, state_dict/load_state_dict and resuming, AdamW, the
lr_scheduler schedules in both forms, and the texts of their errors and warnings.

The golden's runs are data (initial values, per-step gradients, groups, schedulers, edits between steps);
tests/golden/optim_cases.py interprets them, with torch in gen_optim_groups.py and with tinyddp here, and holds
the calls that must raise or warn. Parameters, states and learning rates must be equal bit for bit: models/optim
fuses the multiply-adds PyTorch's CPU kernels fuse (add with alpha, addcmul) and rounds the rest as they do.
"""
import contextlib
import importlib.util
import io
import json
import math
import os
import warnings

import pytest

import tinyddp as torch

GOLDEN_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden")
with open(os.path.join(GOLDEN_DIR, "optim_groups.json")) as f:
    GOLDEN = json.load(f)


def _optim_cases():
    """tests/golden/optim_cases.py, loaded by path (tests/golden is not a package)."""
    spec = importlib.util.spec_from_file_location("optim_cases", os.path.join(GOLDEN_DIR, "optim_cases.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


C = _optim_cases().cases(torch)   # the interpreter and tables gen_optim_groups.py ran on torch


def assert_same(ours, golden, where):
    """Equal structure, keys in the same order, equal values of the same type, tensors' values bit for bit (the
    updates round as 1.13's CPU kernels: models/optim fuses the multiply-adds they fuse); `where` names the first
    difference."""
    if isinstance(golden, dict):
        assert isinstance(ours, dict) and list(ours) == list(golden), f"{where}: {ours!r} != {golden!r}"
        for k in golden:
            assert_same(ours[k], golden[k], f"{where}.{k}")
    elif isinstance(golden, list):
        assert isinstance(ours, list) and len(ours) == len(golden), f"{where}: {ours!r} != {golden!r}"
        for i, (o, g) in enumerate(zip(ours, golden)):
            assert_same(o, g, f"{where}[{i}]")
    else:
        assert type(ours) is type(golden) and ours == golden, f"{where}: {ours!r} != {golden!r}"


@pytest.mark.parametrize("run", GOLDEN["runs"], ids=[r["name"] for r in GOLDEN["runs"]])
def test_runs_match_pytorch(run):
    records, rep = C.execute(run)
    for i, (ours, want) in enumerate(zip(records, run["records"], strict=True)):
        assert_same(ours, want, f"{run['name']} step {i}")
    assert rep == run["repr"]


@pytest.mark.parametrize("golden", GOLDEN["schedules"], ids=[s["name"] for s in GOLDEN["schedules"]])
def test_schedules_match_pytorch(golden):
    make = {**C.SCHEDULES, **C.PLATEAUS}[golden["scheduler"]]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        ours = C.lr_trace(make, epochs=golden.get("epochs"), metrics=golden.get("metrics"))
    # exact: the same Python float operations in the same order (chainable and closed forms round differently)
    assert ours["lrs"] == golden["lrs"]
    assert_same(ours["state_dict"], golden["state_dict"], "state_dict")
    assert_same(ours["groups"], golden["groups"], "param_groups")
    assert ours["warnings"] == golden["warnings"]
    assert printed.getvalue() == golden.get("stdout", "")


@pytest.mark.parametrize("golden", GOLDEN["errors"], ids=[e["name"] for e in GOLDEN["errors"]])
def test_errors_match_pytorch(golden):
    with pytest.raises(Exception) as e:
        C.ERRORS[golden["name"]]()
    assert type(e.value).__name__ == golden["type"]
    assert str(e.value) == golden["message"]


@pytest.mark.parametrize("golden", GOLDEN["warnings"], ids=[w["name"] for w in GOLDEN["warnings"]])
def test_warnings_match_pytorch(golden):
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        ours = C.recorded(C.WARNINGS[golden["name"]])
    assert ours == golden["warnings"]
    assert printed.getvalue() == golden["stdout"]


def test_golden_covers_the_api():
    # a regenerated golden must keep exercising what this file claims to test
    names = {r["name"] for r in GOLDEN["runs"]}
    assert {"sgd-resume", "adam-resume", "adamw-cosine", "adam-add-param-group", "sgd-edit-group-values",
            "sgd-onecycle-momentum", "adam-onecycle-betas"} <= names
    assert {r["optimizer"] for r in GOLDEN["runs"]} == {"SGD", "Adam", "AdamW"}
    assert len(GOLDEN["errors"]) == len(C.ERRORS) and len(GOLDEN["warnings"]) == len(C.WARNINGS)


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
