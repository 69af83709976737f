"""The autograd engine from Python: the dynamic graph, the grad_fn walk, hooks, retain_graph and create_graph.

    PYTHONPATH=build/python python3 examples/autograd_walkthrough.py
    build/apps/tinyddp autograd          # the C++ walkthrough: sections 1 and 3-5 print the same lines

Sections 1 and 3-5 redo `tinyddp autograd` (apps/tinyddp/autograd_demo.cpp) through the Python API, with the
same seed, so their numbers, graph and error text are the C++ ones (tests/python/test_examples.py compares
them line by line). Section 2 uses Tensor.register_hook (PyTorch 1.13 has no post-accumulate-grad hooks), and
section 6 shows what only Python makes easy: a graph that follows the control flow of each input.
Written against PyTorch's API: with `import torch` it runs there (with other random numbers).
"""
import tinyddp as torch
import tinyddp.nn.functional as F


def section(title):
    print(f"\n== {title} ==")


def print_graph(fn, depth=0, seen=None):
    """The backward graph reachable from a grad_fn, one node per line, children indented (the grad_fn walk)."""
    seen = set() if seen is None else seen
    line = " " * (2 * depth + 4) + fn.name()
    if id(fn) in seen:
        print(line + "  [shared, shown above]")
        return
    seen.add(id(fn))
    print(line)
    for child, _ in fn.next_functions:
        if child is not None:
            print_graph(child, depth + 1, seen)


def main():
    torch.manual_seed(0)

    section("1. The graph is recorded as the forward runs")
    # A one-layer net: y = tanh(x W^T + b), loss = mean((y - target)^2).
    W = torch.randn(2, 3, dtype=torch.float64).requires_grad_()
    b = torch.randn(2, dtype=torch.float64).requires_grad_()
    x = torch.randn(4, 3, dtype=torch.float64)
    target = torch.randn(4, 2, dtype=torch.float64)
    y = torch.tanh(F.linear(x, W, b))   # F.linear on 2-D input is addmm(b, x, W.t()), as in PyTorch
    loss = F.mse_loss(y, target)
    print(f"  loss = mse_loss(tanh(addmm(b, x, W.t())), target) = {loss.item():.6g}")
    print("  loss.grad_fn and what it points to (next_functions):")
    print_graph(loss.grad_fn)

    section("2. backward() runs the newest node first; a leaf's hook fires when its gradient is ready")
    order = []
    b.register_hook(lambda g: order.append("b") or print("  hook: gradient for b ready"))
    handle = W.register_hook(lambda g: order.append("W") or print("  hook: gradient for W ready"))
    loss.backward(retain_graph=True)
    handle.remove()   # the handle's remove() takes the hook out: W's hook does not fire again below
    print("  (b is reached first: addmm hands its gradient straight to b, W's goes through TBackward0.)")

    section("3. retain_graph: saved tensors are freed after a backward unless retained")
    first = W.grad[0, 0].item()
    loss.backward()   # allowed: the first backward retained the graph; this one frees it
    twice = W.grad[0, 0].item()
    print(f"  second backward (graph retained): W.grad[0,0] {first:.6g} -> {twice:.6g} (gradients accumulate)")
    try:
        loss.backward()
        print("  third backward unexpectedly succeeded")
    except RuntimeError as e:
        print(f'  third backward (graph freed) raises PyTorch\'s error:\n    "{e}"')

    section("4. create_graph: the backward is itself recorded, so it can be differentiated again")
    s = torch.tensor([2.0], dtype=torch.float64, requires_grad=True)
    f = (s ** 3).sum()                                                  # f = s^3
    (d1,) = torch.autograd.grad(f, s, create_graph=True)                # 3 s^2 = 12
    (d2,) = torch.autograd.grad(d1.sum(), s, create_graph=True)         # 6 s = 12
    (d3,) = torch.autograd.grad(d2.sum(), s)                            # 6
    print(f"  f = s^3 at s = 2:  f' = 3s^2 = {d1.item():.6g},  f'' = 6s = {d2.item():.6g},  f''' = 6 = {d3.item():.6g}")
    print(f"  d1.grad_fn() = {d1.grad_fn.name()}: the first derivative has a graph of its own because the backward "
          "ran with grad mode on.")

    section("5. Why GradNorm needs it: d/dw of a gradient norm")
    w = torch.tensor([0.7, 1.3], dtype=torch.float64, requires_grad=True)
    W.grad = None
    h = torch.tanh(F.linear(x, W, b))
    L1 = F.mse_loss(h[:, 0:1], target[:, 0:1])
    L2 = F.mse_loss(h[:, 1:2], target[:, 1:2])
    total = w[0] * L1 + w[1] * L2
    (gW,) = torch.autograd.grad(total, W, create_graph=True)
    norm = (gW ** 2).sum().sqrt()
    (dnorm_dw,) = torch.autograd.grad(norm, w)
    print(f"  ||grad_W (0.7 L1 + 1.3 L2)|| = {norm.item():.6g};  d/dw = [{dnorm_dw[0].item():.6g}, "
          f"{dnorm_dw[1].item():.6g}]")

    section("6. The graph is dynamic: it is whatever this input's forward did")
    for value in (0.5, -0.5):
        v = torch.tensor([value], dtype=torch.float64, requires_grad=True)
        out = (v * 3).exp().sum() if value > 0 else (v ** 2).sum()   # Python control flow picks the ops
        out.backward()
        print(f"  v = {value:+}: {out.grad_fn.name()} <- {out.grad_fn.next_functions[0][0].name()},  "
              f"dv = {v.grad.item():.6g}")
    print("  A hook may also replace a gradient:")
    v = torch.tensor([1.0, 2.0], requires_grad=True)
    v.register_hook(lambda g: g * 0)   # returning a tensor replaces the gradient
    (v * v).sum().backward()
    print(f"  v.grad with a zeroing hook = {v.grad.tolist()}")
    print("\nMore: docs/autograd.md, docs/python.md")
    return order


if __name__ == "__main__":
    main()
