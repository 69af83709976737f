"""torch.nn.Embedding over the engine's embedding (engine/ops/index.cpp). The weight is drawn from N(0, 1) in
place, as 1.13's reset_parameters does: a seed gives PyTorch's values."""
from tinyddp import _tensor
from tinyddp.autograd.grad_mode import no_grad
from tinyddp.nn import functional as F
from tinyddp.nn.modules.module import Module
from tinyddp.nn.parameter import Parameter


class Embedding(Module):
    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False, _weight=None, device=None, dtype=None):
        super().__init__()
        if padding_idx is not None or max_norm is not None or scale_grad_by_freq or sparse:
            raise NotImplementedError("Embedding: padding_idx, max_norm, scale_grad_by_freq and sparse are not "
                                      "supported by tinyddp; use the defaults.")
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx, self.max_norm, self.norm_type = padding_idx, max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            # Drawn in place, as 1.13's init.normal_: the weight leaves construction at version 1.
            self.weight = Parameter(_tensor.empty(num_embeddings, embedding_dim, dtype=dtype))
            with no_grad():
                self.weight.normal_()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError("Shape of weight does not match num_embeddings and embedding_dim")
            self.weight = Parameter(_weight)

    def forward(self, input):
        return F.embedding(input, self.weight)

    def extra_repr(self):
        return f"{self.num_embeddings}, {self.embedding_dim}"
