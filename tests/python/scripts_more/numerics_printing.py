# Numbers as scripts print them: set_printoptions (precision, sci_mode, threshold/edgeitems, linewidth, profiles)
# and back to the defaults, tensors holding large/small values, NaN and inf, int and bool tensors, 0-dim tensors in
# f-strings (`f"{t:.3f}"`, `{t}`), item()/tolist() per dtype, allclose/isclose with rtol/atol/equal_nan,
# no_grad vs inference_mode as decorators and contexts, set_grad_enabled, and is_grad_enabled at each point.
import tinyddp as torch

print(torch.manual_seed(0), type(torch.Generator()))
big = torch.tensor([1.0, 1e6, 123456.789])
small = torch.tensor([1e-5, 0.5, 3.25])
mixed = torch.tensor([[1e-8, 1.0], [1e8, -2.5]])
special = torch.tensor([float("nan"), float("inf"), -float("inf"), 0.0, -0.0, 1.5])
print(big)
print(small)
print(mixed)
print(special)
print(torch.tensor([0.1, 0.25], dtype=torch.float64))
print(torch.tensor([3, -7, 120000]), torch.tensor([True, False]))
print(torch.tensor([[1, 2], [3, 4]]) * 1000)
print(torch.zeros(2, 0), torch.ones(()), torch.tensor(2.5, dtype=torch.float64))
print(torch.arange(12.0).reshape(3, 4) / 3)

torch.set_printoptions(precision=2)
print("precision 2:", small, mixed)
torch.set_printoptions(sci_mode=False)
print("no sci:", mixed, big)
torch.set_printoptions(sci_mode=True)
print("sci:", small)
torch.set_printoptions(precision=4, sci_mode=None)
print(torch.randn(3))
torch.set_printoptions(threshold=5, edgeitems=2)
print(torch.arange(20))
print(torch.arange(40.0).reshape(8, 5))
torch.set_printoptions(profile="default")
print(torch.arange(8.0) / 7)
torch.set_printoptions(linewidth=30)
print(torch.arange(14.0))
torch.set_printoptions(profile="short")
print(torch.randn(2, 2))
torch.set_printoptions(profile="default")
print(torch.randn(2, 3, requires_grad=True) * 2)

t = torch.tensor(3.14159)
i = torch.tensor(7)
b = torch.tensor(True)
print(f"{t:.3f} {t:8.2f}| {t} {i} {b} {t.item():.4e}")
print(type(t), type(t.item()), type(i.item()), type(t.tolist()), type(torch.ones(2).tolist()), isinstance(t, torch.Tensor))
print(f"{i:d}", f"{i:04d}", f"{t:.1%}", "{:>6.2f}".format(t))
try:
    print(f"{torch.tensor([1.0, 2.0]):.2f}")
except TypeError as e:
    print("TypeError:", e)
print(format(torch.tensor(2.0)), str(torch.tensor(-0.0)), repr(torch.tensor(1e-9)))
for dtype in (torch.float32, torch.float64, torch.int64, torch.bool):
    x = torch.tensor([1, 0, 3], dtype=dtype)
    print(dtype, x.tolist(), type(x[0].item()).__name__, x[2].item(), x.sum().item() if dtype != torch.bool else "-")
print(torch.tensor(0.1).item(), torch.tensor(0.1, dtype=torch.float64).item(), torch.tensor([[1.5]]).item())
print(float(torch.tensor([2.5])), int(torch.tensor(3.9)), bool(torch.tensor([0.0])))
try:
    torch.tensor([1.0, 2.0]).item()
except (RuntimeError, ValueError) as e:
    print(type(e).__name__ + ":", e)

a = torch.tensor([1.0, 2.0, float("nan")])
bb = torch.tensor([1.0 + 1e-6, 2.1, float("nan")])
print(torch.allclose(a, bb), torch.allclose(a, bb, equal_nan=True), torch.allclose(a, bb, atol=0.2, equal_nan=True))
print(torch.isclose(a, bb), torch.isclose(a, bb, rtol=0.1, equal_nan=True))
print(torch.equal(a[:2], torch.tensor([1.0, 2.0])), torch.isclose(torch.tensor([1e-9]), torch.tensor([0.0])))
print(torch.isfinite(special), torch.isinf(special).sum(), torch.isnan(special).any())
print(torch.nan_to_num(special, nan=0.0, posinf=99.0, neginf=-99.0))

w = torch.randn(3, requires_grad=True)


@torch.no_grad()
def predict(x):
    return (w * x).sum(), torch.is_grad_enabled()


@torch.inference_mode()
def predict_inf(x):
    return (w * x).sum(), torch.is_grad_enabled(), torch.is_inference_mode_enabled()


out, enabled = predict(torch.ones(3))
print("no_grad:", out.requires_grad, enabled, out.is_inference())
out, enabled, inf = predict_inf(torch.ones(3))
print("inference_mode:", out.requires_grad, enabled, inf, out.is_inference())
with torch.set_grad_enabled(False):
    print("set_grad_enabled(False):", (w * 2).requires_grad, torch.is_grad_enabled())
torch.set_grad_enabled(False)
print("function form:", (w * 2).requires_grad)
torch.set_grad_enabled(True)
with torch.no_grad():
    with torch.enable_grad():
        print("enable_grad inside no_grad:", (w * 2).requires_grad)
with torch.inference_mode(mode=False):
    print("inference_mode(False):", (w * 2).requires_grad, torch.is_inference_mode_enabled())
try:
    out.add_(1)
except RuntimeError as e:
    print("RuntimeError:", e)
print("grad enabled at end:", torch.is_grad_enabled())
