# Monitoring and clipping gradients: per-layer gradient norms with torch.linalg.norm / vector_norm and
# Tensor.norm, the total norm as clip_grad_norm_ computes it (2, inf and 1 norms), clip_grad_value_, weight norms,
# parameters_to_vector, and a gradient that explodes and is caught by error_if_nonfinite.
import math

import tinyddp as torch
import tinyddp.nn as nn

torch.manual_seed(3)
model = nn.Sequential(nn.Linear(6, 12), nn.Tanh(), nn.Linear(12, 12), nn.Tanh(), nn.Linear(12, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
X = torch.randn(40, 6)
y = (X ** 2).sum(dim=1, keepdim=True)
torch.set_printoptions(precision=3)

for step in range(6):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(X), y)
    loss.backward()
    norms = {name: p.grad.norm().item() for name, p in model.named_parameters()}
    total = torch.linalg.norm(torch.stack([torch.linalg.norm(p.grad) for p in model.parameters()]))
    flat = torch.cat([p.grad.flatten() for p in model.parameters()])
    print(f"step {step} loss {loss.item():.4f} total {total.item():.4f} {torch.linalg.vector_norm(flat).item():.4f}")
    print("  largest:", max(norms, key=norms.get), f"{max(norms.values()):.4f}",
          "inf:", f"{torch.linalg.vector_norm(flat, float('inf')).item():.4f}")
    clipped = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=5.0)
    print("  clip_grad_norm_ returned", clipped, "after:", torch.linalg.norm(flat.new_tensor(
        [torch.linalg.norm(p.grad).item() for p in model.parameters()])).item() <= 5.0 + 1e-4)
    opt.step()

opt.zero_grad()
nn.functional.mse_loss(model(X), y).backward()
print(torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, norm_type=float("inf")))
print(torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, norm_type=1))
torch.nn.utils.clip_grad_value_(model.parameters(), clip_value=0.01)
print(max(p.grad.abs().max().item() for p in model.parameters()))
print(model[0].weight.grad.norm(dim=1))
print(torch.norm(model[0].weight, p="fro"), torch.linalg.matrix_norm(model[0].weight, ord=1))
vec = torch.nn.utils.parameters_to_vector(model.parameters())
print(vec.shape, vec.norm(), vec.norm(p=1), vec.abs().max())
print(torch.linalg.vector_norm(model[2].weight, ord=2, dim=-1, keepdim=True).shape)

with torch.no_grad():
    for p in model.parameters():
        p.grad.fill_(math.nan)
try:
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, error_if_nonfinite=True)
except RuntimeError as e:
    print("RuntimeError:", e)
print(torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0))
