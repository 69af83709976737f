# Text and sequence utilities as NLP scripts use them: nn.Embedding with padding_idx (zero row, no gradient) and
# max_norm (rows renormalised in place on lookup), from_pretrained(freeze=...), pad_sequence (batch_first and a
# padding_value), pack_padded_sequence / pad_packed_sequence around a GRU (sorted and unsorted lengths,
# total_length), pack_sequence, a TransformerEncoder with src_key_padding_mask in eval, F.cross_entropy with
# ignore_index, label_smoothing and class weights, and a top-k accuracy.
import tinyddp as torch
import tinyddp.nn as nn
import tinyddp.nn.functional as F
from tinyddp.nn.utils.rnn import pack_padded_sequence, pack_sequence, pad_packed_sequence, pad_sequence

torch.manual_seed(0)
emb = nn.Embedding(10, 4, padding_idx=0)
print(emb, emb.weight[0])
ids = torch.tensor([[1, 2, 0], [3, 0, 0]])
out = emb(ids)
out.sum().backward()
print("pad grad:", emb.weight.grad[0], "row 1 grad:", emb.weight.grad[1])
capped = nn.Embedding(6, 3, max_norm=1.0)
before = capped.weight.detach().norm(dim=1)
looked = capped(torch.tensor([1, 1, 4]))
after = capped.weight.detach().norm(dim=1)
print("norms before:", before)
print("norms after:", after)
print("looked-up norms:", looked.norm(dim=1))
torch.manual_seed(3)
table = torch.randn(6, 4)
rows = F.embedding(torch.tensor([[0, 2], [5, 2]]), table, max_norm=1.5)
print("renormed rows (exact):", rows.norm(dim=-1).tolist(), table[2].tolist())
pre = nn.Embedding.from_pretrained(torch.tensor([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]))
print(pre, pre.weight.requires_grad, pre(torch.tensor([2, 0])))
pre2 = nn.Embedding.from_pretrained(torch.eye(3), freeze=False, padding_idx=1)
print(pre2.weight.requires_grad, pre2.padding_idx)
try:
    emb(torch.tensor([10]))
except IndexError as e:
    print("IndexError:", e)
try:
    nn.Embedding(5, 2, padding_idx=5)
except AssertionError as e:
    print("AssertionError:", e)

seqs = [torch.tensor([5, 6, 7]), torch.tensor([8]), torch.tensor([1, 2])]
print(pad_sequence(seqs))
print(pad_sequence(seqs, batch_first=True, padding_value=-1))
lengths = torch.tensor([len(s) for s in seqs])
padded = pad_sequence(seqs, batch_first=True)

torch.manual_seed(1)
vocab = nn.Embedding(10, 4, padding_idx=0)
gru = nn.GRU(4, 5, batch_first=True)
packed = pack_padded_sequence(vocab(padded), lengths, batch_first=True, enforce_sorted=False)
print("batch_sizes:", packed.batch_sizes, "sorted:", packed.sorted_indices, "unsorted:", packed.unsorted_indices)
out_packed, h = gru(packed)
unpacked, out_lens = pad_packed_sequence(out_packed, batch_first=True, total_length=4)
print("unpacked:", tuple(unpacked.shape), out_lens)
print("padding stays zero:", unpacked[1, 1:].abs().sum().item(), unpacked[2, 2:].abs().sum().item())
print("last state == h:", torch.allclose(unpacked[0, 2], h[0, 0]), torch.allclose(unpacked[1, 0], h[0, 1]))
print("h: %.5f" % h.sum().item())
try:
    pack_padded_sequence(vocab(padded), lengths, batch_first=True)
except RuntimeError as e:
    print("RuntimeError:", e)
ps = pack_sequence([torch.tensor([1.0, 2.0, 3.0]), torch.tensor([4.0, 5.0])])
print(ps.data, ps.batch_sizes)
print(pad_packed_sequence(ps))

torch.manual_seed(2)
layer = nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0, batch_first=True)
enc = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
x = torch.randn(2, 4, 8)
mask = torch.tensor([[False, False, False, True], [False, False, True, True]])
enc.eval()
with torch.no_grad():
    y = enc(x, src_key_padding_mask=mask)
    y2 = enc(torch.cat([x[:, :2], torch.randn(2, 2, 8)], dim=1), src_key_padding_mask=mask)
print("encoded:", tuple(y.shape), "%.5f" % y[~mask].abs().sum().item())
print("masked keys ignored:", torch.allclose(y[1, :2], y2[1, :2], atol=1e-6))

logits = torch.randn(6, 5, requires_grad=True)
target = torch.tensor([0, 4, -100, 2, 2, 1])
print("ce ignore: %.5f" % F.cross_entropy(logits, target).item())
print("ce ignore 2: %.5f" % F.cross_entropy(logits, target.clamp(min=0), ignore_index=2).item())
print("ce smooth: %.5f" % F.cross_entropy(logits, target, label_smoothing=0.1).item())
w = torch.tensor([1.0, 2.0, 0.5, 1.0, 3.0])
print("ce weight+smooth: %.5f" % F.cross_entropy(logits, target, weight=w, label_smoothing=0.2).item())
print("ce sum/none:", "%.5f" % F.cross_entropy(logits, target, reduction="sum").item(),
      F.cross_entropy(logits, target, reduction="none").detach())
probs = F.softmax(logits.detach(), dim=1)
print("ce soft targets: %.5f" % F.cross_entropy(logits, probs).item())
F.cross_entropy(logits, target, label_smoothing=0.1).backward()
print("ignored row grad:", logits.grad[2])
print(nn.CrossEntropyLoss(ignore_index=3, label_smoothing=0.05))
allignored = F.cross_entropy(logits, torch.full((6,), -100))
print("all ignored:", allignored)

scores = torch.tensor([[0.1, 0.5, 0.2, 0.2], [0.7, 0.1, 0.1, 0.1], [0.2, 0.2, 0.5, 0.1]])
labels = torch.tensor([2, 0, 3])
top2 = scores.topk(2, dim=1)
print(top2)
correct = top2.indices.eq(labels.view(-1, 1)).any(dim=1)
print("top-2 acc:", correct.float().mean().item(), "top-1 acc:", (scores.argmax(1) == labels).float().mean().item())
