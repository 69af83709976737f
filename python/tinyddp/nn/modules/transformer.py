"""torch.nn.Transformer, TransformerEncoder(Layer) and TransformerDecoder(Layer), composed from MultiheadAttention,
Linear, LayerNorm and Dropout: submodules built (and so drawn from the generator) in 1.13's order, so a seed gives
PyTorch's weights; outputs and gradients agree to float rounding (PyTorch's fused eval-mode kernels are not used).

S = source length, T = target length, N = batch, E = d_model; sequence-first (S, N, E) unless batch_first.

Note [1.13's nested-tensor encoder]: in eval mode, without gradients, with batch_first and a
src_key_padding_mask, 1.13's TransformerEncoder packs the batch as a nested tensor and pads it back at the end:
padded positions come out as zeros and the output is trimmed to the longest unpadded row. tinyddp computes the same
values with the mask and then zeroes and trims, under the same conditions, with 1.13's one-time warning.
"""
import copy
import warnings

from tinyddp import _tensor
from tinyddp.autograd.grad_mode import is_grad_enabled
from tinyddp.nn import functional as F
from tinyddp.nn import init
from tinyddp.nn.modules.activation import GELU, ReLU
from tinyddp.nn.modules.attention import MultiheadAttention
from tinyddp.nn.modules.container import ModuleList
from tinyddp.nn.modules.dropout import Dropout
from tinyddp.nn.modules.linear import Linear
from tinyddp.nn.modules.module import Module
from tinyddp.nn.modules.normalization import LayerNorm

_nested_warned = False


def _get_clones(module, n):
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


def _get_activation_fn(activation):
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _check_padding_mask(mask):
    if mask is not None and not (mask.dtype == _tensor.bool or mask.is_floating_point()):
        raise AssertionError("only bool and floating types of key_padding_mask are supported")


class TransformerEncoderLayer(Module):
    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, device=None, dtype=None):
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first, dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        if activation is F.relu or isinstance(activation, ReLU):
            self.activation_relu_or_gelu = 1
        elif activation is F.gelu or isinstance(activation, GELU):
            self.activation_relu_or_gelu = 2
        else:
            self.activation_relu_or_gelu = 0
        self.activation = activation

    def forward(self, src, src_mask=None, src_key_padding_mask=None):
        _check_padding_mask(src_key_padding_mask)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerDecoderLayer(Module):
    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, device=None, dtype=None):
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first, dtype=dtype)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first,
                                                 dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, dtype=dtype)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        self.activation = activation

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerEncoder(Module):
    """num_layers deep copies of encoder_layer (all starting from its weights, as 1.13's), then norm if given."""

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True):
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers, self.norm = num_layers, norm
        self.enable_nested_tensor, self.mask_check = enable_nested_tensor, mask_check

    def _nested_lengths(self, src, mask, src_key_padding_mask):
        """The unpadded length of each row where 1.13 would pack src as a nested tensor (Note [1.13's
        nested-tensor encoder]), else None."""
        first = self.layers[0] if len(self.layers) else None
        if not (self.enable_nested_tensor and src_key_padding_mask is not None and mask is None
                and isinstance(first, TransformerEncoderLayer) and src.dim() == 3):
            return None
        attn = first.self_attn
        if (first.norm_first or first.training or not attn.batch_first or not attn._qkv_same_embed_dim
                or not first.activation_relu_or_gelu or first.norm1.eps != first.norm2.eps
                or attn.num_heads % 2 == 1 or attn.in_proj_bias is None):
            return None
        if is_grad_enabled() and (src.requires_grad or any(p.requires_grad for p in first.parameters())):
            return None
        # A float mask's zeros are kept, its other entries padded, as 1.13 reads it.
        keep = src_key_padding_mask == 0 if src_key_padding_mask.is_floating_point() else \
            src_key_padding_mask.logical_not()
        lengths = [int(n) for n in keep.sum(1).tolist()]
        if self.mask_check:
            for row, n in zip(keep.tolist(), lengths):
                if not all(row[:n]):   # padding not only at the end: 1.13 keeps the dense path
                    return None
        return lengths

    def forward(self, src, mask=None, src_key_padding_mask=None):
        _check_padding_mask(src_key_padding_mask)
        lengths = self._nested_lengths(src, mask, src_key_padding_mask)
        if lengths is not None:
            global _nested_warned
            if not _nested_warned:
                _nested_warned = True
                warnings.warn("The PyTorch API of nested tensors is in prototype stage and will change in the near "
                              "future. (Triggered internally at  ./aten/src/ATen/NestedTensorImpl.cpp:175.)")
            # The packed rows are each row's first `length` positions, wherever the mask said the padding was.
            positions = _tensor.arange(src.size(1)).unsqueeze(0)
            src_key_padding_mask = positions >= _tensor.tensor(lengths).unsqueeze(1)
        output = src
        for mod in self.layers:
            output = mod(output, src_mask=mask, src_key_padding_mask=src_key_padding_mask)
        if self.norm is not None:
            output = self.norm(output)
        if lengths is not None:
            output = output.masked_fill(src_key_padding_mask.unsqueeze(-1), 0.0)[:, :max(lengths)]
        return output


class TransformerDecoder(Module):
    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers, self.norm = num_layers, norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None):
        output = tgt
        for mod in self.layers:
            output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                         tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask)
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    """Encoder and decoder stacks, each with a final LayerNorm; then every parameter of rank > 1 redrawn with
    xavier_uniform_ in parameters() order, as 1.13's."""

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048,
                 dropout=0.1, activation=F.relu, custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, device=None, dtype=None):
        super().__init__()
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            encoder_layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                                    layer_norm_eps, batch_first, norm_first, dtype=dtype)
            encoder_norm = LayerNorm(d_model, eps=layer_norm_eps, dtype=dtype)
            self.encoder = TransformerEncoder(encoder_layer, num_encoder_layers, encoder_norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            decoder_layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                                    layer_norm_eps, batch_first, norm_first, dtype=dtype)
            decoder_norm = LayerNorm(d_model, eps=layer_norm_eps, dtype=dtype)
            self.decoder = TransformerDecoder(decoder_layer, num_decoder_layers, decoder_norm)
        self._reset_parameters()
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None):
        is_batched = src.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if is_batched and src.size(batch_dim) != tgt.size(batch_dim):
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.size(-1) != self.d_model or tgt.size(-1) != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask)

    @staticmethod
    def generate_square_subsequent_mask(sz, device="cpu"):
        """(sz, sz) float mask: -inf above the diagonal (a position sees itself and earlier ones), 0 elsewhere."""
        return _tensor.full((sz, sz), float("-inf")).triu(1)

    def _reset_parameters(self):
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)
