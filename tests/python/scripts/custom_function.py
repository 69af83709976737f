# Custom autograd Functions: a ReLU with save_for_backward, a straight-through clamp, a two-input op with a
# non-tensor argument (needs_input_grad, None gradients), two outputs, and one used inside a model's training.
import tinyddp as torch
import tinyddp.nn as nn


class MyReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return grad_output * (x > 0).float()


class StraightThrough(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, low, high):
        return x.clamp(low, high)

    @staticmethod
    def backward(ctx, grad):
        return grad, None, None


class ScaledMul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b, scale):
        ctx.scale = scale
        ctx.save_for_backward(a, b)
        return a * b * scale

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        print("needs_input_grad", ctx.needs_input_grad)
        grad_a = grad * b * ctx.scale if ctx.needs_input_grad[0] else None
        grad_b = grad * a * ctx.scale if ctx.needs_input_grad[1] else None
        return grad_a, grad_b, None


class SumAndMax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sum(), x.max()

    @staticmethod
    def backward(ctx, grad_sum, grad_max):
        (x,) = ctx.saved_tensors
        return grad_sum * torch.ones_like(x) + grad_max * (x == x.max()).float()


x = torch.tensor([-1.0, 0.5, 2.0], requires_grad=True)
y = MyReLU.apply(x)
print(y.tolist(), y.requires_grad)
(y * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
print(x.grad)
x.grad = None
StraightThrough.apply(x * 3, -1.0, 1.0).sum().backward()
print(x.grad)
a = torch.tensor([1.0, 2.0], requires_grad=True)
b = torch.tensor([3.0, 4.0])
out = ScaledMul.apply(a, b, 0.5)
out.sum().backward()
print(out.tolist(), a.grad)
s, m = SumAndMax.apply(x)
(2 * s + 10 * m).backward()
print(s.item(), m.item(), x.grad)
with torch.no_grad():
    print(MyReLU.apply(x).requires_grad)
print(MyReLU.apply(torch.tensor([1.0, -1.0])).requires_grad)

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
data, target = torch.randn(8, 3), torch.randn(8, 1)
for step in range(3):
    opt.zero_grad()
    hidden = MyReLU.apply(model[0](data))
    loss = ((model[1](hidden) - target) ** 2).mean()
    loss.backward()
    opt.step()
    print(f"{step} {loss.item():.6f} {model[0].weight.grad.abs().sum().item():.6f}")
