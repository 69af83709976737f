# A tiny causal language model: Embedding + learned positions -> nn.TransformerEncoder (batch_first, a causal
# mask from generate_square_subsequent_mask, dropout in training) -> Linear, AdamW; then nn.MultiheadAttention's
# weights, and 1.13's eval-mode encoder over a padded batch (padded positions come back as zeros, trimmed).
import math

import tinyddp as torch
import tinyddp.nn as nn
import tinyddp.nn.functional as F


class TinyLM(nn.Module):
    def __init__(self, vocab, d_model, heads, layers, max_len=16):
        super().__init__()
        self.d_model = d_model
        self.embed = nn.Embedding(vocab, d_model)
        self.pos = nn.Parameter(torch.zeros(1, max_len, d_model))
        layer = nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=4 * d_model, dropout=0.1,
                                           batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, norm=nn.LayerNorm(d_model))
        self.head = nn.Linear(d_model, vocab)

    def forward(self, tokens):
        t = tokens.size(1)
        x = self.embed(tokens) * math.sqrt(self.d_model) + self.pos[:, :t]
        mask = nn.Transformer.generate_square_subsequent_mask(t)
        return self.head(self.encoder(x, mask=mask))


torch.manual_seed(0)
model = TinyLM(vocab=10, d_model=8, heads=2, layers=2)
print(model.encoder.layers[0])
print(len(model.state_dict()), list(model.state_dict())[:6])
data = torch.randint(0, 10, (3, 9))
opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
for step in range(4):
    logits = model(data[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, 10), data[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.4f}")
model.eval()
with torch.no_grad():
    logits = model(data[:, :-1])
print(logits.shape, f"{logits.abs().mean().item():.4f}")

attn = nn.MultiheadAttention(8, 2, batch_first=True)
x = torch.randn(2, 4, 8)
out, w = attn(x, x, x, key_padding_mask=torch.tensor([[False, False, True, True], [False] * 4]))
print(out.shape, w.shape, [round(v, 4) for v in w[0, 0].tolist()], f"{w.sum(dim=-1).mean().item():.4f}")
print(attn(x, x, x, average_attn_weights=False)[1].shape, attn(x, x, x, need_weights=False)[1])

encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), 2).eval()
padding = torch.tensor([[False, False, False, True, True], [False, False, False, False, True]])
with torch.no_grad():
    y = encoder(torch.randn(2, 5, 8), src_key_padding_mask=padding)
print(y.shape, y[0, 3].abs().sum().item(), f"{y[1, 3].abs().sum().item():.4f}")
