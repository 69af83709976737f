# The autograd mistakes a learner hits and their fixes: backward twice without retain_graph, in-place ops on a
# leaf that requires grad, modifying a tensor saved for backward (version counter), reading .grad of a non-leaf,
# forgetting zero_grad (gradients accumulate), manual gradient accumulation over micro-batches, and the .data /
# detach() tricks for updating weights by hand.
import tinyddp as torch

torch.manual_seed(0)
w = torch.randn(3, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
X = torch.randn(8, 3)
Y = X @ torch.tensor([1.0, -2.0, 0.5]) + 0.3

loss = ((X @ w + b - Y) ** 2).mean()
loss.backward()
try:
    loss.backward()
except RuntimeError as e:
    print("RuntimeError:", str(e)[:80])
print("w.grad after one backward:", [round(v, 4) for v in w.grad.tolist()])
loss = ((X @ w + b - Y) ** 2).mean()
loss.backward(retain_graph=True)
loss.backward()
print("w.grad accumulated three times:", [round(v, 4) for v in w.grad.tolist()])
w.grad.zero_()
b.grad = None
print("after zero_ / None:", w.grad, b.grad)

try:
    w += 1
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    w[0] = 0.0
except RuntimeError as e:
    print("RuntimeError:", e)
with torch.no_grad():
    w[0] = 0.5
print("edited under no_grad:", round(w[0].item(), 4), w.is_leaf, w._version)

a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
s = a.sigmoid()
out = s * 2
print("version before:", s._version)
s.mul_(2)
print("version after:", s._version)
try:
    out.sum().backward()
except RuntimeError as e:
    print("RuntimeError:", e)
e = a.exp()
e2 = e.clone()
e2.add_(1)
(e * e2).sum().backward()
print("fixed with clone:", [round(v, 3) for v in a.grad.tolist()])

h = a * 2
h.sum().backward()
print("h.grad:", h.grad)

lr = 0.1
for step in range(3):
    loss = ((X @ w + b - Y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= lr * w.grad
        b -= lr * b.grad
    print(f"step {step} loss {loss.item():.4f} grad norm {w.grad.norm().item():.4f} (never zeroed)")
w.grad = None
b.grad = None

accum = 4
for i in range(accum):
    xb, yb = X[2 * i:2 * i + 2], Y[2 * i:2 * i + 2]
    loss = ((xb @ w + b - yb) ** 2).mean() / accum
    loss.backward()
print("accumulated grad:", [round(v, 4) for v in w.grad.tolist()], round(b.grad.item(), 4))
full = ((X @ w + b - Y) ** 2).mean()
gw, gb = torch.autograd.grad(full, [w, b])
print("matches full batch:", torch.allclose(gw, w.grad, atol=1e-6), torch.allclose(gb, b.grad, atol=1e-6))

w.data -= 0.1 * w.grad.data
print("via .data:", w.is_leaf, w.requires_grad, w.grad_fn, [round(v, 4) for v in w.tolist()])
d = w.detach()
d[1] = 10.0
print("detach shares storage:", round(w[1].item(), 1), d.requires_grad)
w.data = torch.tensor([0.0, 0.0, 0.0])
print("after .data =:", w, w.requires_grad)
n = torch.ones(2, requires_grad=True)
m = n.data
m.add_(5)
print(n, m.requires_grad)
try:
    torch.ones(2, requires_grad=True).numpy()
except RuntimeError as e:
    print("RuntimeError:", e)
print(torch.ones(2, requires_grad=True).detach().numpy())
k = torch.ones(2, requires_grad=True) * 2
try:
    k.requires_grad_(False)
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    torch.tensor([1, 2]).requires_grad_()
except RuntimeError as e:
    print("RuntimeError:", e)
