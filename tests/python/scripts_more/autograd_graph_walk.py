# Looking inside the autograd graph: walking grad_fn and next_functions recursively and printing each node's
# class, name() and its AccumulateGrad leaves (node.variable), metadata dicts on nodes, the nodes of a small
# MLP's loss, which tensors are leaves, and the errors a second backward and a .grad of a non-leaf give.
import tinyddp as torch
import tinyddp.nn as nn
import tinyddp.nn.functional as F

torch.manual_seed(0)


def walk(fn, depth=0, seen=None):
    seen = set() if seen is None else seen
    if fn is None:
        print("  " * depth + "None")
        return
    label = type(fn).__name__
    if label == "AccumulateGrad":
        label += f" -> leaf of shape {tuple(fn.variable.shape)}"
    elif fn in seen:
        label += " (seen)"
    print("  " * depth + label)
    if fn in seen:
        return
    seen.add(fn)
    for child, _ in fn.next_functions:
        walk(child, depth + 1, seen)


x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
c = torch.tensor([0.1, 0.2, -0.3])
y = (x * w + c).exp().sum() / 10
print("y =", round(y.item(), 4))
walk(y.grad_fn)
print(y.grad_fn.name(), y.grad_fn.next_functions[0][0].name())
print([n[1] for n in y.grad_fn.next_functions])
print("is_leaf:", x.is_leaf, w.is_leaf, c.is_leaf, y.is_leaf)
print("requires_grad:", x.requires_grad, c.requires_grad, y.requires_grad)
print("grad_fn of a leaf:", x.grad_fn, c.grad_fn)

z = x * x + x.sin()
walk(z.sum().grad_fn)
mul = z.grad_fn.next_functions[0][0]
print(type(mul).__name__, mul.next_functions[0][0] is mul.next_functions[1][0])
acc = mul.next_functions[0][0]
print(acc.variable is x, acc.variable.shape, acc.name())

node = y.grad_fn
node.metadata["tag"] = "final division"
print(y.grad_fn.metadata)
print(isinstance(y.grad_fn, torch.autograd.graph.Node) if hasattr(torch.autograd.graph, "Node") else "no Node")

model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
inp = torch.randn(5, 4)
target = torch.tensor([0, 1, 1, 0, 1])
loss = F.cross_entropy(model(inp), target)
print("loss %.4f" % loss.item())
walk(loss.grad_fn)
names = []
stack = [loss.grad_fn]
while stack:
    fn = stack.pop()
    if fn is None:
        continue
    names.append(fn.name())
    stack.extend(f for f, _ in fn.next_functions)
print(len(names), sorted(set(names)))

y.backward(retain_graph=True)
print("x.grad", x.grad, "w.grad", w.grad)
y.backward()
print("accumulated x.grad", x.grad)
try:
    y.backward()
except RuntimeError as e:
    print("RuntimeError:", e)

h = x * 2
s = h.sum()
s.backward()
print("non-leaf grad:", h.grad)
h2 = x * 2
h2.retain_grad()
h2.sum().backward()
print("retained:", h2.grad, h2.is_leaf, h2.retains_grad)
d = x.detach()
print(d.is_leaf, d.requires_grad, d.grad_fn)
