# Regularization and parameter utilities: clip_grad_value_, clip_grad_norm_ with norm types and
# error_if_nonfinite, parameters_to_vector / vector_to_parameters (a weight perturbation and its undo), SGD's
# weight_decay against a hand-written L2 penalty (same trajectory), AdamW against Adam with L2, Dropout / Dropout2d /
# AlphaDropout / F.dropout in train and eval under a seed, F.interpolate and nn.Upsample modes (nearest, bilinear
# with and without align_corners, scale factors), and F.pad's constant / reflect / replicate / circular modes.
import warnings

import tinyddp as torch
import tinyddp.nn as nn
import tinyddp.nn.functional as F
from tinyddp.nn.utils import clip_grad_norm_, clip_grad_value_, parameters_to_vector, vector_to_parameters

torch.manual_seed(0)
X = torch.randn(16, 4)
Y = torch.randn(16, 2)


def make():
    torch.manual_seed(3)
    return nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 2))


model = make()
loss = F.mse_loss(model(X), Y) * 50
loss.backward()
print("grad max before: %.4f" % max(p.grad.abs().max().item() for p in model.parameters()))
clip_grad_value_(model.parameters(), clip_value=0.5)
print("grad max after value clip: %.4f" % max(p.grad.abs().max().item() for p in model.parameters()))
for norm_type in (2.0, 1, float("inf")):
    total = clip_grad_norm_(model.parameters(), max_norm=1.0, norm_type=norm_type)
    print(f"norm_type {norm_type}: total {total.item():.5f}")
print("after: %.5f" % torch.norm(torch.stack([p.grad.norm() for p in model.parameters()])).item())
model[0].weight.grad[0, 0] = float("nan")
print("nan norm:", clip_grad_norm_(model.parameters(), 1.0))
try:
    clip_grad_norm_(model.parameters(), 1.0, error_if_nonfinite=True)
except RuntimeError as e:
    print("RuntimeError:", e)
print("empty:", clip_grad_norm_([], 1.0))

vec = parameters_to_vector(model.parameters())
print("vector:", vec.shape, "%.5f" % vec.sum().item())
vector_to_parameters(vec + 0.1, model.parameters())
print("perturbed bias:", model[2].bias.data)
vector_to_parameters(vec, model.parameters())
print("restored:", torch.equal(parameters_to_vector(model.parameters()), vec))
try:
    vector_to_parameters(vec[:5], model.parameters())
except RuntimeError as e:
    print("RuntimeError:", str(e)[:60])
try:
    parameters_to_vector(model[0].weight)
except TypeError as e:
    print("TypeError:", e)

# SGD weight decay == an explicit L2 term of wd/2 * ||w||^2
m1, m2 = make(), make()
o1 = torch.optim.SGD(m1.parameters(), lr=0.1, weight_decay=0.05, momentum=0.9)
o2 = torch.optim.SGD(m2.parameters(), lr=0.1, momentum=0.9)
for step in range(5):
    o1.zero_grad()
    o2.zero_grad()
    F.mse_loss(m1(X), Y).backward()
    l2 = sum((p ** 2).sum() for p in m2.parameters())
    (F.mse_loss(m2(X), Y) + 0.025 * l2).backward()
    o1.step()
    o2.step()
diff = (parameters_to_vector(m1.parameters()) - parameters_to_vector(m2.parameters())).abs().max().item()
print("wd vs L2 max diff < 1e-6:", diff < 1e-6)
m3, m4 = make(), make()
o3 = torch.optim.AdamW(m3.parameters(), lr=0.01, weight_decay=0.1)
o4 = torch.optim.Adam(m4.parameters(), lr=0.01, weight_decay=0.1)
for step in range(5):
    for m, o in ((m3, o3), (m4, o4)):
        o.zero_grad()
        F.mse_loss(m(X), Y).backward()
        o.step()
print("AdamW %.5f  Adam+L2 %.5f" % (m3[0].weight.sum().item(), m4[0].weight.sum().item()))

torch.manual_seed(5)
x = torch.ones(2, 3, 2, 2)
d1, d2, ad = nn.Dropout(0.5), nn.Dropout2d(0.5), nn.AlphaDropout(0.2)
print("dropout:", d1(x[0, 0]))
print("dropout2d channels kept:", d2(x)[:, :, 0, 0])
print("alpha dropout: %.4f" % ad(torch.randn(100)).mean().item())
print("F.dropout eval-flag:", F.dropout(x[0, 0], 0.5, training=False))
for m in (d1, d2, ad):
    m.eval()
print("eval:", torch.equal(d1(x), x), torch.equal(d2(x), x), d1)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    y3 = nn.Dropout2d(0.5)(torch.ones(3, 4, 4))
print("dropout2d on 3-D:", tuple(y3.shape), [str(w.message)[:70] for w in caught])
try:
    nn.Dropout(1.5)
except ValueError as e:
    print("ValueError:", e)

img = torch.arange(16.0).reshape(1, 1, 4, 4)
print(F.interpolate(img, scale_factor=0.5, mode="nearest"))
print(F.interpolate(img, size=(3, 3), mode="bilinear", align_corners=False))
print(F.interpolate(img, size=(3, 3), mode="bilinear", align_corners=True))
print(nn.Upsample(scale_factor=2, mode="nearest")(img[:, :, :2, :2]))
print(F.interpolate(torch.tensor([[[1.0, 2.0, 4.0]]]), size=5, mode="linear", align_corners=False))
print(nn.Upsample(size=5, mode="linear", align_corners=True))
try:
    F.interpolate(img, size=(2, 2), scale_factor=2)
except ValueError as e:
    print("ValueError:", e)

seq = torch.arange(1.0, 5.0).reshape(1, 1, 4)
for mode in ("constant", "reflect", "replicate", "circular"):
    print(mode, F.pad(seq, (2, 1), mode=mode).tolist())
print(F.pad(seq, (1, 1), value=-1.0).tolist())
print(F.pad(img, (1, 0, 0, 1), mode="reflect")[0, 0])
print(F.pad(torch.ones(2, 2), (0, 1, 1, 0)))
try:
    F.pad(seq, (4, 0), mode="reflect")
except RuntimeError as e:
    print("RuntimeError:", e)
