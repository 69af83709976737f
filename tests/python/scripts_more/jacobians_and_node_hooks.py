# Jacobians by hand and by the library: one autograd.grad call per output row (retain_graph), all rows at once
# with is_grads_batched=True, torch.autograd.functional.jacobian (also vectorize=True and create_graph=True),
# autograd.backward over several outputs with grad_tensors and inputs=, and hooks on graph nodes
# (grad_fn.register_hook, register_prehook) printing what flows through them.
import tinyddp as torch
from tinyddp.autograd.functional import jacobian

torch.manual_seed(0)
W = torch.randn(3, 4)


def f(x):
    return torch.tanh(W @ x) * x[:3]


x = torch.tensor([0.5, -1.0, 0.25, 2.0], requires_grad=True)
y = f(x)
rows = []
for i in range(y.shape[0]):
    (g,) = torch.autograd.grad(y[i], x, retain_graph=True)
    rows.append(g)
J_loop = torch.stack(rows)
print("loop:", tuple(J_loop.shape))
print(J_loop.round(decimals=4))
try:
    (J_batched,) = torch.autograd.grad(y, x, grad_outputs=torch.eye(3), retain_graph=True, is_grads_batched=True)
    print("batched equal:", torch.allclose(J_batched, J_loop))
except Exception as e:  # noqa: BLE001
    print(type(e).__name__, e)
J = jacobian(f, x.detach())
print("functional equal:", torch.allclose(J, J_loop), J.requires_grad)
Jv = jacobian(f, x.detach(), vectorize=True)
print("vectorized equal:", torch.allclose(Jv, J_loop))
Jc = jacobian(f, x, create_graph=True)
print("create_graph:", Jc.requires_grad, type(Jc.grad_fn).__name__)
Jc.trace().backward()
print("d trace(J) / dx:", [round(v, 4) for v in x.grad.tolist()])
J2 = jacobian(lambda a, b: a * b + b.exp(), (torch.ones(2), torch.zeros(2)))
print("two inputs:", [j.tolist() for j in J2])

a = torch.tensor([1.0, 2.0], requires_grad=True)
b = torch.tensor([3.0, 4.0], requires_grad=True)
u = a * b
v = (a ** 2).sum()
torch.autograd.backward([u, v], grad_tensors=[torch.tensor([1.0, 0.5]), torch.tensor(2.0)])
print("backward over two outputs:", a.grad, b.grad)
a.grad = None
b.grad = None
(a * b).sum().backward(inputs=[b])
print("inputs=[b]:", a.grad, b.grad)
try:
    (a * b).sum().backward(inputs=[])
except RuntimeError as e:
    print("RuntimeError:", e)

seen = []
z = a * b
s = z.sum()
h = z.grad_fn.register_hook(lambda grad_inputs, grad_outputs: seen.append(
    ([g.tolist() for g in grad_inputs], [g.tolist() for g in grad_outputs])))
s.backward()
print("node hook saw:", seen)
h.remove()
if hasattr(z.grad_fn, "register_prehook"):
    z2 = a * b
    z2.grad_fn.register_prehook(lambda grad_outputs: print("prehook:", [g.tolist() for g in grad_outputs]))
    z2.sum().backward()
print(a.grad, b.grad)
