# A tiny Transformer sequence classifier as tutorials write it: token and sinusoidal position embeddings,
# nn.TransformerEncoder (batch_first) with a padding mask, mean pooling over real tokens, label smoothing,
# AdamW with a linear warm-up in LambdaLR, gradient clipping, eval with inference_mode, and the model's size.
import math

import tinyddp as torch
import tinyddp.nn as nn

torch.manual_seed(2)
vocab, d_model, max_len, pad = 20, 16, 10, 0


def batch(n):
    lengths = torch.randint(3, max_len + 1, (n,))
    tokens = torch.randint(1, vocab, (n, max_len))
    mask = torch.arange(max_len).unsqueeze(0) >= lengths.unsqueeze(1)   # True = padding
    tokens = tokens.masked_fill(mask, pad)
    labels = ((tokens == 3).sum(1) > 0).long()
    return tokens, mask, labels


class PositionalEncoding(nn.Module):
    def __init__(self, d, n):
        super().__init__()
        pos = torch.arange(n).unsqueeze(1)
        div = torch.exp(torch.arange(0, d, 2) * (-math.log(10000.0) / d))
        pe = torch.zeros(n, d)
        pe[:, 0::2] = torch.sin(pos * div)
        pe[:, 1::2] = torch.cos(pos * div)
        self.register_buffer("pe", pe.unsqueeze(0))

    def forward(self, x):
        return x + self.pe[:, : x.size(1)]


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model, padding_idx=pad)
        self.pos = PositionalEncoding(d_model, max_len)
        layer = nn.TransformerEncoderLayer(d_model, nhead=2, dim_feedforward=32, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2)
        self.head = nn.Linear(d_model, 2)

    def forward(self, tokens, pad_mask):
        h = self.encoder(self.pos(self.embed(tokens) * math.sqrt(d_model)), src_key_padding_mask=pad_mask)
        keep = (~pad_mask).unsqueeze(-1).float()
        return self.head((h * keep).sum(1) / keep.sum(1))


model = Classifier()
print(sum(p.numel() for p in model.parameters()), len(list(model.encoder.layers)))
opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
warmup = 5
sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: min(1.0, (step + 1) / warmup))
criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
for step in range(12):
    tokens, mask, labels = batch(16)
    model.train()
    opt.zero_grad()
    loss = criterion(model(tokens, mask), labels)
    loss.backward()
    norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    sched.step()
    if step % 3 == 0:
        print(f"step {step} loss {loss.item():.4f} grad norm {norm.item():.3f} lr {sched.get_last_lr()[0]:.5f}")

model.eval()
tokens, mask, labels = batch(32)
with torch.inference_mode():
    logits = model(tokens, mask)
acc = (logits.argmax(-1) == labels).float().mean()
print(f"eval acc {acc.item():.4f}", logits.shape, logits.is_inference())
print(model.encoder.layers[0].self_attn)
