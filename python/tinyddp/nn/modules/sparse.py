"""torch.nn.Embedding (padding_idx, max_norm, scale_grad_by_freq, from_pretrained) over F.embedding and the
engine's embedding (engine/ops/index.cpp). The weight is drawn from N(0, 1) in place, as 1.13's
reset_parameters does (padding_idx's row then zeroed): a seed gives PyTorch's values."""
from tinyddp import _tensor
from tinyddp.autograd.grad_mode import no_grad
from tinyddp.nn import functional as F
from tinyddp.nn.modules.module import Module
from tinyddp.nn.parameter import Parameter


def _checked_padding_idx(padding_idx, num_embeddings, name):
    """padding_idx in [0, num_embeddings), a negative one counted from the end; 1.13's AssertionError (whose text
    spells the name `name`, as each 1.13 module does) outside [-num_embeddings, num_embeddings)."""
    if padding_idx is None:
        return None
    if padding_idx > 0:
        assert padding_idx < num_embeddings, f"{name} must be within num_embeddings"
    elif padding_idx < 0:
        assert padding_idx >= -num_embeddings, f"{name} must be within num_embeddings"
        padding_idx = num_embeddings + padding_idx
    return padding_idx


def _drawn_weight(num_embeddings, embedding_dim, padding_idx, dtype):
    """N(0, 1) drawn in place, as 1.13's init.normal_ (the weight leaves construction at version 1), with the
    padding row zeroed."""
    weight = Parameter(_tensor.empty(num_embeddings, embedding_dim, dtype=dtype))
    with no_grad():
        weight.normal_()
        if padding_idx is not None:
            weight[padding_idx].fill_(0)
    return weight


class Embedding(Module):
    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False, _weight=None, device=None, dtype=None):
        super().__init__()
        if sparse:
            raise NotImplementedError("Embedding(sparse=True): tinyddp has no sparse gradients; use sparse=False.")
        padding_idx = _checked_padding_idx(padding_idx, num_embeddings, "Padding_idx")
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx, self.max_norm, self.norm_type = padding_idx, max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            self.weight = _drawn_weight(num_embeddings, embedding_dim, padding_idx, dtype)
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError("Shape of weight does not match num_embeddings and embedding_dim")
            self.weight = Parameter(_weight)

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def reset_parameters(self):
        """1.13's: N(0, 1) in place, the padding row zeroed."""
        with no_grad():
            self.weight.normal_()
            if self.padding_idx is not None:
                self.weight[self.padding_idx].fill_(0)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse is not False:
            s += ", sparse=True"
        return s

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None, norm_type=2.,
                        scale_grad_by_freq=False, sparse=False):
        assert embeddings.dim() == 2, "Embeddings parameter is expected to be 2-dimensional"
        rows, cols = embeddings.shape
        embedding = cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings, padding_idx=padding_idx,
                        max_norm=max_norm, norm_type=norm_type, scale_grad_by_freq=scale_grad_by_freq,
                        sparse=sparse)
        embedding.weight.requires_grad = not freeze
        return embedding


class EmbeddingBag(Module):
    """Bags of embeddings reduced by mode over F.embedding_bag; the weight drawn as Embedding's."""

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2., scale_grad_by_freq=False,
                 mode="mean", sparse=False, _weight=None, include_last_offset=False, padding_idx=None, device=None,
                 dtype=None):
        super().__init__()
        if sparse:
            raise NotImplementedError("EmbeddingBag(sparse=True): tinyddp has no sparse gradients; use "
                                      "sparse=False.")
        padding_idx = _checked_padding_idx(padding_idx, num_embeddings, "padding_idx")
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type, self.scale_grad_by_freq = max_norm, norm_type, scale_grad_by_freq
        self.padding_idx = padding_idx
        if _weight is None:
            self.weight = _drawn_weight(num_embeddings, embedding_dim, padding_idx, dtype)
        else:
            self.weight = Parameter(_weight)
        self.mode, self.sparse, self.include_last_offset = mode, sparse, include_last_offset

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type, self.scale_grad_by_freq,
                               self.mode, self.sparse, per_sample_weights, self.include_last_offset,
                               self.padding_idx)

    def reset_parameters(self):
        """1.13's: N(0, 1) in place, the padding row zeroed."""
        with no_grad():
            self.weight.normal_()
            if self.padding_idx is not None:
                self.weight[self.padding_idx].fill_(0)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        s += f", mode={self.mode}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, max_norm=None, norm_type=2., scale_grad_by_freq=False,
                        mode="mean", sparse=False, include_last_offset=False, padding_idx=None):
        assert embeddings.dim() == 2, "Embeddings parameter is expected to be 2-dimensional"
        rows, cols = embeddings.shape
        bag = cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings, max_norm=max_norm,
                  norm_type=norm_type, scale_grad_by_freq=scale_grad_by_freq, mode=mode, sparse=sparse,
                  include_last_offset=include_last_offset, padding_idx=padding_idx)
        bag.weight.requires_grad = not freeze
        return bag
