"""The nn layers of tinyddp.nn under real PyTorch 1.13: BatchNorm1d and BatchNorm2d, LayerNorm, Embedding, the
cheap modules and nn.utils, and BatchNorm1d under DDP (gloo, 2 processes on 127.0.0.1) in the GAN idiom.

Run by hand from anywhere: /usr/bin/python3 tests/golden/gen_nn_layers.py
Writes nn_layers.json next to this script (deterministic; about 5 s).

Every input, weight and loss coefficient is drawn here (fixed generator seeds) and written to the JSON as data,
so tests/python/test_nn_layers.py rebuilds the same float32 values without torch. A "loss" is sum(out * coeff)
with a coefficient tensor of out's shape (sum(out) alone has a zero input gradient through a normalization).

Layout (tensors as {"shape", "values"}):
  "batch_norm": [{"id", "config": {num_features, eps, momentum, affine, track_running_stats}, "weight", "bias"
      (null without affine), "steps": [3 training steps {"x", "coeff", "out", "x_grad", "weight_grad",
      "bias_grad", "running_mean", "running_var", "num_batches_tracked", "versions": {buffer: _version}}],
      "eval": {"x", "coeff", "out", "x_grad", "weight_grad", "bias_grad"},
      "double": {"x", "coeff", "x_grad2", "weight_grad2"}: with g = d loss / dx (create_graph, a fresh module in
      training), the gradients of sum(g * g) wrt x and the weight}],
  "layer_norm": [{"id", "normalized_shape", "eps", "affine", "weight", "bias", "x", "coeff", "out", "x_grad",
      "weight_grad", "bias_grad", "x_grad2", "weight_grad2"}],
  "embedding": {"weight", "indices", "coeff", "out", "weight_grad", "grad_fn"},
  "misc": small cases of the cheap layers (leaky_relu, gelu tanh, l1_loss, nll_loss, clip_grad_norm_,
      parameters_to_vector), each with its inputs, outputs and gradients,
  "reprs": {expression: repr(value)}, "errors": {expression: {"type", "message"}} (REPRS, ERRORS below),
  "scripts": {name: {"code", "result"}} (SCRIPTS below: saved-tensor packs, stale saved tensors, versions),
  "ddp": {run id: {"broadcast_buffers", "kind", "ranks": [per rank {...}]}} (see ddp_run).
"""
import math
import os
import sys
import json

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

sys.dont_write_bytecode = True  # keep __pycache__ out of tests/golden
from gen_tdp_params import here, run_ranks, tensor_json, write_json

WORLD = 2
TIMEOUT_S = 60


def draw(seed, *shape):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def grad_json(t):
    return None if t is None or t.grad is None else tensor_json(t.grad)


def bn_case(id_, num_features, shape, seed, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True):
    cls = nn.BatchNorm2d if len(shape) == 4 else nn.BatchNorm1d
    torch.manual_seed(0)
    bn = cls(num_features, eps=eps, momentum=momentum, affine=affine,
                        track_running_stats=track_running_stats)
    if affine:
        with torch.no_grad():
            bn.weight.copy_(draw(seed, num_features) * 0.5 + 1.0)
            bn.bias.copy_(draw(seed + 1, num_features) * 0.5)
    params = {"weight": tensor_json(bn.weight) if affine else None, "bias": tensor_json(bn.bias) if affine else None}
    steps = []
    for k in range(3):
        x = (draw(seed + 10 + k, *shape) * (1.0 + k) + 0.5 * k).requires_grad_()
        coeff = draw(seed + 20 + k, *shape)
        bn.zero_grad()
        out = bn(x)
        (out * coeff).sum().backward()
        step = {"x": tensor_json(x), "coeff": tensor_json(coeff), "out": tensor_json(out),
                "x_grad": tensor_json(x.grad), "weight_grad": grad_json(bn.weight), "bias_grad": grad_json(bn.bias)}
        if track_running_stats:
            step.update(running_mean=tensor_json(bn.running_mean), running_var=tensor_json(bn.running_var),
                        num_batches_tracked=int(bn.num_batches_tracked),
                        versions={n: b._version for n, b in bn.named_buffers()})
        steps.append(step)
    bn.eval()
    x = draw(seed + 30, *shape).requires_grad_()
    coeff = draw(seed + 31, *shape)
    bn.zero_grad()
    out = bn(x)
    (out * coeff).sum().backward()
    ev = {"x": tensor_json(x), "coeff": tensor_json(coeff), "out": tensor_json(out), "x_grad": tensor_json(x.grad),
          "weight_grad": grad_json(bn.weight), "bias_grad": grad_json(bn.bias), "grad_fn": out.grad_fn.name()}
    # Double backward through a fresh module's training forward (its weight and bias the same data).
    torch.manual_seed(0)
    fresh = cls(num_features, eps=eps, momentum=momentum, affine=affine,
                           track_running_stats=track_running_stats)
    if affine:
        with torch.no_grad():
            fresh.weight.copy_(bn.weight)
            fresh.bias.copy_(bn.bias)
    x = draw(seed + 40, *shape).requires_grad_()
    coeff = draw(seed + 41, *shape)
    (g,) = torch.autograd.grad((fresh(x) * coeff).sum(), x, create_graph=True)
    wrt = [x] + ([fresh.weight] if affine else [])
    grads = torch.autograd.grad((g * g).sum(), wrt)
    double = {"x": tensor_json(x), "coeff": tensor_json(coeff), "x_grad2": tensor_json(grads[0]),
              "weight_grad2": tensor_json(grads[1]) if affine else None}
    config = {"num_features": num_features, "eps": eps, "momentum": momentum, "affine": affine,
              "track_running_stats": track_running_stats}
    return {"id": id_, "config": config, **params, "steps": steps, "eval": ev, "double": double}


def ln_case(id_, normalized_shape, shape, seed, eps=1e-5, affine=True):
    ln = nn.LayerNorm(normalized_shape, eps=eps, elementwise_affine=affine)
    if affine:
        with torch.no_grad():
            ln.weight.copy_(draw(seed, *normalized_shape) * 0.5 + 1.0)
            ln.bias.copy_(draw(seed + 1, *normalized_shape) * 0.5)
    x = draw(seed + 10, *shape).requires_grad_()
    coeff = draw(seed + 11, *shape)
    out = ln(x)
    (out * coeff).sum().backward()
    (g,) = torch.autograd.grad((ln(x) * coeff).sum(), x, create_graph=True)
    wrt = [x] + ([ln.weight] if affine else [])
    grads = torch.autograd.grad((g * g).sum(), wrt)
    return {"id": id_, "normalized_shape": list(normalized_shape), "eps": eps, "affine": affine,
            "weight": tensor_json(ln.weight) if affine else None, "bias": tensor_json(ln.bias) if affine else None,
            "x": tensor_json(x), "coeff": tensor_json(coeff), "out": tensor_json(out), "x_grad": tensor_json(x.grad),
            "weight_grad": grad_json(ln.weight) if affine else None,
            "bias_grad": grad_json(ln.bias) if affine else None,
            "x_grad2": tensor_json(grads[0]), "weight_grad2": tensor_json(grads[1]) if affine else None,
            "grad_fn": out.grad_fn.name()}


def embedding_case():
    emb = nn.Embedding(5, 3)
    with torch.no_grad():
        emb.weight.copy_(draw(50, 5, 3))
    indices = torch.tensor([[0, 4, 1], [1, 1, 3]])
    coeff = draw(51, 2, 3, 3)
    out = emb(indices)
    (out * coeff).sum().backward()
    return {"weight": tensor_json(emb.weight), "indices": indices.tolist(), "coeff": tensor_json(coeff),
            "out": tensor_json(out), "weight_grad": tensor_json(emb.weight.grad), "grad_fn": out.grad_fn.name()}


def misc_cases():
    out = {}
    x = torch.tensor([[-2.0, -0.5, 0.0, 0.5], [1.5, -1.0, 3.0, -0.25]], requires_grad=True)
    coeff = draw(60, 2, 4)
    y = F.leaky_relu(x, 0.2)
    (y * coeff).sum().backward()
    out["leaky_relu"] = {"x": tensor_json(x), "negative_slope": 0.2, "coeff": tensor_json(coeff),
                         "out": tensor_json(y), "x_grad": tensor_json(x.grad)}
    x = draw(61, 2, 4).requires_grad_()
    y = F.gelu(x, approximate="tanh")
    (y * coeff).sum().backward()
    out["gelu_tanh"] = {"x": tensor_json(x), "coeff": tensor_json(coeff), "out": tensor_json(y),
                        "x_grad": tensor_json(x.grad)}
    x = (draw(61, 2, 4) * 3).requires_grad_()   # the exact (erf) form, the default, over [-3, 3)
    y = F.gelu(x)
    (y * coeff).sum().backward()
    out["gelu_none"] = {"x": tensor_json(x), "coeff": tensor_json(coeff), "out": tensor_json(y),
                        "x_grad": tensor_json(x.grad)}
    x, t = draw(62, 3, 4).requires_grad_(), draw(63, 3, 4)
    loss = F.l1_loss(x, t)
    loss.backward()
    out["l1_loss"] = {"x": tensor_json(x), "target": tensor_json(t), "loss": loss.item(),
                      "x_grad": tensor_json(x.grad), "grad_fn": loss.grad_fn.name()}
    x = draw(64, 3, 4).requires_grad_()
    target = torch.tensor([2, 0, 3])
    loss = F.nll_loss(F.log_softmax(x, 1), target)
    loss.backward()
    out["nll_loss"] = {"x": tensor_json(x), "target": target.tolist(), "loss": loss.item(),
                       "x_grad": tensor_json(x.grad), "grad_fn": loss.grad_fn.name()}
    lin = nn.Linear(3, 2)
    with torch.no_grad():
        lin.weight.copy_(draw(65, 2, 3))
        lin.bias.copy_(draw(66, 2))
    xin = draw(67, 4, 3)
    lin(xin).pow(2).sum().backward()
    grads_before = [tensor_json(p.grad) for p in lin.parameters()]
    total = nn.utils.clip_grad_norm_(lin.parameters(), 0.5)
    out["clip_grad_norm"] = {"weight": tensor_json(lin.weight), "bias": tensor_json(lin.bias), "x": tensor_json(xin),
                             "max_norm": 0.5, "grads_before": grads_before, "total_norm": total.item(),
                             "total_norm_shape": list(total.shape),
                             "grads_after": [tensor_json(p.grad) for p in lin.parameters()],
                             "grad_versions": [p.grad._version for p in lin.parameters()]}
    g = torch.tensor([[0.5, -2.0, float("nan")], [3.0, -0.25, 1.0]])
    lin.weight.grad = g.clone()
    lin.bias.grad = torch.tensor([-1.5, 0.75])
    nn.utils.clip_grad_value_(lin.parameters(), 0.8)
    clipped = [p.grad.tolist() for p in lin.parameters()]
    versions = [p.grad._version for p in lin.parameters()]
    nn.utils.clip_grad_value_(lin.bias, -0.5)
    out["clip_grad_value"] = {"weight_grad": [[0.5, -2.0, "nan"], [3.0, -0.25, 1.0]], "bias_grad": [-1.5, 0.75],
                              "clip_value": 0.8, "clipped": [[["nan" if v != v else v for v in row]
                                                              for row in clipped[0]], clipped[1]],
                              "grad_versions": versions, "negative_clip_bias": lin.bias.grad.tolist()}
    vec = nn.utils.parameters_to_vector(lin.parameters())
    out["parameters_to_vector"] = {"vec": tensor_json(vec), "grad_fn": vec.grad_fn.name()}
    return out


# Expressions evaluated with `torch`, `nn` and `F` bound to the library under test: reprs, and the exception
# each raises (type name and str).
REPRS = ["nn.BatchNorm1d(3)", "nn.BatchNorm1d(4, eps=1e-3, momentum=None, affine=False)",
         "nn.BatchNorm1d(2, track_running_stats=False)", "nn.BatchNorm2d(4, momentum=0.3)", "nn.LayerNorm(3)",
         "nn.LayerNorm([2, 3], eps=1e-6)",
         "nn.LayerNorm((4,), elementwise_affine=False)", "nn.Embedding(5, 3)", "nn.Flatten()", "nn.Flatten(0, 2)",
         "nn.Softmax(dim=1)", "nn.Softmax()", "nn.LogSoftmax(dim=-1)", "nn.LeakyReLU()", "nn.LeakyReLU(0.2)",
         "nn.GELU(approximate='tanh')", "nn.L1Loss()", "nn.NLLLoss()",
         "nn.ModuleDict({'lin': nn.Linear(2, 2), 'act': nn.ReLU()})", "nn.ModuleDict()",
         "nn.ParameterList([nn.Parameter(torch.zeros(3)), nn.Parameter(torch.zeros(2, 2))])",
         "nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3), nn.ReLU(), nn.Flatten())",
         "[n for n, _ in nn.BatchNorm1d(3).named_buffers()]", "list(nn.BatchNorm1d(3).state_dict())",
         "[n for n, _ in nn.ParameterList([torch.zeros(1), torch.zeros(2)]).named_parameters()]",
         "list(nn.ModuleDict({'b': nn.ReLU(), 'a': nn.Tanh()}).keys())",
         "nn.BatchNorm1d(3).num_batches_tracked.dtype", "nn.BatchNorm1d(3).running_var.tolist()",
         "[b._version for b in nn.BatchNorm1d(3).buffers()]", "nn.LayerNorm((2, 3)).normalized_shape",
         "nn.BatchNorm1d(3, affine=False).weight", "nn.BatchNorm1d(3, track_running_stats=False).running_mean",
         "nn.Embedding(4, 2).weight.shape", "nn.Embedding(4, 2).weight.requires_grad",
         "nn.BatchNorm1d(2)(torch.ones(3, 2, requires_grad=True)).grad_fn.name()",
         "nn.BatchNorm1d(2).eval()(torch.ones(3, 2, requires_grad=True)).grad_fn.name()",
         "nn.LayerNorm(2)(torch.ones(3, 2)).grad_fn.name()",
         "nn.Flatten()(torch.zeros(2, 3, 4)).shape", "nn.Flatten(0, 1)(torch.zeros(2, 3, 4)).shape",
         "nn.utils.clip_grad_norm_([], 1.0)",
         "nn.BatchNorm1d(3)(torch.zeros(0, 3, requires_grad=True)).grad_fn.name()",
         "nn.BatchNorm1d(3, affine=False)(torch.zeros(0, 3, requires_grad=True)).grad_fn.name()",
         "nn.BatchNorm1d(3).eval()(torch.zeros(0, 3)).shape",
         "nn.Embedding(3, 2)(torch.zeros(0, dtype=torch.long)).shape", "nn.Embedding(3, 2)(torch.tensor(2)).shape",
         "nn.LayerNorm(3)(torch.zeros(0, 3)).shape",
         "nn.BatchNorm1d(3)(torch.ones(3, 4).t()).tolist()",
         "nn.BatchNorm1d(2, eps=0)(torch.ones(3, 2)).tolist()",
         "F.batch_norm(torch.ones(3, 2), torch.zeros(2), torch.zeros(2), eps=0).tolist()",
         "(lambda x: (nn.BatchNorm1d(2, eps=0)(x) * torch.tensor([[1.0, 2.0], [3.0, -1.0], [0.5, 0.0]])).sum()"
         ".backward() or x.grad.tolist())(torch.ones(3, 2, requires_grad=True))",
         "[nn.init.calculate_gain(n) for n in ('linear', 'conv2d', 'sigmoid', 'tanh', 'relu', 'leaky_relu', 'selu')]",
         "nn.init.calculate_gain('leaky_relu', 0.2)", "nn.init.calculate_gain('leaky_relu', 1)",
         "nn.init.eye_(torch.zeros(2, 3)).tolist()", "nn.init.constant_(torch.zeros(2), 0.5).tolist()",
         "nn.init.ones_(torch.zeros(2)).tolist()", "nn.init.zeros_(torch.ones(2)).tolist()",
         "[(lambda t: (f(t), t._version)[1])(torch.zeros(3, 4)) for f in (nn.init.uniform_, nn.init.normal_, "
         "nn.init.xavier_uniform_, nn.init.xavier_normal_, nn.init.kaiming_uniform_, nn.init.kaiming_normal_, "
         "nn.init.zeros_, nn.init.ones_, nn.init.eye_)]",
         "(lambda p: (nn.init.normal_(p), p.requires_grad, p.is_leaf, p._version)[1:])(nn.Parameter(torch.zeros(2)))",
         "bool((nn.init.kaiming_uniform_(torch.zeros(50, 40), a=0.2).abs() <= "
         "math.sqrt(3) * nn.init.calculate_gain('leaky_relu', 0.2) / math.sqrt(40)).all())",
         "bool((nn.init.kaiming_uniform_(torch.zeros(50, 40, 3), mode='fan_out').abs() <= math.sqrt(6 / 150)).all())",
         "bool((nn.init.xavier_uniform_(torch.zeros(30, 20), gain=2.0).abs() <= 2 * math.sqrt(6 / 50)).all())",
         "bool((nn.init.uniform_(torch.zeros(1000), -0.5, 0.25) >= -0.5).all())",
         "bool((nn.init.uniform_(torch.zeros(1000), -0.5, 0.25) <= 0.25).all())"]
ERRORS = ["nn.BatchNorm1d(3)(torch.zeros(4, 5))", "nn.BatchNorm1d(3)(torch.zeros(4))",
          "nn.BatchNorm1d(3)(torch.zeros(4, 3, 2, 2))", "nn.BatchNorm1d(3)(torch.zeros(1, 3))",
          "nn.BatchNorm1d(3)(torch.zeros(1, 3, 1))", "nn.BatchNorm1d(3, affine=False)(torch.zeros(4, 5))",
          "F.batch_norm(torch.zeros(4, 3), None, None, training=False)",
          "F.batch_norm(torch.zeros(4, 3), torch.zeros(3), torch.ones(3), weight=torch.ones(5))",
          "F.batch_norm(torch.zeros(4, 3), torch.zeros(3), torch.ones(3), bias=torch.ones(5), training=True)",
          "F.batch_norm(torch.zeros(4, 3), torch.zeros(3), torch.ones(5))",
          "F.batch_norm(torch.zeros(4, 3, dtype=torch.long), torch.zeros(3), torch.ones(3), training=True)",
          "nn.LayerNorm(3)(torch.zeros(2, 4))", "nn.LayerNorm((2, 3))(torch.zeros(4, 3, 2))",
          "nn.Embedding(5, 3)(torch.tensor([5]))", "nn.Embedding(5, 3)(torch.tensor([-1]))",
          "nn.Embedding(5, 3)(torch.tensor([1.0]))",
          "F.nll_loss(torch.zeros(3, 4), torch.tensor([0, 1, 4]))",
          "F.nll_loss(torch.zeros(3, 4), torch.tensor([0, 1]))",
          "nn.ModuleDict()['missing']",
          "F.batch_norm(torch.zeros(4), None, None, training=True)", "nn.BatchNorm2d(3)(torch.zeros(4, 3, 2))",
          "nn.BatchNorm1d(0)(torch.zeros(2, 0))",
          "F.batch_norm(torch.zeros(()), None, None, training=True)",
          "nn.LayerNorm(3)(torch.ones(2, 3, dtype=torch.float64))",
          "F.layer_norm(torch.ones(2, 3), [3], torch.ones(3, dtype=torch.float64))",
          "F.layer_norm(torch.ones(2, 3), [])", "F.embedding(torch.tensor([0]), torch.zeros(3))",
          "nn.init.calculate_gain('foo')", "nn.init.calculate_gain('leaky_relu', True)",
          "nn.init.xavier_uniform_(torch.zeros(3))", "nn.init.kaiming_normal_(torch.zeros(2, 2), mode='fan')",
          "nn.init.eye_(torch.zeros(2, 2, 2))"]


# Small scripts, run with the same bindings; each sets `result` (JSON-able). The test runs the code stored in the
# JSON, so both sides run the same text.
SCRIPTS = {
    "saved_tensor_packs": """
result = {}
for name, make, x in [("bn_train", lambda: nn.BatchNorm1d(2), torch.ones(3, 2, requires_grad=True)),
                      ("bn_no_affine", lambda: nn.BatchNorm1d(2, affine=False), torch.ones(3, 2, requires_grad=True)),
                      ("bn_eval", lambda: nn.BatchNorm1d(2).eval(), torch.ones(3, 2, requires_grad=True)),
                      ("bn_no_stats", lambda: nn.BatchNorm1d(2, track_running_stats=False),
                       torch.ones(3, 2, requires_grad=True)),
                      ("layer_norm", lambda: nn.LayerNorm(2), torch.ones(3, 2, requires_grad=True)),
                      ("embedding", lambda: nn.Embedding(4, 2), torch.tensor([0, 2, 2, 1, 3]))]:
    m, packed = make(), []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: packed.append([list(t.shape), str(t.dtype)]) or t,
                                                  lambda t: t):
        m(x)
    result[name] = packed
""",
    "stale_saved_tensors": """
result = {}
bn = nn.BatchNorm1d(3)
y = bn(torch.arange(12, dtype=torch.float32).reshape(4, 3).requires_grad_())
with torch.no_grad():
    bn.running_var.mul_(2.0)
try:
    y.sum().backward()
    result["bn_running_var_modified"] = None
except RuntimeError as e:
    result["bn_running_var_modified"] = str(e)
emb = nn.Embedding(4, 2)
result["embedding_weight_version"] = emb.weight._version
y = emb(torch.tensor([0, 2]))
with torch.no_grad():
    emb.weight.add_(1.0)
try:
    y.sum().backward()
    result["embedding_weight_modified"] = None
except RuntimeError as e:
    result["embedding_weight_modified"] = str(e)
ln = nn.LayerNorm(3)
result["layer_norm_param_versions"] = [ln.weight._version, ln.bias._version]
bn = nn.BatchNorm1d(3)
result["batch_norm_param_versions"] = [bn.weight._version, bn.bias._version]
""",
}


def run_scripts():
    out = {}
    for name, code in SCRIPTS.items():
        env = {"torch": torch, "nn": nn, "F": F}
        exec(code, env)
        out[name] = {"code": code, "result": env["result"]}
    return out


def eval_cases():
    env = {"torch": torch, "nn": nn, "F": F, "math": math}
    reprs = {e: repr(eval(e, env)) for e in REPRS}
    errors = {}
    for e in ERRORS:
        try:
            eval(e, env)
            errors[e] = None
        except Exception as ex:  # noqa: BLE001 (recording what PyTorch raises)
            errors[e] = {"type": type(ex).__name__, "message": str(ex)}
    return reprs, errors


# ---- DDP ----
C = 3
SHAPE = (4, C)


class Disc(nn.Module):
    """A discriminator's normalization: BatchNorm1d(3), its affine parameters given as data."""

    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(C)
        with torch.no_grad():
            self.bn.weight.copy_(draw(70, C) * 0.5 + 1.0)
            self.bn.bias.copy_(draw(71, C) * 0.5)

    def forward(self, x):
        return self.bn(x)


def ddp_data(rank):
    """Per rank: the real and fake batches and the loss coefficients."""
    return {"real": draw(80 + rank, *SHAPE), "fake": draw(90 + rank, *SHAPE) * 2.0 + 1.0,
            "coeff": draw(100 + rank, *SHAPE)}


def buffer_state(m):
    return {n: {"version": b._version, "value": tensor_json(b) if b.dim() else int(b)} for n, b in m.named_buffers()}


def ddp_run(rank, kind, broadcast_buffers):
    """"gan": D(real), D(fake), one backward of both losses (str(e) or null, then the grads and buffers).
    "train": two iterations of one forward and one backward (buffers and grads after each)."""
    torch.manual_seed(0)
    module = Disc()
    ddp = nn.parallel.DistributedDataParallel(module, broadcast_buffers=broadcast_buffers)
    data = ddp_data(rank)
    out = {"after_construction": buffer_state(module), "steps": [], "error": None}
    if kind == "gan":
        d_real, d_fake = ddp(data["real"]), ddp(data["fake"])
        try:
            ((d_real * data["coeff"]).sum() + (d_fake * data["coeff"]).sum()).backward()
        except RuntimeError as e:
            out["error"] = str(e)
        out["steps"].append({"buffers": buffer_state(module), "weight_grad": grad_json(module.bn.weight),
                             "bias_grad": grad_json(module.bn.bias)})
        return out
    for x in (data["real"], data["fake"]):
        module.zero_grad()
        (ddp(x) * data["coeff"]).sum().backward()
        out["steps"].append({"buffers": buffer_state(module), "weight_grad": grad_json(module.bn.weight),
                             "bias_grad": grad_json(module.bn.bias)})
    return out


DDP_RUNS = [(f"{kind}/broadcast_buffers={str(b).lower()}", kind, b) for kind in ("gan", "train") for b in (True, False)]


def rank_main(rank, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), GLOO_SOCKET_IFNAME="lo")
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=WORLD)
    result = {id_: ddp_run(rank, kind, b) for id_, kind, b in DDP_RUNS}
    dist.barrier()
    dist.destroy_process_group()
    return result



def run_ddp():
    ranks = run_ranks(rank_main, WORLD, TIMEOUT_S)
    disc = Disc()
    return {"model": {"weight": tensor_json(disc.bn.weight), "bias": tensor_json(disc.bn.bias)},
            "data": [{k: tensor_json(v) for k, v in ddp_data(r).items()} for r in range(WORLD)],
            "runs": {id_: {"kind": kind, "broadcast_buffers": b, "ranks": [ranks[0][id_], ranks[1][id_]]}
                     for id_, kind, b in DDP_RUNS}}


def main():
    torch.set_num_threads(1)
    result = {
        "generator": "gen_nn_layers.py", "torch_version": torch.__version__, "dtype": "float32",
        "batch_norm": [
            bn_case("2d", 3, (4, 3), 1),
            bn_case("3d_momentum_none", 3, (2, 3, 4), 2, momentum=None),
            bn_case("2d_no_affine_eps", 2, (5, 2), 3, eps=1e-3, affine=False),
            bn_case("3d_no_running_stats", 2, (3, 2, 2), 4, track_running_stats=False),
            bn_case("4d_batch_norm_2d", 3, (2, 3, 2, 2), 8),
        ],
        "layer_norm": [
            ln_case("last_dim", (4,), (3, 4), 5),
            ln_case("two_dims", (2, 3), (2, 2, 3), 6),
            ln_case("no_affine", (3,), (2, 3), 7, eps=1e-3, affine=False),
        ],
        "embedding": embedding_case(),
        "misc": misc_cases(),
    }
    result["reprs"], result["errors"] = eval_cases()
    result["scripts"] = run_scripts()
    result["ddp"] = run_ddp()
    write_json(result, here("nn_layers.json"))


if __name__ == "__main__":
    main()
