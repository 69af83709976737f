# Grad-CAM as older tutorials write it: a forward hook keeps the last conv block's activations, the deprecated
# Module.register_backward_hook keeps the gradients reaching it (with 1.13's deprecation warning for a block of
# several nodes, and the hook seeing only its last node's grad_input), the class-score gradient weights the
# channels, and the heat map is upsampled to the image; then the same with register_full_backward_hook, a hook on
# a grad_fn directly, removing the hooks, and mixing both kinds of backward hooks on one module.
import warnings

import tinyddp as torch
import tinyddp.nn as nn
import tinyddp.nn.functional as F

torch.manual_seed(0)


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                      nn.Conv2d(4, 6, 3, padding=1), nn.ReLU())
        self.head = nn.Linear(6, 3)

    def forward(self, x):
        f = self.features(x)
        return self.head(f.mean(dim=(2, 3)))


model = SmallCNN()
img = torch.randn(1, 1, 8, 8)
store = {}
target_layer = model.features[3]
fh = target_layer.register_forward_hook(lambda m, inp, out: store.update(act=out.detach()))


def save_grad(module, grad_input, grad_output):
    store["grad"] = grad_output[0].detach()
    store["grad_input"] = [None if g is None else tuple(g.shape) for g in grad_input]


bh = target_layer.register_backward_hook(save_grad)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    scores = model(img)
print("warnings:", [str(w.message)[:90] for w in caught])
cls = scores.argmax(1).item()
print("scores:", scores.detach(), "class:", cls)
model.zero_grad()
scores[0, cls].backward()
print("activation:", tuple(store["act"].shape), "gradient:", tuple(store["grad"].shape))
print("grad_input shapes:", store["grad_input"])
weights = store["grad"].mean(dim=(2, 3), keepdim=True)
cam = F.relu((weights * store["act"]).sum(1, keepdim=True))
cam = F.interpolate(cam, size=(8, 8), mode="bilinear", align_corners=False)
cam = (cam - cam.min()) / (cam.max() - cam.min() + 1e-8)
print("cam:", tuple(cam.shape), "%.4f %.4f" % (cam.mean().item(), cam[0, 0, 4].sum().item()))
print(cam[0, 0, ::2, ::2])
fh.remove()
bh.remove()

full = {}
h2 = model.features.register_full_backward_hook(
    lambda m, gin, gout: full.update(gin=[None if g is None else tuple(g.shape) for g in gin],
                                     gout=[tuple(g.shape) for g in gout], norm=gout[0].norm().item()))
inp = img.clone().requires_grad_()
model(inp)[0, cls].backward()
print("full hook:", full["gin"], full["gout"], "%.5f" % full["norm"])
print("input grad: %.5f" % inp.grad.abs().sum().item())
h2.remove()

seen = []
out = model(img)
node = out.grad_fn
handle = node.register_hook(lambda grad_inputs, grad_outputs: seen.append(
    (node.name(), [None if g is None else tuple(g.shape) for g in grad_inputs], [tuple(g.shape) for g in grad_outputs])))
out.sum().backward()
print("grad_fn hook:", seen)
handle.remove()
model(img).sum().backward()
print("after remove:", len(seen))

try:
    model.head.register_full_backward_hook(lambda *a: None)
    model.head.register_backward_hook(lambda *a: None)
except RuntimeError as e:
    print("RuntimeError:", e)
relu = nn.ReLU()
relu.register_backward_hook(lambda m, gin, gout: print("relu hook:", [tuple(g.shape) for g in gin],
                                                      gout[0].sum().item()))
z = torch.randn(5, requires_grad=True)
relu(z * 2).sum().backward()
