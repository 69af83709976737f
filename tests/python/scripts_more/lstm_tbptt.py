# A character-level LSTM language model trained with truncated backpropagation through time, as the classic word
# language model example does: the hidden state carried across batches and cut with detach_() (and repackaged
# with detach() in a helper), gradient clipping, perplexity, greedy generation in eval mode under no_grad.
import math

import tinyddp as torch
import tinyddp.nn as nn

torch.manual_seed(5)
text = "the quick brown fox jumps over the lazy dog " * 6
vocab = sorted(set(text))
stoi = {c: i for i, c in enumerate(vocab)}
data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
print(len(vocab), data.shape, data[:10])

batch_size, bptt = 4, 8
n = data.size(0) // batch_size
batches = data[: n * batch_size].view(batch_size, n).t().contiguous()   # (n, batch)
print(batches.shape)


class CharLM(nn.Module):
    def __init__(self, vocab_size, emb=16, hidden=32):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, emb)
        self.rnn = nn.LSTM(emb, hidden)
        self.head = nn.Linear(hidden, vocab_size)

    def forward(self, x, hidden):
        out, hidden = self.rnn(self.embed(x), hidden)
        return self.head(out), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(1, bsz, 32), weight.new_zeros(1, bsz, 32))


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


model = CharLM(len(vocab))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
for epoch in range(3):
    model.train()
    hidden = model.init_hidden(batch_size)
    total_loss, steps = 0.0, 0
    for i in range(0, batches.size(0) - 1, bptt):
        seq_len = min(bptt, batches.size(0) - 1 - i)
        inputs, targets = batches[i:i + seq_len], batches[i + 1:i + 1 + seq_len].reshape(-1)
        if epoch == 0:
            hidden = repackage_hidden(hidden)
        else:
            for h in hidden:
                h.detach_()
        model.zero_grad()
        logits, hidden = model(inputs, hidden)
        loss = criterion(logits.view(-1, len(vocab)), targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        optimizer.step()
        total_loss += loss.item()
        steps += 1
    avg = total_loss / steps
    print(f"epoch {epoch} loss {avg:.3f} ppl {math.exp(avg):.2f} hidden requires_grad {hidden[0].requires_grad}")

model.eval()
with torch.no_grad():
    hidden = model.init_hidden(1)
    x = torch.tensor([[stoi["t"]]])
    out = ["t"]
    for _ in range(20):
        logits, hidden = model(x, hidden)
        x = logits.argmax(dim=-1)
        out.append(vocab[x.item()])
print("".join(out))
print(hidden[0].shape, hidden[0].is_leaf, hidden[0].grad_fn)
