"""torch.nn.MultiheadAttention and the F.multi_head_attention_forward it runs, composed from linear, bmm and
softmax. 1.13 keeps the module in torch/nn/modules/activation.py and the function in nn.functional; here they are
one file of their own (re-exported by tinyddp.nn), next to the Transformer stacks that build on them."""
import math
import warnings

from tinyddp import _tensor
from tinyddp.nn import functional as F
from tinyddp.nn import init
from tinyddp.nn.modules.linear import Linear
from tinyddp.nn.modules.module import Module
from tinyddp.nn.parameter import Parameter

# L = target length, S = source length, N = batch, E = embed_dim, h = num_heads, d = E / h.


class NonDynamicallyQuantizableLinear(Linear):
    """A Linear under another name: 1.13's MultiheadAttention.out_proj, so reprs and type checks agree."""


def _attention_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """Whether the call is batched, with 1.13's AssertionErrors for inconsistent ranks."""
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError("For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError("For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but "
                                 f"found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError("For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
                                 f"found {attn_mask.dim()}-D tensor instead")
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError("For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError("For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D but "
                                 f"found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError("For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
                                     f"but found {attn_mask.dim()}-D tensor instead")
            if attn_mask.dim() == 3:
                expected = (num_heads, query.shape[0], key.shape[0])
                if tuple(attn_mask.shape) != expected:
                    raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}")
        return False
    raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D query "
                         "tensor")


def _as_bool_mask(mask, name):
    """uint8 masks are read as bool, with 1.13's deprecation warning."""
    if mask is not None and str(mask.dtype) == "torch.uint8":
        warnings.warn(f"Byte tensor for {name} in nn.MultiheadAttention is deprecated. Use bool tensor instead.")
        return mask.to(_tensor.bool)
    return mask


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, average_attn_weights=True):
    """1.13's F.multi_head_attention_forward on sequence-first (L, N, E) inputs, composed from linear, bmm and
    softmax: within float rounding of PyTorch (its baddbmm adds the mask inside the product, here after it)."""
    is_batched = _attention_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match value's "
                                 f"{value.shape[:2]}")
    elif key.shape != value.shape:
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")

    # In-projection: one linear when query, key and value are one tensor (self-attention), as 1.13's.
    if not use_separate_proj_weight:
        if key is value and query is key:
            q, k, v = F.linear(query, in_proj_weight, in_proj_bias).chunk(3, dim=-1)
        else:
            w_q, w_k, w_v = in_proj_weight.chunk(3)
            b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
            q = F.linear(query, w_q, b_q)
            if key is value:
                k, v = F.linear(key, _tensor.cat([w_k, w_v]), None if b_k is None else _tensor.cat([b_k, b_v])
                                ).chunk(2, dim=-1)
            else:
                k, v = F.linear(key, w_k, b_k), F.linear(value, w_v, b_v)
    else:
        b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        q, k, v = F.linear(query, q_proj_weight, b_q), F.linear(key, k_proj_weight, b_k), F.linear(value,
                                                                                                   v_proj_weight, b_v)

    attn_mask = _as_bool_mask(attn_mask, "attn_mask")
    src_len = key.shape[0]
    if attn_mask is not None:
        if not (attn_mask.is_floating_point() or attn_mask.dtype == _tensor.bool):
            raise AssertionError(f"Only float, byte, and bool types are supported for attn_mask, not "
                                 f"{attn_mask.dtype}")
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")
    key_padding_mask = _as_bool_mask(key_padding_mask, "key_padding_mask")

    if bias_k is not None and bias_v is not None:
        k = _tensor.cat([k, bias_k.repeat(1, bsz, 1)])
        v = _tensor.cat([v, bias_v.repeat(1, bsz, 1)])
        attn_mask = None if attn_mask is None else F.pad(attn_mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else F.pad(key_padding_mask, (0, 1))

    # (L, N, E) -> (N*h, L, d): each (batch, head) pair one bmm batch entry.
    q = q.contiguous().view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = k.contiguous().view(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    v = v.contiguous().view(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    if add_zero_attn:
        zeros = _tensor.zeros(bsz * num_heads, 1, head_dim, dtype=q.dtype)
        k = _tensor.cat([k, zeros], 1)
        v = _tensor.cat([v, zeros], 1)
        attn_mask = None if attn_mask is None else F.pad(attn_mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else F.pad(key_padding_mask, (0, 1))
    src_len = k.size(1)

    if key_padding_mask is not None:
        if tuple(key_padding_mask.shape) != (bsz, src_len):
            raise AssertionError(f"expecting key_padding_mask shape of {(bsz, src_len)}, but got "
                                 f"{key_padding_mask.shape}")
        key_padding_mask = key_padding_mask.view(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1).reshape(
            bsz * num_heads, 1, src_len)
        if attn_mask is None:
            attn_mask = key_padding_mask
        elif attn_mask.dtype == _tensor.bool:
            attn_mask = attn_mask.logical_or(key_padding_mask)
        else:
            attn_mask = attn_mask.masked_fill(key_padding_mask, float("-inf"))
    if attn_mask is not None and attn_mask.dtype == _tensor.bool:
        attn_mask = _tensor.zeros(tuple(attn_mask.shape), dtype=q.dtype).masked_fill(attn_mask, float("-inf"))
    if not training:
        dropout_p = 0.0

    q = q / math.sqrt(head_dim)
    scores = q.bmm(k.transpose(-2, -1))   # (N*h, L, S)
    if attn_mask is not None:
        scores = attn_mask + scores
    weights = F.softmax(scores, dim=-1)
    if dropout_p > 0.0:
        weights = F.dropout(weights, p=dropout_p)
    out = weights.bmm(v)   # (N*h, L, d)
    out = out.transpose(0, 1).contiguous().view(tgt_len * bsz, embed_dim)
    out = F.linear(out, out_proj_weight, out_proj_bias).view(tgt_len, bsz, -1)
    if need_weights:
        weights = weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.sum(dim=1) / num_heads
        if not is_batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights
    if not is_batched:
        out = out.squeeze(1)
    return out, None


class MultiheadAttention(Module):
    """1.13's MultiheadAttention on the composed multi_head_attention_forward above (no fused fast path: in eval
    mode PyTorch's fused kernel and this agree to float rounding). Parameters in 1.13's order and init: out_proj
    (a Linear, drawn when built), then xavier_uniform_ in_proj_weight (or q, k, v_proj_weight), zero biases,
    xavier_normal_ bias_k, bias_v; a seed gives PyTorch's values."""

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads, self.dropout, self.batch_first = num_heads, dropout, batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(_tensor.empty(embed_dim, embed_dim, dtype=dtype))
            self.k_proj_weight = Parameter(_tensor.empty(embed_dim, self.kdim, dtype=dtype))
            self.v_proj_weight = Parameter(_tensor.empty(embed_dim, self.vdim, dtype=dtype))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(_tensor.empty(3 * embed_dim, embed_dim, dtype=dtype))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(_tensor.empty(3 * embed_dim, dtype=dtype))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, dtype=dtype)
        if add_bias_kv:
            self.bias_k = Parameter(_tensor.empty(1, 1, embed_dim, dtype=dtype))
            self.bias_v = Parameter(_tensor.empty(1, 1, embed_dim, dtype=dtype))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True):
        if key_padding_mask is not None and not (key_padding_mask.dtype == _tensor.bool
                                                 or key_padding_mask.is_floating_point()):
            raise AssertionError("only bool and floating types of key_padding_mask are supported")
        is_batched = query.dim() == 3
        if self.batch_first and is_batched:
            # Transposed once per distinct tensor, so self-attention stays one in-projection.
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = query.transpose(1, 0), key.transpose(1, 0)
                    value = key
            else:
                query, key, value = query.transpose(1, 0), key.transpose(1, 0), value.transpose(1, 0)
        out, weights = multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias, self.bias_k,
            self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight, self.out_proj.bias,
            training=self.training, key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=not self._qkv_same_embed_dim, q_proj_weight=self.q_proj_weight,
            k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights)
        if self.batch_first and is_batched:
            return out.transpose(1, 0), weights
        return out, weights
