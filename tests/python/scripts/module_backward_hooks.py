# Full backward hooks on a model's layers (grad_input/grad_output, a hook that rescales grad_input), and
# get_submodule/get_parameter with their errors.
import tinyddp as torch
nn = torch.nn
torch.manual_seed(0)
m = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
seen = []
def hook(mod, gin, gout):
    seen.append((type(mod).__name__, [None if g is None else [round(v, 5) for v in g.reshape(-1).tolist()] for g in gin],
                 [[round(v, 5) for v in g.reshape(-1).tolist()] for g in gout]))
h1 = m[0].register_full_backward_hook(hook)
h2 = m[2].register_full_backward_hook(hook)
h3 = m.register_full_backward_hook(lambda mod, gin, gout: seen.append(("seq", len(gin), len(gout))))
x = torch.tensor([[1.0, -2.0, 0.5], [0.3, 0.2, -1.0]])
m(x).sum().backward()
for s in seen: print(s)
print([round(v, 5) for v in m[0].weight.grad.reshape(-1).tolist()])
h1.remove()
def double(mod, gin, gout):
    return tuple(None if g is None else g * 2 for g in gin)
m[2].register_full_backward_hook(double)
x2 = x.clone().requires_grad_()
m.zero_grad()
m(x2).sum().backward()
print([round(v, 5) for v in x2.grad.reshape(-1).tolist()])
print(m.get_submodule("2"), m.get_parameter("0.bias").shape)
try:
    m.get_submodule("5")
except AttributeError as e:
    print(e)
try:
    m.get_parameter("0.foo")
except AttributeError as e:
    print(e)
