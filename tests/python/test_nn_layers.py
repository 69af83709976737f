# tinyddp.nn's BatchNorm1d, LayerNorm, Embedding, the cheap layers and nn.utils against real PyTorch 1.13
# (tests/golden/gen_nn_layers.py -> nn_layers.json): outputs, gradients, second derivatives, running statistics
# and their versions, reprs and error texts; and BatchNorm1d under DDP on 2 spawn ranks, the GAN idiom's "modified
# by an inplace operation" error with 1.13's versions, against the same script under gloo.
import json
import math
import os
import warnings

import numpy as np
import pytest

import tinyddp as torch
import tinyddp.distributed as dist
import tinyddp.multiprocessing as mp
import tinyddp.nn as nn
import tinyddp.nn.functional as F
from tinyddp.nn.parallel import DistributedDataParallel as DDP

GOLDEN = json.load(open(os.path.join(os.path.dirname(__file__), "..", "golden", "nn_layers.json")))
# float32 against float32, the same formulas evaluated in another order.
RTOL, ATOL = 1e-5, 1e-5


def t(j, requires_grad=False):
    """A float32 tensor from the golden {"shape", "values"}."""
    return torch.tensor(j["values"], requires_grad=False).reshape(j["shape"]).requires_grad_(requires_grad)


def close(got, want, what, atol=ATOL):
    """got (a tensor or None) against the golden tensor want (or None); the max difference on failure."""
    if want is None:
        assert got is None, f"{what}: expected None"
        return
    assert got is not None, f"{what}: got None"
    g = np.array(got.detach().tolist(), dtype=np.float64).reshape(want["shape"])
    w = np.array(want["values"], dtype=np.float64).reshape(want["shape"])
    assert list(got.shape) == want["shape"], f"{what}: shape {list(got.shape)} vs {want['shape']}"
    assert np.allclose(g, w, rtol=RTOL, atol=atol), f"{what}: max |diff| = {np.max(np.abs(g - w))}"


def set_affine(module, case):
    if case["weight"] is not None:
        with torch.no_grad():
            module.weight.copy_(t(case["weight"]))
            module.bias.copy_(t(case["bias"]))


def grad(p):
    return None if p is None else p.grad


@pytest.mark.parametrize("case", GOLDEN["batch_norm"], ids=lambda c: c["id"])
def test_batch_norm_training_steps_eval_and_double_backward_match_pytorch(case):
    cfg = case["config"]
    cls = nn.BatchNorm2d if len(case["steps"][0]["x"]["shape"]) == 4 else nn.BatchNorm1d
    bn = cls(cfg["num_features"], eps=cfg["eps"], momentum=cfg["momentum"], affine=cfg["affine"],
                        track_running_stats=cfg["track_running_stats"])
    set_affine(bn, case)
    for k, step in enumerate(case["steps"]):
        x = t(step["x"], requires_grad=True)
        bn.zero_grad()
        out = bn(x)
        (out * t(step["coeff"])).sum().backward()
        close(out, step["out"], f"step {k} out")
        close(x.grad, step["x_grad"], f"step {k} x.grad")
        close(grad(bn.weight), step["weight_grad"], f"step {k} weight.grad")
        close(grad(bn.bias), step["bias_grad"], f"step {k} bias.grad")
        if cfg["track_running_stats"]:
            close(bn.running_mean, step["running_mean"], f"step {k} running_mean")
            close(bn.running_var, step["running_var"], f"step {k} running_var")
            assert bn.num_batches_tracked.dtype == torch.int64
            assert int(bn.num_batches_tracked) == step["num_batches_tracked"]
            assert {n: b._version for n, b in bn.named_buffers()} == step["versions"]
        else:
            assert bn.running_mean is None and bn.num_batches_tracked is None
    bn.eval()
    ev = case["eval"]
    x = t(ev["x"], requires_grad=True)
    bn.zero_grad()
    out = bn(x)
    (out * t(ev["coeff"])).sum().backward()
    assert out.grad_fn.name() == ev["grad_fn"]
    close(out, ev["out"], "eval out")
    close(x.grad, ev["x_grad"], "eval x.grad")
    close(grad(bn.weight), ev["weight_grad"], "eval weight.grad")
    close(grad(bn.bias), ev["bias_grad"], "eval bias.grad")

    fresh = cls(cfg["num_features"], eps=cfg["eps"], momentum=cfg["momentum"], affine=cfg["affine"],
                           track_running_stats=cfg["track_running_stats"])
    set_affine(fresh, case)
    d = case["double"]
    x = t(d["x"], requires_grad=True)
    (g,) = torch.autograd.grad((fresh(x) * t(d["coeff"])).sum(), x, create_graph=True)
    wrt = [x] + ([fresh.weight] if cfg["affine"] else [])
    grads = torch.autograd.grad((g * g).sum(), wrt)
    close(grads[0], d["x_grad2"], "d/dx sum(g^2)", atol=1e-4)
    close(grads[1] if cfg["affine"] else None, d["weight_grad2"], "d/dw sum(g^2)", atol=1e-4)


@pytest.mark.parametrize("case", GOLDEN["layer_norm"], ids=lambda c: c["id"])
def test_layer_norm_outputs_gradients_and_double_backward_match_pytorch(case):
    ln = nn.LayerNorm(case["normalized_shape"], eps=case["eps"], elementwise_affine=case["affine"])
    set_affine(ln, case)
    x = t(case["x"], requires_grad=True)
    coeff = t(case["coeff"])
    out = ln(x)
    (out * coeff).sum().backward()
    assert out.grad_fn.name() == case["grad_fn"]
    close(out, case["out"], "out")
    close(x.grad, case["x_grad"], "x.grad")
    close(grad(ln.weight), case["weight_grad"], "weight.grad")
    close(grad(ln.bias), case["bias_grad"], "bias.grad")
    (g,) = torch.autograd.grad((ln(x) * coeff).sum(), x, create_graph=True)
    wrt = [x] + ([ln.weight] if case["affine"] else [])
    grads = torch.autograd.grad((g * g).sum(), wrt)
    close(grads[0], case["x_grad2"], "d/dx sum(g^2)", atol=1e-4)
    close(grads[1] if case["affine"] else None, case["weight_grad2"], "d/dw sum(g^2)", atol=1e-4)


def test_embedding_rows_and_scatter_add_gradient_match_pytorch():
    case = GOLDEN["embedding"]
    emb = nn.Embedding(5, 3)
    with torch.no_grad():
        emb.weight.copy_(t(case["weight"]))
    out = emb(torch.tensor(case["indices"]))
    (out * t(case["coeff"])).sum().backward()
    assert out.grad_fn.name() == case["grad_fn"]
    close(out, case["out"], "out", atol=0)   # rows copied: exact
    close(emb.weight.grad, case["weight_grad"], "weight.grad")


def test_cheap_layers_and_utils_match_pytorch():
    m = GOLDEN["misc"]
    c = m["leaky_relu"]
    x = t(c["x"], requires_grad=True)
    y = F.leaky_relu(x, c["negative_slope"])
    (y * t(c["coeff"])).sum().backward()
    close(y, c["out"], "leaky_relu", atol=0)
    close(x.grad, c["x_grad"], "leaky_relu grad (slope at 0, as PyTorch's)")
    assert nn.LeakyReLU(c["negative_slope"])(x).tolist() == y.tolist()

    c = m["gelu_tanh"]
    x = t(c["x"], requires_grad=True)
    y = nn.GELU(approximate="tanh")(x)
    (y * t(GOLDEN["misc"]["leaky_relu"]["coeff"])).sum().backward()
    close(y, c["out"], "gelu tanh")
    close(x.grad, c["x_grad"], "gelu tanh grad")

    c = m["gelu_none"]
    x = t(c["x"], requires_grad=True)
    y = nn.GELU()(x)
    (y * t(GOLDEN["misc"]["leaky_relu"]["coeff"])).sum().backward()
    close(y, c["out"], "gelu (erf)")
    close(x.grad, c["x_grad"], "gelu (erf) grad")
    assert F.gelu(x, approximate="none").tolist() == y.tolist()

    c = m["l1_loss"]
    x = t(c["x"], requires_grad=True)
    loss = nn.L1Loss()(x, t(c["target"]))
    loss.backward()
    assert loss.grad_fn.name() == c["grad_fn"] and abs(loss.item() - c["loss"]) < 1e-6
    close(x.grad, c["x_grad"], "l1 grad")

    c = m["nll_loss"]
    x = t(c["x"], requires_grad=True)
    loss = nn.NLLLoss()(nn.LogSoftmax(dim=1)(x), torch.tensor(c["target"]))
    loss.backward()
    assert loss.grad_fn.name() == c["grad_fn"] and abs(loss.item() - c["loss"]) < 1e-6
    close(x.grad, c["x_grad"], "nll grad")

    c = m["clip_grad_norm"]
    lin = nn.Linear(3, 2)
    with torch.no_grad():
        lin.weight.copy_(t(c["weight"]))
        lin.bias.copy_(t(c["bias"]))
    lin(t(c["x"])).pow(2).sum().backward()
    for p, want in zip(lin.parameters(), c["grads_before"]):
        close(p.grad, want, "grad before clipping")
    total = nn.utils.clip_grad_norm_(lin.parameters(), c["max_norm"])
    assert isinstance(total, torch.Tensor) and list(total.shape) == c["total_norm_shape"]
    assert abs(total.item() - c["total_norm"]) < 1e-5 * c["total_norm"]
    for p, want, version in zip(lin.parameters(), c["grads_after"], c["grad_versions"]):
        close(p.grad, want, "grad after clipping")
        assert p.grad._version == version

    c = m["clip_grad_value"]
    nan = float("nan")
    lin.weight.grad = torch.tensor([[nan if v == "nan" else v for v in row] for row in c["weight_grad"]])
    lin.bias.grad = torch.tensor(c["bias_grad"])
    nn.utils.clip_grad_value_(lin.parameters(), c["clip_value"])
    as_json = lambda g: [["nan" if v != v else v for v in row] for row in g]  # noqa: E731
    assert [as_json(lin.weight.grad.tolist()), lin.bias.grad.tolist()] == c["clipped"]
    nn.utils.clip_grad_value_(lin.bias, -0.5)
    assert lin.bias.grad.tolist() == c["negative_clip_bias"]

    vec = nn.utils.parameters_to_vector(lin.parameters())
    assert vec.grad_fn.name() == m["parameters_to_vector"]["grad_fn"]
    close(vec, m["parameters_to_vector"]["vec"], "parameters_to_vector", atol=0)


def test_clip_grad_norm_options():
    lin = nn.Linear(2, 2)
    lin(torch.ones(1, 2)).sum().backward()
    other = nn.Linear(2, 2)   # other orders are 1.13's composition (values against 1.13 in test_api_more.py)
    other(torch.ones(1, 2)).sum().backward()
    assert nn.utils.clip_grad_norm_(other.parameters(), 1.0, norm_type=1).item() == 6.0   # |dW| 4 + |db| 2
    assert other.bias.grad.tolist() == [np.float32(1 / (6 + 1e-6))] * 2
    before = [p.grad.tolist() for p in lin.parameters()]
    nn.utils.clip_grad_norm_(lin.parameters(), 0.0)   # 1.13 scales by 0 / (norm + 1e-6): zeros
    assert all(v == 0.0 for p in lin.parameters() for v in np.ravel(p.grad.tolist())) and before[1] == [1.0, 1.0]
    lin.weight.grad.fill_(float("nan"))
    with pytest.raises(RuntimeError, match=r"The total norm of order 2.0 for gradients from `parameters` is non-fin"):
        nn.utils.clip_grad_norm_(lin.parameters(), 1.0, error_if_nonfinite=True)
    vec = torch.arange(6, dtype=torch.float32)
    nn.utils.vector_to_parameters(vec, lin.parameters())
    assert lin.weight.tolist() == [[0.0, 1.0], [2.0, 3.0]] and lin.bias.tolist() == [4.0, 5.0]


ENV = {"torch": torch, "nn": nn, "F": F, "math": math}


@pytest.mark.parametrize("expr", list(GOLDEN["reprs"]))
def test_reprs_and_values_match_pytorch(expr):
    assert repr(eval(expr, ENV)) == GOLDEN["reprs"][expr]


@pytest.mark.parametrize("expr", list(GOLDEN["errors"]))
def test_errors_match_pytorch(expr):
    want = GOLDEN["errors"][expr]
    with pytest.raises(Exception) as e:
        eval(expr, ENV)
    assert type(e.value).__name__ == want["type"] and str(e.value) == want["message"]


@pytest.mark.parametrize("name", list(GOLDEN["scripts"]))
def test_scripts_match_pytorch(name):
    """The generator's own code (saved-tensor packs, stale saved tensors, versions), run with tinyddp."""
    env = dict(ENV)
    exec(GOLDEN["scripts"][name]["code"], env)
    assert env["result"] == GOLDEN["scripts"][name]["result"]


def test_init_draws_the_distributions_and_warns_for_empty_tensors():
    torch.manual_seed(0)
    x = nn.init.normal_(torch.zeros(20000), 2.0, 0.5)
    assert abs(x.mean().item() - 2.0) < 0.02 and abs((x - 2.0).pow(2).mean().sqrt().item() - 0.5) < 0.02
    u = nn.init.uniform_(torch.zeros(20000), -1.0, 3.0)
    assert abs(u.mean().item() - 1.0) < 0.05
    w = nn.init.kaiming_normal_(torch.zeros(200, 100), nonlinearity="relu")
    assert abs(w.pow(2).mean().sqrt().item() - math.sqrt(2.0 / 100)) < 0.005
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        empty = torch.zeros(0, 3)
        assert nn.init.kaiming_uniform_(empty) is empty
    assert [str(c.message) for c in caught] == ["Initializing zero-element tensors is a no-op"]


def test_module_containers():
    d = nn.ModuleDict({"a": nn.ReLU()})
    d["b"] = nn.Linear(2, 2)
    d.update([("c", nn.Tanh())])
    assert list(d) == ["a", "b", "c"] and "b" in d and len(d) == 3
    assert [n for n, _ in d.named_parameters()] == ["b.weight", "b.bias"]
    assert isinstance(d.pop("a"), nn.ReLU) and list(d.keys()) == ["b", "c"]
    pl = nn.ParameterList([torch.zeros(2)])
    pl.append(nn.Parameter(torch.ones(3)))
    assert len(pl) == 2 and isinstance(pl[0], nn.Parameter) and pl[-1].tolist() == [1.0, 1.0, 1.0]
    assert pl[0].requires_grad and [tuple(p.shape) for p in pl.parameters()] == [(2,), (3,)]
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh."):
        nn.GELU(approximate="exact")


# ---- DDP: the GAN idiom through a BatchNorm1d, 2 ranks ----

DDP_GOLDEN = GOLDEN["ddp"]


class Disc(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(3)
        with torch.no_grad():
            self.bn.weight.copy_(t(DDP_GOLDEN["model"]["weight"]))
            self.bn.bias.copy_(t(DDP_GOLDEN["model"]["bias"]))

    def forward(self, x):
        return self.bn(x)


@pytest.mark.parametrize("run_id", list(DDP_GOLDEN["runs"]))
def test_batch_norm_under_ddp_matches_pytorch_gloo(run_id):
    """gan: D(real), D(fake), one backward: with broadcast_buffers the second forward's broadcast bumps the
    running stats the first saved, and both ranks raise 1.13's text with its versions (4, expected 3).
    train: one forward and one backward per iteration; the buffers' values and versions on each rank."""
    run = DDP_GOLDEN["runs"][run_id]
    results = {}

    def rank_fn(rank):
        dist.init_process_group("thread")
        module = Disc()
        model = DDP(module, broadcast_buffers=run["broadcast_buffers"])
        data = {k: t(v) for k, v in DDP_GOLDEN["data"][rank].items()}
        out = {"after_construction": module, "error": None, "steps": []}
        snap = lambda: {"buffers": {n: (b._version, b.clone()) for n, b in module.named_buffers()},  # noqa: E731
                        "weight_grad": None if module.bn.weight.grad is None else module.bn.weight.grad.clone(),
                        "bias_grad": None if module.bn.bias.grad is None else module.bn.bias.grad.clone()}
        out["after_construction"] = snap()["buffers"]
        if run["kind"] == "gan":
            d_real, d_fake = model(data["real"]), model(data["fake"])
            try:
                ((d_real * data["coeff"]).sum() + (d_fake * data["coeff"]).sum()).backward()
            except RuntimeError as e:
                out["error"] = str(e)
            out["steps"].append(snap())
        else:
            for x in (data["real"], data["fake"]):
                module.zero_grad()
                (model(x) * data["coeff"]).sum().backward()
                out["steps"].append(snap())
        results[rank] = out
        dist.destroy_process_group()

    mp.spawn(rank_fn, nprocs=2)
    for rank, want in enumerate(run["ranks"]):
        got = results[rank]
        assert got["error"] == want["error"], f"rank {rank}"

        def check_buffers(state, want_state, what):
            for name, (version, value) in state.items():
                assert version == want_state[name]["version"], f"rank {rank} {what} {name} version"
                if value.dim():
                    close(value, want_state[name]["value"], f"rank {rank} {what} {name}")
                else:
                    assert int(value) == want_state[name]["value"], f"rank {rank} {what} {name}"

        check_buffers(got["after_construction"], want["after_construction"], "after construction")
        assert len(got["steps"]) == len(want["steps"])
        for k, (g, w) in enumerate(zip(got["steps"], want["steps"])):
            check_buffers(g["buffers"], w["buffers"], f"step {k}")
            close(g["weight_grad"], w["weight_grad"], f"rank {rank} step {k} weight.grad")
            close(g["bias_grad"], w["bias_grad"], f"rank {rank} step {k} bias.grad")
