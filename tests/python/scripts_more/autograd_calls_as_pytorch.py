# How 1.13's autograd takes the calls scripts make: iterating a tensor of losses (one UnbindBackward0, whose
# outputs refuse in-place changes), no_grad / enable_grad / inference_mode / set_grad_enabled as decorators of
# functions and generators (set_grad_enabled's mode staying set, as 1.13's), its bool check, a gradient of
# another dtype (cast), backward(inputs=) with a non-leaf (its .grad retained), the texts for a float or a list
# of floats as gradient, a count mismatch and empty inputs, the non-leaf .grad warning only while .grad is unset,
# and save_for_backward's argument index.
import warnings

import tinyddp as torch


def attempt(label, fn):
    try:
        print(label, fn())
    except Exception as e:   # noqa: BLE001  (the error is what is compared)
        print(label, type(e).__name__, e)


a = torch.tensor([1., 2.], requires_grad=True)
for loss in a * 2:
    print(loss)
print([t.grad_fn.name() for t in a.clone()], max(a * 3))
first = list(a.clone())[0]
attempt("mul_ of a row", lambda: first.mul_(2))


@torch.no_grad()
def batches(x):
    for _ in range(2):
        yield (x * 2).requires_grad, torch.is_grad_enabled()


@torch.enable_grad()
def tracked(x):
    yield (x * 2).requires_grad


@torch.inference_mode()
def inferred(x):
    yield (x * 2).is_inference(), torch.is_grad_enabled()


x = torch.ones(2, requires_grad=True)
print(list(batches(x)), torch.is_grad_enabled())
with torch.no_grad():
    print(list(tracked(x)))
print(list(inferred(x)), torch.is_grad_enabled())
gen = batches(x)
print(next(gen), torch.is_grad_enabled(), next(gen))
gen.close()


@torch.set_grad_enabled(False)
def doubled(x):
    return x * 2


print(torch.is_grad_enabled())   # 1.13 leaves the decorator's mode set (2.x restores it)
torch.set_grad_enabled(True)
print(doubled(x).requires_grad, torch.is_grad_enabled())
attempt("set_grad_enabled(0)", lambda: torch.set_grad_enabled(0))
print(torch.is_grad_enabled())

d = torch.ones(2, dtype=torch.double, requires_grad=True)
u = d ** 2
attempt("grad of float64 with float32 ones", lambda: torch.autograd.grad(u, d, grad_outputs=torch.ones(u.shape)))
f = torch.ones(2, requires_grad=True)
(f * 2).backward(torch.ones(2, dtype=torch.double))
print(f.grad)

c = f * 3
(c * 2).sum().backward(inputs=[c])
print(f.grad, c.grad, c.is_leaf, c.retains_grad)
attempt("backward(2.0)", lambda: f.sum().backward(2.0))
attempt("backward([1., 1.])", lambda: (f * 1).backward([1., 1.]))
attempt("grad count", lambda: torch.autograd.grad([f.sum(), f.sum()], f, grad_outputs=[torch.tensor(1.)]))
attempt("grad no inputs", lambda: torch.autograd.grad(f.sum(), []))
attempt("backward inputs=[]", lambda: f.sum().backward(inputs=[]))

warnings.simplefilter("always")
b = torch.ones(2, requires_grad=True) * 2
with warnings.catch_warnings(record=True) as caught:
    print(b.grad)
b.grad = torch.ones(2)
with warnings.catch_warnings(record=True) as caught_after:
    print(b.grad)
print(len(caught), len(caught_after))


class Saves(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x, x, "a")
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g


attempt("save_for_backward", lambda: Saves.apply(torch.ones(2, requires_grad=True)))


class ReturnsFloat(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        return 1.0


attempt("backward returning a float", lambda: ReturnsFloat.apply(torch.ones(2, requires_grad=True)).sum().backward())
attempt("apply(x=...)", lambda: ReturnsFloat.apply(x=torch.ones(2)))
print(hasattr(ReturnsFloat, "vjp"), torch.autograd.Function.vjp is torch.autograd.Function.backward)
