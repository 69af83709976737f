# Sinusoidal positional encodings (sin/cos written through strided slices), rounding and bucketing with
# floor/round/trunc/ceil, log1p/expm1 target transforms, and their gradients.
import math

import tinyddp as torch
import tinyddp.nn as nn

max_len, d_model = 6, 8
pe = torch.zeros(max_len, d_model)
position = torch.arange(0, max_len).unsqueeze(1)
div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
pe[:, 0::2] = torch.sin(position * div_term)
pe[:, 1::2] = torch.cos(position * div_term)
print(pe)
torch.manual_seed(0)
embed = nn.Embedding(10, d_model)
tokens = torch.randint(0, 10, (2, max_len))
x = embed(tokens) * math.sqrt(d_model) + pe.unsqueeze(0)
print(x.shape, f"{x.sum().item():.4f}")
v = torch.tensor([-2.5, -1.5, -0.5, 0.5, 1.5, 2.675, 3.14159])
print(v.round(), torch.round(v, decimals=2), v.floor(), v.ceil(), v.trunc())
print(torch.floor(torch.tensor([7, -3])), (v * 4).floor().long())
y = torch.tensor([0.0, 1e-7, 3.0, 100.0])
print(torch.log1p(y), torch.expm1(torch.log1p(y)))
w = torch.tensor([0.3, 1.2, -0.7], requires_grad=True)
(w.sin() * 2 + w.cos() + w.log1p() + w.expm1() + w.round() + w.floor()).sum().backward()
print(w.grad)
t = torch.tensor([1.0, 2.0])
t.sin_()
print(t, torch.sin(torch.tensor([0, 1])))
