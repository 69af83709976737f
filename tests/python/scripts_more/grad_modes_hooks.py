# Switching autograd off and watching gradients flow: no_grad vs inference_mode vs set_grad_enabled (as context
# managers and decorators, nested, enable_grad inside no_grad), tensor hooks that print, scale and clip
# gradients (on leaves and intermediates, removed again), and module hooks: a forward pre-hook that rescales the
# input, a forward hook recording activations, and full backward hooks printing grad_input / grad_output.
import tinyddp as torch
import tinyddp.nn as nn

torch.manual_seed(0)
x = torch.randn(3, requires_grad=True)

with torch.no_grad():
    a = x * 2
print("no_grad:", a.requires_grad, a.grad_fn, a.is_leaf, torch.is_grad_enabled())
with torch.inference_mode():
    b = x * 2
print("inference_mode:", b.requires_grad, b.is_inference(), torch.is_inference_mode_enabled())
with torch.set_grad_enabled(False):
    c = x * 2
print("set_grad_enabled(False):", c.requires_grad)
torch.set_grad_enabled(False)
d = x * 2
torch.set_grad_enabled(True)
print("as a function:", d.requires_grad, torch.is_grad_enabled())
with torch.no_grad():
    with torch.enable_grad():
        e = x * 2
    f = x * 2
print("enable_grad inside no_grad:", e.requires_grad, f.requires_grad)


@torch.no_grad()
def evaluate(t):
    return (t * 3).sum()


@torch.inference_mode()
def predict(t):
    return t * 3


print("decorated:", evaluate(x).requires_grad, predict(x).is_inference(), torch.is_grad_enabled())
try:
    (b * x).sum().backward()
except RuntimeError as e:
    print("RuntimeError:", e)
print("clone of inference tensor:", b.clone().is_inference(), (b.clone() * x).requires_grad)
with torch.no_grad():
    x.mul_(0.5)
print("in-place under no_grad:", x.is_leaf, x.requires_grad, x.grad_fn)

log = []
y = x * 3
h1 = y.register_hook(lambda g: log.append(("y", g.tolist())))
h2 = x.register_hook(lambda g: g.clamp(-1, 1))
(y ** 2).sum().backward()
print("log:", [(n, [round(v, 4) for v in g]) for n, g in log])
print("clamped x.grad:", [round(v, 4) for v in x.grad.tolist()])
h1.remove()
h2.remove()
x.grad = None
y = x * 3
(y ** 2).sum().backward()
print("after remove:", [round(v, 4) for v in x.grad.tolist()], len(log))
x.grad = None
z = x * 1.0
z.register_hook(lambda g: g * 100)
z.register_hook(lambda g: print("  second hook sees", [round(v, 1) for v in g.tolist()]))
z.sum().backward()
print("x.grad after two hooks:", x.grad)

model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
acts = {}


def pre_hook(module, inputs):
    print("  pre-hook", type(module).__name__, [tuple(t.shape) for t in inputs])
    return (inputs[0] * 0.5,)


def fwd_hook(name):
    def hook(module, inputs, output):
        acts[name] = output.detach()
    return hook


def bwd_hook(module, grad_input, grad_output):
    print("  backward hook", type(module).__name__,
          [None if g is None else tuple(g.shape) for g in grad_input],
          [tuple(g.shape) for g in grad_output])


handles = [model[0].register_forward_pre_hook(pre_hook)]
for i, layer in enumerate(model):
    handles.append(layer.register_forward_hook(fwd_hook(str(i))))
    handles.append(layer.register_full_backward_hook(bwd_hook))
inp = torch.randn(5, 3)
out = model(inp)
print("activations:", {k: tuple(v.shape) for k, v in acts.items()})
print("relu zeros:", int((acts["1"] == 0).sum()))
out.sum().backward()
print("weight grad norm %.4f" % model[0].weight.grad.norm().item())
for hdl in handles:
    hdl.remove()
model.zero_grad()
out2 = model(inp)
out2.sum().backward()
print("without the pre-hook, outputs differ:", not torch.allclose(out, out2))
print("weight grad norm %.4f" % model[0].weight.grad.norm().item())
