# Sequence models as users train them: an Embedding -> 2-layer bidirectional LSTM (batch_first, dropout) -> Linear
# classifier on the final states with Adam and clip_grad_norm_; a GRUCell unrolled by hand on a sine wave; a
# 1.13 shape error caught and printed.
import tinyddp as torch
import tinyddp.nn as nn
import tinyddp.nn.functional as F


class Classifier(nn.Module):
    def __init__(self, vocab, dim, hidden, classes):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.lstm = nn.LSTM(dim, hidden, num_layers=2, batch_first=True, bidirectional=True, dropout=0.25)
        self.head = nn.Linear(2 * hidden, classes)

    def forward(self, tokens):
        out, (h_n, c_n) = self.lstm(self.embed(tokens))
        last = torch.cat([h_n[-2], h_n[-1]], dim=1)   # the top layer's forward and backward final states
        return self.head(last), out, h_n, c_n


torch.manual_seed(0)
model = Classifier(vocab=12, dim=6, hidden=8, classes=3)
print(model)
print(sum(p.numel() for p in model.parameters()), [n for n, _ in model.lstm.named_parameters()][:5])
tokens = torch.randint(0, 12, (4, 7))
labels = torch.randint(0, 3, (4,))
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(5):
    logits, out, h_n, c_n = model(tokens)
    loss = F.cross_entropy(logits, labels)
    opt.zero_grad()
    loss.backward()
    norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    print(f"step {step} loss {loss.item():.5f} grad norm {norm.item():.5f}")
print(out.shape, h_n.shape, c_n.shape)
model.eval()
with torch.no_grad():
    logits = model(tokens)[0]
print(logits.argmax(dim=1).tolist(), labels.tolist(), f"{logits.abs().sum().item():.4f}")

try:
    model.lstm(torch.zeros(4, 7, 5))
except RuntimeError as e:
    print("RuntimeError:", e)

torch.manual_seed(1)
cell, readout = nn.GRUCell(1, 5), nn.Linear(5, 1)
print(cell, readout)
wave = torch.sin(torch.arange(20) * 0.3).view(20, 1, 1)
opt = torch.optim.SGD(list(cell.parameters()) + list(readout.parameters()), lr=0.1, momentum=0.9)
for epoch in range(4):
    h, loss = None, 0.0
    for k in range(19):
        h = cell(wave[k], h)
        loss = loss + F.mse_loss(readout(h), wave[k + 1])
    loss = loss / 19
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"epoch {epoch} mse {loss.item():.5f}")
print(h.shape, f"{cell.weight_hh.grad.norm().item():.5f}")
