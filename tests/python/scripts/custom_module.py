# A custom nn.Module with a registered buffer, state_dict keys, repr, load_state_dict and parameter listing.
import tinyddp as torch
import tinyddp.nn as nn
import tinyddp.nn.functional as F


class Scaler(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim, bias=False)
        self.gain = nn.Parameter(torch.ones(dim))
        self.register_buffer("scale", torch.full((dim,), 2.0))
        self.register_buffer("steps", torch.tensor(0))

    def forward(self, x):
        if self.training:
            self.steps += 1
        return F.relu(self.proj(x)) * self.gain * self.scale


torch.manual_seed(7)
m = Scaler(3)
print(m)
print(list(m.state_dict().keys()))
for name, p in m.named_parameters():
    print(name, tuple(p.shape), p.requires_grad)
for name, b in m.named_buffers():
    print(name, b.tolist(), b.dtype)
out = m(torch.randn(2, 3))
out.sum().backward()
print([round(v, 5) for v in m.gain.grad.tolist()])
print(m.steps.item(), m.steps)
sd = m.state_dict()
m2 = Scaler(3)
print(m2.load_state_dict(sd))
print(torch.equal(m2.proj.weight, m.proj.weight), m2.steps.item())
try:
    m2.load_state_dict({"gain": torch.ones(3)})
except RuntimeError as e:
    print(type(e).__name__, e)
print(m2.load_state_dict({"gain": torch.ones(3)}, strict=False))
print(isinstance(m.gain, nn.Parameter), isinstance(m.scale, nn.Parameter))
print(m.gain)
