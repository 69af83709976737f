# Custom autograd.Function internals: what ctx offers (needs_input_grad, saved_tensors, mark_non_differentiable,
# set_materialize_grads, once_differentiable), a Function used twice in one graph, a double-differentiable
# Function checked with gradgradcheck, the grad_fn objects Functions create, and the errors for a backward that
# returns the wrong number of gradients or of a wrong shape.
import tinyddp as torch
from tinyddp.autograd import Function
from tinyddp.autograd.function import once_differentiable

torch.manual_seed(0)


class SortWithIndices(Function):
    @staticmethod
    def forward(ctx, x):
        values, idx = x.sort()
        ctx.mark_non_differentiable(idx)
        ctx.save_for_backward(idx)
        return values, idx

    @staticmethod
    def backward(ctx, grad_values, grad_idx):
        (idx,) = ctx.saved_tensors
        print("  grad for indices:", grad_idx)
        grad = torch.zeros_like(grad_values)
        grad[idx] = grad_values
        return grad


x = torch.tensor([3.0, 1.0, 2.0], requires_grad=True)
vals, idx = SortWithIndices.apply(x)
print(vals, idx, vals.requires_grad, idx.requires_grad)
(vals * torch.tensor([1.0, 10.0, 100.0])).sum().backward()
print("x.grad:", x.grad)


class Split2(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return x[:2].clone(), x[2:].clone()

    @staticmethod
    def backward(ctx, g1, g2):
        print("  got None:", g1 is None, g2 is None)
        parts = [g if g is not None else torch.zeros(n) for g, n in ((g1, 2), (g2, 1))]
        return torch.cat(parts)


x.grad = None
first, second = Split2.apply(x)
first.sum().backward()
print("only first used:", x.grad)


class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x ** 2


class CubeOnce(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * 3 * x ** 2


z = torch.tensor([1.0, 2.0], requires_grad=True)
y = Cube.apply(z)
print(type(y.grad_fn).__name__, y.grad_fn.name())
print([type(f).__name__ for f, _ in y.grad_fn.next_functions])
(g,) = torch.autograd.grad(y.sum(), z, create_graph=True)
(h,) = torch.autograd.grad(g.sum(), z)
print("Cube grad:", g, "second:", h)
zd = torch.tensor([0.5, -1.5], dtype=torch.double, requires_grad=True)
print("gradgradcheck:", torch.autograd.gradgradcheck(Cube.apply, (zd,)))
y = Cube.apply(Cube.apply(z))
y.sum().backward()
print("Cube twice:", z.grad, type(y.grad_fn.next_functions[0][0]).__name__)
(g,) = torch.autograd.grad(CubeOnce.apply(z).sum(), z, create_graph=True)
print("once_differentiable grad:", g, g.requires_grad)
try:
    torch.autograd.grad(g.sum(), z)
except RuntimeError as e:
    print("RuntimeError:", e)


class NeedsGrad(Function):
    @staticmethod
    def forward(ctx, a, b, scale):
        ctx.save_for_backward(a, b)
        ctx.scale = scale
        return a * b * scale

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        print("  needs_input_grad:", ctx.needs_input_grad)
        return (grad * b * ctx.scale if ctx.needs_input_grad[0] else None,
                grad * a * ctx.scale if ctx.needs_input_grad[1] else None, None)


a = torch.tensor([1.0, 2.0], requires_grad=True)
b = torch.tensor([3.0, 4.0], requires_grad=True)
NeedsGrad.apply(a, b, 2.0).sum().backward()
print(a.grad, b.grad)
NeedsGrad.apply(a, b.detach(), 2.0).sum().backward()
print(a.grad, b.grad)
(ga,) = torch.autograd.grad(NeedsGrad.apply(a, b, 0.5).sum(), a)
print("only a asked:", ga)


class TooFew(Function):
    @staticmethod
    def forward(ctx, a, b):
        return a + b

    @staticmethod
    def backward(ctx, grad):
        return grad


class WrongShape(Function):
    @staticmethod
    def forward(ctx, a):
        return a * 2

    @staticmethod
    def backward(ctx, grad):
        return grad.sum()


try:
    TooFew.apply(a, b).sum().backward()
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    WrongShape.apply(a).sum().backward()
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    Cube()(a)
except Exception as e:  # noqa: BLE001
    print(type(e).__name__ + ":", e)
