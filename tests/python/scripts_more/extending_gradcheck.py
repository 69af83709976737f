# The "Extending PyTorch" tutorial's custom Functions checked as it checks them: LinearFunction (optional bias,
# needs_input_grad), MulConstant (a non-tensor argument), a custom Exp saving its output, verified with
# torch.autograd.gradcheck in double precision (and what a float32 check and a wrong backward report, with
# raise_exception=False too), gradgradcheck of a twice-differentiable Function, and the Functions inside a
# module trained for a few steps.
import warnings

import tinyddp as torch
import tinyddp.nn as nn
from tinyddp.autograd import Function, gradcheck, gradgradcheck

torch.manual_seed(0)


class LinearFunction(Function):
    @staticmethod
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight, bias)
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, grad_bias


class MulConstant(Function):
    @staticmethod
    def forward(ctx, tensor, constant):
        ctx.constant = constant
        return tensor * constant

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.constant, None


class Exp(Function):
    @staticmethod
    def forward(ctx, i):
        result = i.exp()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        result, = ctx.saved_tensors
        return grad_output * result


class WrongSquare(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * x   # should be 2 * x


inp = (torch.randn(5, 4, dtype=torch.double, requires_grad=True),
       torch.randn(3, 4, dtype=torch.double, requires_grad=True))
print("linear:", gradcheck(LinearFunction.apply, inp, eps=1e-6, atol=1e-4))
bias = torch.randn(3, dtype=torch.double, requires_grad=True)
print("linear+bias:", gradcheck(LinearFunction.apply, inp + (bias,)))
frozen = (inp[0], inp[1].detach(), bias)
print("frozen weight:", gradcheck(LinearFunction.apply, frozen))
print("mul constant:", gradcheck(lambda t: MulConstant.apply(t, 2.5), (torch.randn(3, dtype=torch.double,
                                                                                  requires_grad=True),)))
x = torch.randn(2, 3, dtype=torch.double, requires_grad=True)
print("exp:", gradcheck(Exp.apply, (x,)), "gradgrad:", gradgradcheck(Exp.apply, (x,)))
print("rng after gradgradcheck:", torch.rand(2))
print("wrong:", gradcheck(WrongSquare.apply, (x,), raise_exception=False))
try:
    gradcheck(WrongSquare.apply, (torch.tensor([1.0, -2.0], dtype=torch.double, requires_grad=True),))
except RuntimeError as e:
    print(type(e).__name__ + ":", e)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    ok = gradcheck(Exp.apply, (torch.randn(3, requires_grad=True),), eps=1e-3, atol=1e-2, rtol=1e-2)
print("float32:", ok, [str(w.message)[:60] for w in caught])
try:
    gradcheck(Exp.apply, (torch.randn(3, dtype=torch.double),))
except ValueError as e:
    print("ValueError:", e)
print("constant output:", gradcheck(lambda t: t.detach() * 0 + 1, (x,)))
try:
    gradcheck(lambda t: t.detach() * 2, (x,))
except RuntimeError as e:
    print("detached output:", type(e).__name__, e)


class MyLinear(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(d_out, d_in).uniform_(-0.1, 0.1))
        self.bias = nn.Parameter(torch.zeros(d_out))

    def forward(self, input):
        return LinearFunction.apply(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in={self.weight.shape[1]}, out={self.weight.shape[0]}"


model = nn.Sequential(MyLinear(4, 8), nn.Tanh(), MyLinear(8, 1))
print(model)
X = torch.randn(16, 4)
Y = X.sum(1, keepdim=True)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(20):
    opt.zero_grad()
    out = MulConstant.apply(model(X), 2.0)
    loss = (Exp.apply(out - Y) - 1 - (out - Y)).mean()
    loss.backward()
    opt.step()
    if step % 5 == 0:
        print(f"step {step}: loss {loss.item():.5f} grad_fn {out.grad_fn.name()}")
