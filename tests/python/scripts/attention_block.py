# A tiny self-attention block: Embedding, LayerNorm, masked_fill(-inf) + softmax, permute/transpose, chunk.
import math

import tinyddp as torch
import tinyddp.nn as nn
import tinyddp.nn.functional as F


class TinyAttention(nn.Module):
    def __init__(self, vocab, dim, heads):
        super().__init__()
        self.heads = heads
        self.embed = nn.Embedding(vocab, dim)
        self.norm = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, vocab)

    def forward(self, tokens):
        b, t = tokens.shape
        x = self.norm(self.embed(tokens))
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        d = q.shape[-1] // self.heads
        q = q.view(b, t, self.heads, d).permute(0, 2, 1, 3)
        k = k.view(b, t, self.heads, d).permute(0, 2, 1, 3)
        v = v.view(b, t, self.heads, d).permute(0, 2, 1, 3)
        att = q @ k.transpose(-2, -1) / math.sqrt(d)
        causal = torch.tril(torch.ones(t, t)) == 0
        att = att.masked_fill(causal, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, -1)
        return self.out(y), att


torch.manual_seed(0)
model = TinyAttention(vocab=11, dim=8, heads=2)
print(model)
tokens = torch.randint(0, 11, (2, 5))
opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
for step in range(3):
    logits, att = model(tokens[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, 11), tokens[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"{step} {loss.item():.5f}")
print(att.shape, [round(v, 4) for v in att[0, 0, 1].tolist()])
print(f"{att[0, 1].sum(dim=-1).mean().item():.4f}", bool((att[0, 0].triu(1) == 0).all()))
print(sorted(n for n, _ in model.named_parameters()))
