"""torch.nn.utils.rnn: PackedSequence and the pack/pad helpers, composed from indexing and cat (so gradients flow to
the padded input, as 1.13's PackPaddedSequenceBackward0 does; the graph's node names differ).

T = longest length, B = batch. A PackedSequence holds the batch time step by time step, each step's sequences in
decreasing length order: data (sum of batch_sizes, *), batch_sizes (T,) int64 with batch_sizes[t] = how many
sequences are longer than t; sorted_indices maps the packed order to the caller's batch order (None when the
caller's batch was already sorted), unsorted_indices is its inverse.
"""
from collections import namedtuple

from tinyddp import _tensor

_PackedSequence = namedtuple("PackedSequence_", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


def invert_permutation(permutation):
    if permutation is None:
        return None
    inverse = [0] * permutation.numel()
    for position, index in enumerate(permutation.tolist()):
        inverse[index] = position
    return _tensor.tensor(inverse, dtype=permutation.dtype)


class PackedSequence(_PackedSequence):
    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:   # PackedSequence((data, batch_sizes)), as 1.13 accepts
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def _with_data(self, data):
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        return self if data is self.data else self._with_data(data)

    def cpu(self, *args, **kwargs):
        return self

    def double(self):
        return self.to(dtype=_tensor.float64)

    def float(self):
        return self.to(dtype=_tensor.float32)

    @property
    def is_cuda(self):
        return False

    def is_pinned(self):
        return False


def _lengths_list(lengths):
    return [int(n) for n in (lengths.tolist() if isinstance(lengths, _tensor.Tensor) else lengths)]


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """input (T, B, *) (or (B, T, *) with batch_first), lengths of the B sequences -> PackedSequence; 1.13's
    checks in its order (the lengths' rank, an empty input, their count, a non-positive length, their order), and
    with enforce_sorted=False its descending sort (torch.sort's order among equal lengths)."""
    if not isinstance(lengths, _tensor.Tensor):
        lengths = _tensor.tensor(lengths)
    lengths = lengths.to(_tensor.int64)
    sorted_indices = None
    if not enforce_sorted:
        lengths, sorted_indices = lengths.sort(descending=True)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    if batch_first:
        input = input.transpose(0, 1)
    if lengths.dim() != 1:
        raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got {lengths.dim()}D cpu Long "
                           "tensor")
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    lengths = lengths.tolist()
    if len(lengths) != input.size(1):
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(lengths)} "
                           f"(batch_size={input.size(1)})")
    if lengths[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' that "
                           "is <= 0")
    if any(a < b for a, b in zip(lengths, lengths[1:])):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
                           "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to "
                           "sidestep this requirement if you do not need ONNX exportability.")
    batch_sizes = [sum(1 for n in lengths if n > t) for t in range(lengths[0])]
    data = _tensor.cat([input[t, :bs] for t, bs in enumerate(batch_sizes)], 0)
    return PackedSequence(data, _tensor.tensor(batch_sizes, dtype=_tensor.int64), sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """PackedSequence -> (padded (T, B, *) or (B, T, *), lengths in the caller's batch order)."""
    batch_sizes = _lengths_list(sequence.batch_sizes)
    max_len = len(batch_sizes)
    if total_length is not None:
        if total_length < max_len:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, but "
                             f"got total_length={total_length} and max sequence length being {max_len}")
    else:
        total_length = max_len
    data = sequence.data
    batch = batch_sizes[0] if batch_sizes else 0
    feature = tuple(data.shape[1:])
    rows, start = [], 0
    for bs in batch_sizes:
        step = data[start:start + bs]
        start += bs
        if bs < batch:
            step = _tensor.cat([step, _tensor.full((batch - bs,) + feature, padding_value, dtype=data.dtype)], 0)
        rows.append(step)
    for _ in range(total_length - max_len):
        rows.append(_tensor.full((batch,) + feature, padding_value, dtype=data.dtype))
    padded = _tensor.stack(rows, 0)   # (T, B, *) in packed (sorted) order
    lengths = [sum(1 for bs in batch_sizes if bs > b) for b in range(batch)]
    lengths = _tensor.tensor(lengths, dtype=_tensor.int64)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(1, sequence.unsorted_indices)
        lengths = lengths.index_select(0, sequence.unsorted_indices)
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0):
    """A list of (L_i, *) tensors -> (max L, B, *) (or (B, max L, *)), each padded at its end."""
    if isinstance(sequences, _tensor.Tensor):
        sequences = sequences.unbind(0)
    if len(sequences) == 0:   # 1.13's checks, in its words
        raise RuntimeError("received an empty list of sequences")
    if any(s.dim() == 0 for s in sequences):
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    from tinyddp._tensor_forms import _broadcast_shape
    trailing = list(sequences[0].shape[1:])
    for s in sequences:   # each is copied into a (length, *trailing) slice of the result
        _broadcast_shape([s.size(0)] + trailing, list(s.shape))
    max_len = max(s.size(0) for s in sequences)
    padded = []
    for s in sequences:
        if s.size(0) < max_len:
            fill = _tensor.full((max_len - s.size(0),) + tuple(s.shape[1:]), padding_value, dtype=s.dtype)
            s = _tensor.cat([s, fill], 0)
        padded.append(s)
    return _tensor.stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:n] for seq, n in zip(padded_sequences, _lengths_list(lengths))]


def pack_sequence(sequences, enforce_sorted=True):
    lengths = _tensor.tensor([s.size(0) for s in sequences], dtype=_tensor.int64)
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
