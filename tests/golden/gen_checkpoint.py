"""Activation checkpointing and saved-tensor hooks as PyTorch 1.13 does them (torch.utils.checkpoint,
torch.autograd.graph.saved_tensors_hooks), for tests/engine/checkpoint_test.cpp and saved_tensor_hooks_test.cpp.

Run by hand from anywhere: /usr/bin/python3 tests/golden/gen_checkpoint.py
Writes checkpoint.json next to this script. float32; every value is written out below (no random numbers).

The model: out = lin2(relu(lin1(x))), lin1 = Linear(4, 8), lin2 = Linear(8, 8), loss = mean(out^2); each Linear
is addmm(b, x, W.t()) as F.linear builds it for 2-D inputs. Cases:
  second_linear/<mode>  lin2 checkpointed (its input h requires grad), x requires grad too
  frozen_input/<mode>   relu(lin1(.)) checkpointed on an x that does not require grad (frozen embeddings)
with <mode> one of reentrant (1.13's default), non_reentrant (use_reentrant=False), none (no checkpoint).
Each records the output, the loss, the gradients, the output's grad_fn name, the warnings raised, and the
events of the backward in order: "post <param>" from a post hook on each AccumulateGrad node (where DDP's
reducer hooks), "enter"/"exit" around the node that produced the output (a hook on the output's gradient fires
before it runs, a post hook on it after), and "callback <param>" for a callback queued by that parameter's hook
(Variable._execution_engine.queue_callback: it runs when the graph task it was queued in ends).
"""
import sys
import warnings

import torch
from torch.autograd.graph import saved_tensors_hooks
from torch.utils.checkpoint import checkpoint

sys.dont_write_bytecode = True  # keep __pycache__ out of tests/golden
from gen_tdp_params import here, write_json

F32 = torch.float32


def values(rows, cols, scale, shift):
    """A fixed, irregular matrix: v[i][j] = scale * (((7 * i + 3 * j) % 11) - shift)."""
    return [[scale * (((7 * i + 3 * j) % 11) - shift) for j in range(cols)] for i in range(rows)]


MODEL = {
    "x": values(3, 4, 0.25, 5),
    "w1": values(8, 4, 0.1, 4),
    "b1": [0.05 * (k - 3) for k in range(8)],
    "w2": values(8, 8, -0.07, 6),
    "b2": [0.02 * (5 - k) for k in range(8)],
}
PARAMS = ["lin1.weight", "lin1.bias", "lin2.weight", "lin2.bias"]


def tolist(t):
    return None if t is None else t.detach().reshape(-1).tolist()


def run_case(case, mode):
    x = torch.tensor(MODEL["x"], dtype=F32, requires_grad=(case == "second_linear"))
    w1 = torch.tensor(MODEL["w1"], dtype=F32, requires_grad=True)
    b1 = torch.tensor(MODEL["b1"], dtype=F32, requires_grad=True)
    w2 = torch.tensor(MODEL["w2"], dtype=F32, requires_grad=True)
    b2 = torch.tensor(MODEL["b2"], dtype=F32, requires_grad=True)
    params = dict(zip(PARAMS, [w1, b1, w2, b2]))
    events = []
    hold = []
    engine = torch.autograd.Variable._execution_engine
    for name, p in params.items():
        acc = p.expand_as(p).grad_fn.next_functions[0][0]

        def post(grad_inputs, grad_outputs, n=name):
            events.append("post " + n)
            if n in ("lin1.weight", "lin2.weight"):
                engine.queue_callback(lambda: events.append("callback " + n))
        acc.register_hook(post)
        hold.append(acc)

    def lin1(t):
        return torch.relu(torch.addmm(b1, t, w1.t()))

    def lin2(t):
        return torch.addmm(b2, t, w2.t())

    def segment(fn, t):
        if mode == "none":
            return fn(t)
        return checkpoint(fn, t, use_reentrant=(mode == "reentrant"))

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if case == "second_linear":
            out = segment(lin2, lin1(x))
        else:
            out = lin2(segment(lin1, x))
    node = out.grad_fn if case == "second_linear" else out.grad_fn.next_functions[1][0]
    # The node the segment's output came from: the checkpoint's (or lin2's addmm) in both cases.
    seg_out = out if case == "second_linear" else None
    if seg_out is not None:
        seg_out.register_hook(lambda g: events.append("enter"))
        node.register_hook(lambda gi, go: events.append("exit"))
    loss = (out ** 2).mean()
    loss.backward()
    return {
        "out": tolist(out),
        "loss": loss.item(),
        "grad_fn": type(node).__name__ if node is not None else None,
        "warnings": [str(w.message) for w in caught],
        "grads": {n: tolist(p.grad) for n, p in params.items()},
        "x_grad": tolist(x.grad),
        "events": events,
    }


def core_message(e):
    """The message PyTorch raised, without the 'RuntimeError: ' prefix and 'At:' trace a Python hook adds."""
    text = str(e)
    if text.startswith("RuntimeError: "):
        text = text[len("RuntimeError: "):]
    return text.split("\n")[0].strip()


def errors():
    out = {}
    x = torch.tensor(MODEL["x"], dtype=F32, requires_grad=True)
    w = torch.tensor(MODEL["w1"], dtype=F32, requires_grad=True)

    def f(t):
        return torch.relu(t @ w.t())

    try:
        torch.autograd.grad(checkpoint(f, x).sum(), x)
    except RuntimeError as e:
        out["reentrant_grad"] = str(e)
    try:
        checkpoint(f, x).sum().backward(inputs=[x])
    except RuntimeError as e:
        out["reentrant_backward_inputs"] = str(e)
    try:
        checkpoint(lambda t: t.detach() * 2, x).sum().backward()
    except RuntimeError as e:
        out["reentrant_no_output_requires_grad"] = str(e)
    calls = [0]

    def fewer(t):  # saves three tensors in the forward, none in the recomputation
        calls[0] += 1
        return (t * t) * t if calls[0] == 1 else t * 2 + 0
    try:
        checkpoint(fewer, x, use_reentrant=False).sum().backward()
    except RuntimeError as e:
        out["non_reentrant_fewer_saved"] = core_message(e)
    # use_reentrant=False works with autograd.grad: d sum(f(x)) / dx and / dw
    gx, gw = torch.autograd.grad(checkpoint(f, x, use_reentrant=False).sum(), [x, w])
    out["non_reentrant_grad"] = {"x": tolist(gx), "w": tolist(gw)}
    # Calls of the checkpointed function for a forward and two backwards (retain_graph=True first).
    for mode in ("reentrant", "non_reentrant"):
        count = [0]

        def g(t):
            count[0] += 1
            return (t * t).sum()
        y = checkpoint(g, x, use_reentrant=(mode == "reentrant"))
        y.backward(retain_graph=True)
        y.backward()
        out["function_calls_two_backwards_" + mode] = count[0]
    # Tensors packed by an outer saved_tensors_hooks while a checkpointed segment runs: the reentrant form
    # saves its inputs (its forward records nothing); the non-reentrant form's own hooks are innermost.
    out["outer_hook_packs"] = {}
    for mode in ("reentrant", "non_reentrant"):
        packs = [0]
        with saved_tensors_hooks(lambda t: packs.__setitem__(0, packs[0] + 1) or t, lambda t: t):
            checkpoint(f, x, use_reentrant=(mode == "reentrant"))
        out["outer_hook_packs"][mode] = packs[0]
    return out


def hooks():
    """Saved-tensor hooks on a simple chain: l = sum(exp(x * w)^2)."""
    out = {}
    log = []

    def pack(t):
        log.append(["pack", tolist(t), t.requires_grad, type(t.grad_fn).__name__ if t.grad_fn else None,
                    torch.is_grad_enabled()])
        return t

    def unpack(t):
        log.append(["unpack", tolist(t)])
        return t
    x = torch.tensor([0.5, -0.25], dtype=F32, requires_grad=True)
    w = torch.tensor([1.5, 2.0], dtype=F32, requires_grad=True)
    with saved_tensors_hooks(pack, unpack):
        a = x * w
        b = a.exp()
        c = b.pow(2)
        l = c.sum()
    l.backward()
    out["chain"] = {"x": tolist(x), "w": tolist(w), "log": log, "x_grad": tolist(x.grad), "w_grad": tolist(w.grad)}

    # Nothing is packed under no_grad or when no input requires grad.
    count = [0]
    with saved_tensors_hooks(lambda t: count.__setitem__(0, count[0] + 1) or t, lambda t: t):
        with torch.no_grad():
            x.pow(2)
        torch.tensor([1.0]).pow(2)
    out["packs_without_graph"] = count[0]

    # Only the innermost hooks apply.
    order = []
    with saved_tensors_hooks(lambda t: order.append("outer") or t, lambda t: t):
        with saved_tensors_hooks(lambda t: order.append("inner") or t, lambda t: t):
            x.pow(2)
        x.pow(2)
    out["nesting"] = order

    # retain_graph: one unpack per backward.
    order = []
    with saved_tensors_hooks(lambda t: order.append("pack") or t, lambda t: order.append("unpack") or t):
        y = x.pow(2).sum()
    y.backward(retain_graph=True)
    y.backward()
    out["retain_graph"] = order

    # No version check with hooks: the modified value is used.
    v = torch.tensor([1.0, 2.0], dtype=F32, requires_grad=True)
    with saved_tensors_hooks(lambda t: t, lambda t: t):
        yy = v * 1.0
        z = yy * yy
    with torch.no_grad():
        yy.add_(1.0)
    z.sum().backward()
    out["inplace_after_save_grad"] = tolist(v.grad)

    # The unpacked value is what the rule uses: pack doubles, d(v^2)/dv = 2 * (2v).
    v = torch.tensor([1.0, 2.0], dtype=F32, requires_grad=True)
    with saved_tensors_hooks(lambda t: t * 2, lambda t: t):
        y = v.pow(2)
    y.sum().backward()
    out["doubled_saved_grad"] = tolist(v.grad)

    # Release: a second backward raises; a pack hook modifying its input raises.
    with saved_tensors_hooks(lambda t: t, lambda t: t):
        y = v.exp().sum()
    y.backward()
    try:
        y.backward()
    except RuntimeError as e:
        out["backward_twice"] = str(e)

    def bad(t):
        t.add_(1.0)
        return t
    y = v * 2
    try:
        with saved_tensors_hooks(bad, lambda t: t):
            y * y
    except RuntimeError as e:
        out["pack_inplace"] = str(e)

    # History restored: a saved leaf (y = v^3) and a saved output (y = exp(u)) take second derivatives
    # through copies made by pack.
    v = torch.tensor([0.5, 1.5], dtype=F32, requires_grad=True)
    with saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t):
        y = v.pow(3)
    (g,) = torch.autograd.grad(y.sum(), v, create_graph=True)
    g.sum().backward()
    out["leaf_second_order"] = {"v": tolist(v), "grad": tolist(v.grad)}   # 6v
    u = torch.tensor([0.5, -1.0], dtype=F32, requires_grad=True)
    with saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t):
        y = u.exp()
    (g,) = torch.autograd.grad(y.sum(), u, create_graph=True)
    g.sum().backward()
    out["output_second_order"] = {"u": tolist(u), "grad": tolist(u.grad)}   # exp(u)
    return out


def main():
    cases = {}
    for case in ("second_linear", "frozen_input"):
        for mode in ("reentrant", "non_reentrant", "none"):
            cases[case + "/" + mode] = run_case(case, mode)
    write_json({"torch_version": torch.__version__, "model": MODEL, "cases": cases, "errors": errors(),
                "saved_tensor_hooks": hooks()}, here("checkpoint.json"))


if __name__ == "__main__":
    main()
