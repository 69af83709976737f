# Packing variable-length batches for an RNN, and the mistakes around it, as 1.13 answers them: lengths of the
# wrong count, rank or order, zero lengths, an empty input; enforce_sorted=False with equal lengths (torch.sort's
# order); pad_sequence of an empty list, mismatched feature sizes or 0-dim tensors; and a packed LSTM round trip.
import tinyddp as torch
import tinyddp.nn as nn
from tinyddp.nn.utils.rnn import pack_padded_sequence, pack_sequence, pad_packed_sequence, pad_sequence


def attempt(label, fn):
    try:
        print(label, fn())
    except Exception as e:   # noqa: BLE001  (the error is what is compared)
        print(label, type(e).__name__, e)


x = torch.arange(24.).reshape(4, 3, 2)   # (B, T, F)
attempt("count", lambda: pack_padded_sequence(x, [3, 2], batch_first=True).batch_sizes)
attempt("count unsorted", lambda: pack_padded_sequence(torch.zeros(3, 2), [1, 2], batch_first=True).batch_sizes)
attempt("2-D lengths", lambda: pack_padded_sequence(torch.zeros(2, 3), torch.tensor([[3, 1]]), batch_first=True))
attempt("unsorted", lambda: pack_padded_sequence(x, [2, 3, 1, 1], batch_first=True))
attempt("zero length", lambda: pack_padded_sequence(x, [3, 2, 1, 0], batch_first=True))
attempt("empty", lambda: pack_padded_sequence(torch.zeros(0, 3, 2), [], batch_first=True))
attempt("float lengths", lambda: pack_padded_sequence(x, [3., 2., 2., 1.], batch_first=True).batch_sizes)
packed = pack_padded_sequence(x, torch.tensor([2, 3, 2, 3]), batch_first=True, enforce_sorted=False)
print(packed.sorted_indices, packed.unsorted_indices, packed.batch_sizes, packed.data[:, 0])
attempt("pad []", lambda: pad_sequence([]))
attempt("pad feature sizes", lambda: pad_sequence([torch.ones(2, 3), torch.ones(2, 4)]))
attempt("pad 0-dim", lambda: pad_sequence([torch.tensor(1.), torch.tensor(2.)]))
attempt("pad ok", lambda: pad_sequence([torch.ones(1, 2), torch.ones(3, 2) * 2], batch_first=True, padding_value=-1))
torch.manual_seed(0)
lstm = nn.LSTM(2, 3, batch_first=True)
out, (h, c) = lstm(packed)
padded, lengths = pad_packed_sequence(out, batch_first=True)
print(padded.shape, lengths, f"{padded.sum().item():.5f}", f"{h.sum().item():.5f}")
seqs = [torch.ones(3, 2), torch.ones(2, 2), torch.ones(1, 2)]
print(pack_sequence(seqs).batch_sizes, pack_sequence(seqs[::-1], enforce_sorted=False).sorted_indices)
