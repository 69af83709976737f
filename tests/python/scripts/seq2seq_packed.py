# A GRU encoder over padded, packed variable-length batches (pack_padded_sequence with enforce_sorted=False,
# pad_packed_sequence), a GRU decoder with teacher forcing and dot-product attention over the encoder states;
# then an LSTM language model trained with truncated backpropagation (the hidden state detached between chunks).
import tinyddp as torch
import tinyddp.nn as nn
import tinyddp.nn.functional as F
from tinyddp.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence


class Seq2Seq(nn.Module):
    def __init__(self, vocab, dim, hidden):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.encoder = nn.GRU(dim, hidden, batch_first=True, bidirectional=True)
        self.bridge = nn.Linear(2 * hidden, hidden)
        self.decoder = nn.GRU(dim, hidden, batch_first=True)
        self.attn_proj = nn.Linear(2 * hidden, hidden)
        self.out = nn.Linear(2 * hidden, vocab)

    def forward(self, src, lengths, tgt_in):
        packed = pack_padded_sequence(self.embed(src), lengths, batch_first=True, enforce_sorted=False)
        enc_packed, h_n = self.encoder(packed)
        enc, _ = pad_packed_sequence(enc_packed, batch_first=True)                    # (B, S, 2H)
        h0 = torch.tanh(self.bridge(torch.cat([h_n[0], h_n[1]], dim=1))).unsqueeze(0)
        dec, _ = self.decoder(self.embed(tgt_in), h0)                                   # (B, T, H)
        scores = dec @ self.attn_proj(enc).transpose(1, 2)                              # (B, T, S)
        pad = torch.arange(enc.size(1)).unsqueeze(0) >= lengths.unsqueeze(1)
        weights = F.softmax(scores.masked_fill(pad.unsqueeze(1), float("-inf")), dim=-1)
        return self.out(torch.cat([dec, weights @ self.attn_proj(enc)], dim=-1)), weights


torch.manual_seed(0)
model = Seq2Seq(vocab=9, dim=5, hidden=6)
print(model)
lengths = torch.tensor([3, 5, 2, 4])
src = pad_sequence([torch.randint(1, 9, (int(n),)) for n in lengths], batch_first=True)
print(src.shape, src[2].tolist())
tgt = torch.randint(1, 9, (4, 4))
opt = torch.optim.Adam(model.parameters(), lr=2e-2)
for step in range(4):
    logits, weights = model(src, lengths, tgt[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, 9), tgt[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"step {step} loss {loss.item():.5f}")
print(weights.shape, [round(v, 4) for v in weights[2, 0].tolist()])
packed = pack_padded_sequence(torch.zeros(4, 5, 1), lengths, batch_first=True, enforce_sorted=False)
print(packed.batch_sizes, packed.sorted_indices, packed.unsorted_indices)


class LanguageModel(nn.Module):
    def __init__(self, vocab, dim, hidden):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.lstm = nn.LSTM(dim, hidden, num_layers=2, dropout=0.2)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, tokens, hidden=None):
        out, hidden = self.lstm(self.embed(tokens), hidden)
        return self.head(out), hidden


torch.manual_seed(3)
lm = LanguageModel(vocab=7, dim=4, hidden=8)
stream = torch.randint(0, 7, (25, 2))   # (time, batch)
opt = torch.optim.SGD(lm.parameters(), lr=0.5)
hidden = None
for start in range(0, 24, 6):
    chunk, target = stream[start:start + 6], stream[start + 1:start + 7]
    if hidden is not None:
        hidden = tuple(h.detach() for h in hidden)
    logits, hidden = lm(chunk, hidden)
    loss = F.cross_entropy(logits.reshape(-1, 7), target.reshape(-1))
    opt.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(lm.parameters(), 0.5)
    opt.step()
    print(f"chunk {start // 6} loss {loss.item():.5f} h {hidden[0].shape} requires_grad {hidden[0].requires_grad}")
