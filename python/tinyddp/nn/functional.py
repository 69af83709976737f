"""torch.nn.functional: the engine's activations and losses (engine/ops/ops.h), PyTorch's names and defaults;
the convolutions, pooling, padding and resampling are nn/_spatial.py's, re-exported here."""
import builtins
import functools
import inspect
import math
import warnings

from tinyddp import _C, _tensor
from tinyddp._node import recorded


def linear(input, weight, bias=None):
    if bias is None and isinstance(input, _tensor.Tensor) and isinstance(weight, _tensor.Tensor) and \
            input.dtype is not weight.dtype and input.is_floating_point() and weight.is_floating_point():
        from tinyddp._tensor_reduce import scalar_name   # 1.13's matmul of input and weight.t() says so
        raise RuntimeError(f"expected scalar type {scalar_name(input.dtype)} but found {scalar_name(weight.dtype)}")
    return _C._nn.linear(input, weight, bias)


def relu(input, inplace=False):
    return _C._nn.relu(input)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """x for x > 0, else negative_slope * x (the gradient there negative_slope, at 0 too, as PyTorch's): x times
    a 0/1 mask blended with the slope, so the values are PyTorch's bits (LeakyReluBackward0)."""
    def composed():
        positive = (input > 0).to(input.dtype)
        return input * (positive + (1 - positive) * negative_slope)
    return recorded("LeakyReluBackward0", [input], composed)


def _check_gelu_approximate(approximate):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")


def gelu(input, approximate="none"):
    """x/2 (1 + erf(x / sqrt 2)), or with approximate='tanh' x/2 (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))),
    composed of engine ops: the values within float rounding of PyTorch's fused kernel (whose vectorized erf is
    a polynomial of its own), recorded as GeluBackward0."""
    _check_gelu_approximate(approximate)
    return recorded("GeluBackward0", [input], lambda: _gelu(input, approximate))


def _gelu(input, approximate):
    if approximate == "none":
        return input * 0.5 * ((input * 0.7071067811865476).erf() + 1)   # 1 / sqrt(2)
    inner = (input + input * input * input * 0.044715) * 0.7978845608028654   # sqrt(2 / pi)
    return input * 0.5 * (inner.tanh() + 1)


def _tanh(input):   # nn.Tanh's (1.13's module calls torch.tanh, without the warning below)
    return _C._nn.tanh(input)


def _sigmoid(input):
    return _C._nn.sigmoid(input)


def tanh(input):
    warnings.warn("nn.functional.tanh is deprecated. Use torch.tanh instead.")
    return _tanh(input)


def sigmoid(input):
    warnings.warn("nn.functional.sigmoid is deprecated. Use torch.sigmoid instead.")
    return _sigmoid(input)


def _softmax_dim(name, ndim, stacklevel):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X as "
                  "an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def _integral_softmax(input, dim, name):
    """1.13 on an integer or bool input: the dim checked, an empty result for an empty input (no kernel runs), else
    the missing kernel's error (the last-dim kernel's name for the last dim of a tensor or a 0-dim one)."""
    from tinyddp._tensor import _wrap_dim
    from tinyddp._tensor_reduce import scalar_name
    d = _wrap_dim(dim, input.dim())
    if input.numel() == 0:
        return input.clone()
    kernel = f"{name}_lastdim_kernel_impl" if d == builtins.max(input.dim() - 1, 0) else "softmax_kernel_impl"
    raise RuntimeError(f'"{kernel}" not implemented for \'{scalar_name(input.dtype)}\'')


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim("log_softmax", input.dim(), _stacklevel)
    if dtype is not None:
        input = input.to(dtype)
    if not input.is_floating_point():
        return _integral_softmax(input, dim, "log_softmax")
    return _C._nn.log_softmax(input, dim)


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim("softmax", input.dim(), _stacklevel)
    if dtype is not None:
        input = input.to(dtype)
    if not input.is_floating_point():
        return _integral_softmax(input, dim, "softmax")
    return _C._nn.softmax(input, dim)


def dropout(input, p=0.5, training=True, inplace=False):
    """Zeroes each element with probability p and scales the others by 1/(1-p); the input itself in eval mode
    or for p=0, as PyTorch's. The mask is PyTorch's draw, element for element (bernoulli_(1 - p), then divided
    by 1 - p), so a seed drops the same elements; the graph is input * mask (MulBackward0, as PyTorch's)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0 or input.numel() == 0:
        return input
    if not input.is_floating_point():
        name = {"int64": "Long", "bool": "Bool"}.get(str(input.dtype)[len("torch."):], str(input.dtype))
        raise RuntimeError(f"result type Float can't be cast to the desired output type {name}")
    if p == 1:   # every element drops; 1/(1-p) would make 0 * inf = nan
        mask = _tensor.zeros((), dtype=input.dtype)
    else:
        mask = _tensor.empty(input.shape, dtype=input.dtype).bernoulli_(1 - p) / (1 - p)
    return input.mul_(mask) if inplace else input * mask


def _legacy_reduction(size_average, reduce, reduction, stacklevel=3):
    """1.13's reading of the deprecated size_average and reduce (either set overrides reduction), with its
    warning."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    out = ("mean" if size_average else "sum") if reduce else "none"
    warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{out}' instead.",
                  stacklevel=stacklevel)
    return out


def _warn_target_size(input, target):
    if target.shape != input.shape:
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
                      "same size.", stacklevel=3)


def _dtype_mismatch(input, target):
    """1.13's TensorIterator text for a target whose dtype is not the input's, where a loss kernel iterates over
    both without promoting them."""
    from tinyddp._tensor_reduce import scalar_name
    return RuntimeError(f"Found dtype {scalar_name(target.dtype)} but expected {scalar_name(input.dtype)}")


def _loss_failing_backward(node, input, target, loss_of, result_dtype):
    """A loss whose 1.13 kernel takes a target of another dtype forward (computing in the promoted dtype, giving
    result_dtype) but whose backward kernel refuses it: the value, recorded as `node`, whose backward raises
    "Found dtype Double but expected Float" (a float64 or int64 target, e.g. from NumPy, against a float32
    model)."""
    from tinyddp._aliases import promote_types
    from tinyddp._tensor_reduce import _failing_backward
    from tinyddp.autograd.grad_mode import no_grad
    common = promote_types(input.dtype, target.dtype)
    with no_grad():
        value = loss_of(input.to(common), target.to(common)).to(result_dtype)
    if not (_C.is_grad_enabled() and input.requires_grad):
        return value
    error = _dtype_mismatch(input, target)
    return recorded(node, [input, target], lambda: _failing_backward(input, (value,), error)[0])


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """mean((input - target)^2) by the engine's kernel; 'sum' and 'none' composed of engine ops."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _warn_target_size(input, target)
    if not input.is_floating_point() and not target.is_floating_point():
        from tinyddp._aliases import promote_types
        from tinyddp._tensor_reduce import scalar_name
        raise RuntimeError(f"\"mse_cpu\" not implemented for '{scalar_name(promote_types(input.dtype, target.dtype))}'")
    if target.dtype is not input.dtype:   # 1.13: the promoted value, then "Found dtype ..." in the backward
        from tinyddp._aliases import promote_types
        return _loss_failing_backward("MseLossBackward0", input, target,
                                      lambda x, y: _reduce((x - y) * (x - y), reduction),
                                      promote_types(input.dtype, target.dtype))
    if reduction == "mean":
        if target.shape != input.shape:   # 1.13 broadcasts them (after the warning above), then its kernel
            from tinyddp._tensor_shape import broadcast_tensors
            input, target = broadcast_tensors(input, target)
        return _C._nn.mse_loss(input, target)
    def composed():
        d = input - target
        return _reduce(d * d, reduction)
    return recorded("MseLossBackward0", [input, target], composed)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """|input - target| reduced, PyTorch's composition (its grad_fn is MeanBackward0 there too)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _warn_target_size(input, target)
    return _reduce((input - target).abs(), reduction)


def _class_weights(weight, target, valid, dtype):
    """Each target's class weight (1 without `weight`), 0 where the target is ignored."""
    if weight is None:
        return valid.to(dtype)
    picked = weight.index_select(0, _pick(valid, target, target * 0).reshape([-1])).reshape(list(target.shape))
    return _pick(valid, picked, picked * 0)


def _check_nll(input, target, weight):
    """1.13's checks of nll_loss_nd and the kernel it reaches (nll_loss for 1-D and 2-D input, nll_loss2d for
    4-D, and for 3-D or more than 4 dims nll_loss2d of the (N, C, 1, -1) view), in its order and words; then
    the target's dtype."""
    from tinyddp._tensor_reduce import scalar_name
    if input.dim() < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {input.dim()})")
    if input.dim() != 1 and (target.dim() == 0 or input.shape[0] != target.shape[0]):
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                         f"({target.shape[0] if target.dim() else 1}).")
    shape, tshape = list(input.shape), list(target.shape)
    if input.dim() <= 2:
        if target.dim() > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if not (input.dim() == 1 and target.dim() == 0) and shape[0] != (tshape[0] if tshape else 1):
            raise RuntimeError(f"size mismatch (got input: {shape}, target: {tshape})")
        if weight is not None and (weight.dim() != 1 or weight.numel() != shape[-1]):
            raise RuntimeError(f"weight tensor should be defined either for all {shape[-1]} classes or no classes but "
                               f"got weight tensor of shape: {list(weight.shape)}")
    else:
        if input.dim() != 4 and tshape[1:] != shape[2:]:
            raise RuntimeError(f"Expected target size {[shape[0]] + shape[2:]}, got {tshape}")
        if input.dim() == 4 and target.dim() != 3:
            raise RuntimeError(f"only batches of spatial targets supported (3D tensors) but got targets of dimension: "
                               f"{target.dim()}")
        if weight is not None and weight.numel() != shape[1]:
            raise RuntimeError("weight tensor should be defined either for all or no classes")
        if input.dim() == 4 and tshape[1:] != shape[2:]:   # 1.13's text has no closing parenthesis
            raise RuntimeError(f"size mismatch (got input: {shape} , target: {tshape}")
    if target.dtype is not _tensor.int64:
        raise RuntimeError(f"expected scalar type Long but found {scalar_name(target.dtype)}")


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """-input[n, target[n]] weighted by the target's class weight; 'mean' divides by the sum of the weights of the
    targets not ignored. The plain mean over (N, C) input is the engine's kernel; the rest composed of engine ops
    (a gather over the class dim, 1 for (C,) input)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    _check_nll(input, target, weight)
    if weight is None and reduction == "mean" and input.dim() == 2 and not bool((target == ignore_index).any()):
        return _C._nn.nll_loss(input, target)
    if input.dim() == 3 or input.dim() > 4:
        # 1.13's nll_loss_nd: nll_loss2d of the (N, C, 1, -1) view (of the (N, 1, -1) target), viewed back for 'none'
        shape = list(input.shape)
        rows = input.contiguous().view([shape[0], shape[1], 1, -1])
        loss = recorded("NllLoss2DBackward0", [rows], lambda: _nll_loss(
            rows.view(shape), target, weight, ignore_index, reduction).reshape([shape[0], 1, -1] if reduction == "none"
                                                                               else []))
        return loss.view([shape[0]] + shape[2:]) if reduction == "none" else loss
    # 1.13 records NllLoss2DBackward0 for 4-D inputs (its nll_loss2d); its edge is to input
    return recorded("NllLoss2DBackward0" if input.dim() == 4 else "NllLossBackward0", [input],
                    lambda: _nll_loss(input, target, weight, ignore_index, reduction))


def _nll_loss(input, target, weight, ignore_index, reduction):
    unbatched = input.dim() == 1
    if unbatched:
        input, target = input.unsqueeze(0), target.unsqueeze(0)
    valid = target != ignore_index
    safe = _pick(valid, target, target * 0)
    picked = -input.gather(1, safe.unsqueeze(1)).squeeze(1)
    w = _class_weights(weight, target, valid, input.dtype)
    loss = picked * w
    if reduction == "none":
        return loss.squeeze(0) if unbatched else loss
    out = loss.sum() if reduction == "sum" else loss.sum() / w.sum()
    if not unbatched and input.dim() == 2 and input.device.type == "cpu":
        # 1.13 adds the rows in its own cascade (engine's nll_reduce): its value, the composition's gradient
        # (the two differ by a few ulps, so the difference is exact)
        exact = _C._nn.nll_reduce(loss.detach(), w.detach(), valid, weight is not None, reduction == "mean")
        d = exact - out.detach()
        if bool(d.isfinite()):
            out = out + d
    return out


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    """nll_loss(log_softmax(input, 1), target) for class indices; for class probabilities (a float target of
    input's shape) -sum(target * weight * log_softmax(input)) over the classes. label_smoothing mixes in the
    uniform distribution as 1.13 does. The plain mean over (N, C) is the engine's fused kernel."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    probabilities = target.shape == input.shape   # 1.13: soft targets whenever the shapes are equal
    if probabilities and not target.is_floating_point():
        from tinyddp._tensor_reduce import scalar_name
        raise RuntimeError(f"Expected floating point type for target with class probabilities, got "
                           f"{scalar_name(target.dtype)}")
    if probabilities and ignore_index >= 0:
        raise RuntimeError("ignore_index is not supported for floating point target")
    if not input.is_floating_point():   # 1.13's log_softmax refuses it first
        from tinyddp._tensor_reduce import scalar_name
        raise RuntimeError(f"\"log_softmax_lastdim_kernel_impl\" not implemented for '{scalar_name(input.dtype)}'")
    if not probabilities:
        _check_nll(input, target, weight)
    if (not probabilities and weight is None and label_smoothing == 0.0 and reduction == "mean"
            and input.dim() == 2 and not bool((target == ignore_index).any())):
        return _C._nn.cross_entropy(input, target)
    dim = 0 if input.dim() == 1 else 1
    logp = log_softmax(input, dim)
    classes = input.shape[dim]
    w_shape = [classes] if dim == 0 else [1, classes] + [1] * (input.dim() - 2)
    if probabilities:
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / classes
        terms = logp * target
        if weight is not None:
            terms = terms * weight.reshape(w_shape)
        if reduction == "none":
            return -terms.sum(dim)
        if reduction not in ("mean", "sum"):
            raise ValueError(f"{reduction} is not a valid value for reduction")
        total = -terms.sum(dim).sum()   # 1.13's -(input * target).sum(), NegBackward0 (the same sums, negated once)
        if reduction == "sum":
            return total
        count = input.numel() // classes
        return recorded("DivBackward1", [total], lambda: total / count)   # divided by a number
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if label_smoothing == 0.0:
        return nll
    valid = target != ignore_index
    terms = logp if weight is None else logp * weight.reshape(w_shape)
    smooth = -terms.sum(dim)
    smooth = _pick(valid, smooth, smooth * 0)
    if reduction == "none":
        smooth_reduced = smooth
    elif reduction == "sum":
        smooth_reduced = smooth.sum()
    else:
        denominator = _class_weights(weight, target, valid, input.dtype).sum()
        smooth_reduced = smooth.sum() / denominator
    # 1.13 scales both by numbers (MulBackward1)
    return (recorded("MulBackward1", [nll], lambda: nll * (1 - label_smoothing))
            + recorded("MulBackward1", [smooth_reduced], lambda: smooth_reduced * (label_smoothing / classes)))


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """PyTorch's native_batch_norm (engine/ops/normalization.cpp): the running stats are updated in place in
    training, without bumping their versions; NativeBatchNormBackward0 saves them (see BatchNorm1d)."""
    if training:
        size = input.size()
        values = size[0]
        for d in size[2:]:
            values *= d
        if values == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")
    parameters = [t for t in (weight, bias, running_mean, running_var) if t is not None]
    if input.is_floating_point() and parameters and parameters[0].dtype is not input.dtype:   # its bf16 mixed mode
        if any(t.dtype is not _tensor.float32 for t in parameters):
            raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
        raise RuntimeError("mixed dtype (CPU): expect input to have scalar type of BFloat16")
    return _C._nn.batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    return _C._nn.layer_norm(input, list(normalized_shape), weight, bias, eps)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    """weight's rows picked by input. padding_idx's row gets no gradient; max_norm first rescales (in place, as
    1.13's embedding_renorm_) each referenced row whose norm exceeds it to max_norm / (norm + 1e-7) times itself;
    scale_grad_by_freq divides each row's gradient by its count in input."""
    if sparse:
        raise NotImplementedError("embedding(sparse=True): tinyddp has no sparse gradients; use sparse=False.")
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < weight.size(0), "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -weight.size(0), "Padding_idx must be within num_embeddings"
            padding_idx = weight.size(0) + padding_idx
    if max_norm is not None:
        from tinyddp.autograd.grad_mode import no_grad
        with no_grad():
            rows = weight.shape[0]
            referenced = one_hot(input.reshape([-1]), rows).sum(0) > 0
            norms = weight.detach().norm(norm_type, 1)
            # 1.13 computes the scale in double (the row's norm as a double, plus 1e-7) and multiplies the row by
            # it rounded once to the weight's dtype
            scale = (max_norm / (norms.double() + 1e-7)).to(weight.dtype)
            scale = _pick(referenced.logical_and(norms > max_norm), scale, norms * 0 + 1)
            weight.mul_(scale.unsqueeze(1))
    if padding_idx is None and not scale_grad_by_freq:
        return _C._nn.embedding(weight, input)

    def composed():   # the engine's lookup, its gradient masked or scaled, behind 1.13's one node
        out = _C._nn.embedding(weight, input)
        if padding_idx is not None:
            out = _pick((input == padding_idx).unsqueeze(-1), out.detach(), out)
        if scale_grad_by_freq:
            flat = input.reshape([-1])
            counts = one_hot(flat, weight.shape[0]).sum(0).index_select(0, flat).reshape(list(input.shape) + [1])
            frozen = out.detach()
            out = frozen + (out - frozen) / counts.to(out.dtype)   # the values exactly out's, the gradient / count
        return out
    return recorded("EmbeddingBackward0", [weight], composed)


def one_hot(tensor, num_classes=-1):
    """int64 rows with a 1 at each class index (num_classes=-1: the largest index plus one), as 1.13's."""
    if tensor.dtype is not _tensor.int64:
        raise RuntimeError("one_hot is only applicable to index tensor.")
    if num_classes == -1:
        if not tensor.numel():
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(tensor.max().item()) + 1
    if tensor.numel() and int(tensor.min().item()) < 0:
        raise RuntimeError("Class values must be non-negative.")
    if tensor.numel() and int(tensor.max().item()) >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return _C._one_hot(tensor, num_classes).long()


def _not_differentiable(fn_name, **args):
    """1.13's refusal of a gradient-requiring argument its kernel has no derivative for (a loss's weights)."""
    for name, value in args.items():
        if value is not None and value.requires_grad and _C.is_grad_enabled():
            raise RuntimeError(f"The function '{fn_name}' is not differentiable with respect to argument '{name}'. "
                               "This input cannot have requires_grad True.")


def _check_target_size(input, target):
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size "
                         f"({input.shape}) is deprecated. Please ensure they have the same size.")


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """-(y log(x) + (1 - y) log(1 - x)), reduced, each log clamped at -100 as 1.13's kernel clamps it."""
    _check_target_size(input, target)
    if target.dtype is not input.dtype:
        raise _dtype_mismatch(input, target)
    if bool(((input < 0) | (input > 1) | input.isnan()).any()):   # 1.13's kernel checks every element
        raise RuntimeError("all elements of input should be between 0 and 1")
    def composed():
        log_x = input.log().clamp(min=-100)
        log_1mx = (1 - input).log().clamp(min=-100)
        loss = -(target * log_x + (1 - target) * log_1mx)
        if weight is not None:   # 1.13 expands weight to the target's shape, then scales each element's loss
            loss = loss * weight.expand(target.shape)
        return _reduce(loss, reduction)
    _not_differentiable("binary_cross_entropy", weight=weight)
    return recorded("BinaryCrossEntropyBackward0", [input, target], composed)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    """(1 - y) x + m + log(exp(-m) + exp(-x - m)), m = max(-x, 0), reduced: 1.13's stable formula, composed of
    engine ops (its gradient sigmoid(x) - y within float rounding), recorded as
    BinaryCrossEntropyWithLogitsBackward0. pos_weight p scales the positive term: (1 - y) x + (1 + (p - 1) y)
    (log(exp(-m) + exp(-x - m)) + m); weight scales each element's loss; both broadcast, as 1.13's."""
    if target.shape != input.shape:   # 1.13's own text here, not binary_cross_entropy's
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    if not target.is_floating_point() and input.is_floating_point():   # 1.13 writes into the target's dtype
        from tinyddp._tensor_reduce import scalar_name
        raise RuntimeError(f"result type {scalar_name(input.dtype)} can't be cast to the desired output type "
                           f"{scalar_name(target.dtype)}")
    def composed():
        m = (-input).clamp(min=0)
        if pos_weight is None:
            loss = (1 - target) * input + m + ((-m).exp() + (-input - m).exp()).log()
        else:
            log_weight = (pos_weight - 1) * target + 1
            loss = (1 - target) * input + log_weight * (((-m).exp() + (-input - m).exp()).log() + m)
        if weight is not None:
            loss = loss * weight
        return _reduce(loss, reduction)
    _not_differentiable("binary_cross_entropy_with_logits", weight=weight, pos_weight=pos_weight)
    return recorded("BinaryCrossEntropyWithLogitsBackward0", [input, target], composed)


# ---- activations composed of engine ops ----
# The transcendental ones are computed in float64 for a float32 input and cast back, so each value is the
# correctly rounded one (1.13's kernels are within an ulp of it): the compositions' own roundings (1 + exp(x)
# for a tiny exp(x)) would otherwise show in printed values. A branch that where() does not pick gets a clamped
# input, so that its gradient stays finite (0, not inf * 0).

def _in_double(input, fn):
    return fn(input.double()).to(input.dtype) if input.dtype is _tensor.float32 else fn(input)


def _pick(condition, a, b):
    return _C.where(condition, a, b)


def silu(input, inplace=False):
    return recorded("SiluBackward0", [input], lambda: _in_double(input, lambda x: x * x.sigmoid()))


def elu(input, alpha=1.0, inplace=False):
    return recorded("EluBackward0", [input],
                    lambda: _in_double(input, lambda x: _pick(x > 0, x, ((x.clamp(max=0)).exp() - 1) * alpha)))


_SELU_ALPHA, _SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def selu(input, inplace=False):
    return recorded("EluBackward0", [input], lambda: _in_double(   # 1.13's selu is its elu with a scale
        input, lambda x: _pick(x > 0, x, ((x.clamp(max=0)).exp() - 1) * _SELU_ALPHA) * _SELU_SCALE))


def softplus(input, beta=1, threshold=20):
    """log(1 + exp(beta x)) / beta, and x itself where beta x > threshold (1.13's linear region)."""
    def fn(x):
        bx = x * beta
        return _pick(bx > threshold, x, (bx.clamp(max=threshold).exp() + 1).log() / beta)
    return recorded("SoftplusBackward0", [input], lambda: _in_double(input, fn))


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """input limited to [min_val, max_val]; the gradient is 0 at the ends too, as 1.13's."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if input.dtype is _tensor.bool:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    low = _tensor.tensor(min_val, dtype=input.dtype)
    high = _tensor.tensor(max_val, dtype=input.dtype)
    return recorded("HardtanhBackward0", [input],
                    lambda: _pick(input <= min_val, low, _pick(input >= max_val, high, input)))


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0)


def mish(input, inplace=False):
    return recorded("MishBackward0", [input], lambda: _in_double(input, lambda x: x * softplus(x).tanh()))


def logsigmoid(input):
    return recorded("LogSigmoidBackward0", [input], lambda: -softplus(-input))


def softsign(input):
    return input / (input.abs() + 1)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _softmax_dim("softmin", input.dim(), _stacklevel)
    return softmax(-(input.to(dtype) if dtype is not None else input), dim)


# ---- losses composed of engine ops, with every reduction ----

def _reduce(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """0.5 d^2 / beta where d = |input - target| < beta, else d - 0.5 beta; beta = 0 is l1_loss."""
    if target.shape != input.shape:
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
                      "same size.", stacklevel=2)
    def composed():
        d = (input - target).abs()
        if beta == 0:
            return _reduce(d, reduction)
        return _reduce(_pick(d < beta, d * d * (0.5 / beta), d - 0.5 * beta), reduction)
    return recorded("SmoothL1LossBackward0", [input, target], composed)


def huber_loss(input, target, reduction="mean", delta=1.0):
    """0.5 d^2 where d = |input - target| < delta, else delta (d - 0.5 delta)."""
    if target.shape != input.shape:
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
                      "same size.", stacklevel=2)
    def loss_of(x, y):
        d = (x - y).abs()
        return _reduce(_pick(d < delta, d * d * 0.5, (d - 0.5 * delta) * delta), reduction)
    if target.dtype is not input.dtype:   # 1.13: the value in the input's dtype, then "Found dtype ..." backward
        return _loss_failing_backward("HuberLossBackward0", input, target, loss_of, input.dtype)
    return recorded("HuberLossBackward0", [input, target], lambda: loss_of(input, target))


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """target (log target - input) summed as reduction says (input holds log-probabilities), as 1.13 writes it:
    xlogy(target, target) - target * input (0 where the target is 0). 'batchmean' divides the sum by the batch
    size; 'mean' warns as 1.13's."""
    if not input.is_floating_point() or not target.is_floating_point():
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                      "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                      "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                      stacklevel=2)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        from tinyddp._tensor_math import xlogy
        loss = xlogy(target, target) - target * input
    if reduction == "batchmean":
        return loss.sum() / (input.shape[0] if input.dim() else 1)
    return _reduce(loss, reduction)


# ---- distances and padding ----

def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p along dim, eps), p = 2 (the default) or 1: 1.13's graph, input divided by the
    norm (NormBackward1) clamped (ClampMinBackward0) and expanded to input's shape (ExpandBackward0)."""
    if p == 2 or p == 2.0:
        norm = input.norm(2, dim, True)   # its gradient 0 at a zero row, as 1.13's
    elif p == 1 or p == 1.0:
        norm = recorded("NormBackward1", [input], lambda: input.abs().sum(dim, True))
    else:
        raise NotImplementedError(f"tinyddp: normalize with p={p!r}; p=2 and p=1 are supported")
    result = input / recorded("ClampMinBackward0", [norm], lambda: norm.clamp(min=eps)).expand_as(input)
    if out is not None:   # torch.div(..., out=out): the quotient written into out, which is returned
        out.copy_(result)
        return out
    return result


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """torch.cosine_similarity (1.13's F.cosine_similarity is that function)."""
    from tinyddp._tensor_shape import cosine_similarity as similarity
    return similarity(x1, x2, dim, eps)


# ---- normalizations composed of engine ops (values within float rounding of 1.13's kernels) ----

def _normalize_groups(x, n_groups, eps):
    """x (N, C, *) normalized over each of n_groups groups of channels (with their spatial elements), biased
    variance."""
    n = x.shape[0]
    grouped = x.reshape([n, n_groups, -1])
    mean = grouped.mean(2, keepdim=True)
    centered = grouped - mean
    var = (centered * centered).mean(2, keepdim=True)
    return (centered / (var + eps).sqrt()).reshape(list(x.shape))


def _per_channel(t, ndim):
    return t.reshape([1, -1] + [1] * (ndim - 2))


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    if input.dim() < 2:   # 1.13 reads input.size(1) first
        d = builtins.max(input.dim(), 1)
        raise IndexError(f"Dimension out of range (expected to be in range of [{-d}, {d - 1}], but got 1)")
    channels = input.shape[1]
    if channels % num_groups != 0:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(input.shape)} and num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.dim() != 1 or t.numel() != channels):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, but "
                               f"got {name} of shape {list(t.shape)} and input of shape {list(input.shape)}")
    def normalized():
        out = _normalize_groups(input, num_groups, eps)
        if weight is not None:
            out = out * _per_channel(weight, input.dim())
        if bias is not None:
            out = out + _per_channel(bias, input.dim())
        return out
    return recorded("NativeGroupNormBackward0", [input, weight, bias], normalized)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """Each (sample, channel) plane normalized by its own mean and biased variance; with running stats, those
    are updated as 1.13's (the mean over the batch of each plane's mean and unbiased variance). 1.13's graph: a
    batch norm of the (1, N C, *) view (NativeBatchNormBackward0), viewed back (ViewBackward0)."""
    shape = list(input.shape)
    planes = shape[0] * shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):   # 1.13 batch-normalizes (1, N C, ...) with each repeated N times
        if t is not None and t.numel() * shape[0] != planes:
            raise RuntimeError(f"{name} should contain {planes} elements not {t.numel() * shape[0]}")
    folded = recorded("NativeBatchNormBackward0", [input, weight, bias], lambda: _instance_norm(
        input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps).reshape(
        [1, shape[0] * shape[1]] + shape[2:]))
    return folded.view(shape)


def _instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps):
    channels = input.shape[1]
    if use_input_stats:
        out = _normalize_groups(input, channels, eps)
        if running_mean is not None or running_var is not None:
            from tinyddp.autograd.grad_mode import no_grad
            with no_grad():
                planes = input.detach().reshape([input.shape[0], channels, -1])
                count = planes.shape[2]
                mean = planes.mean(2)
                var = ((planes - mean.unsqueeze(2)) ** 2).sum(2) / max(count - 1, 1)
                if running_mean is not None:
                    running_mean.mul_(1 - momentum).add_(mean.mean(0) * momentum)
                if running_var is not None:
                    running_var.mul_(1 - momentum).add_(var.mean(0) * momentum)
    else:
        shape = [1, -1] + [1] * (input.dim() - 2)
        out = (input - running_mean.reshape(shape)) / (running_var.reshape(shape) + eps).sqrt()
    if weight is not None:
        out = out * _per_channel(weight, input.dim())
    if bias is not None:
        out = out + _per_channel(bias, input.dim())
    return out


# ---- more activations ----

def hardsigmoid(input, inplace=False):
    """relu6(x + 3) / 6."""
    return recorded("HardsigmoidBackward0", [input], lambda: (input + 3).clamp(0, 6) / 6)


def hardswish(input, inplace=False):
    """x relu6(x + 3) / 6."""
    return recorded("HardswishBackward0", [input], lambda: input * (input + 3).clamp(0, 6) / 6)


def prelu(input, weight):
    """x for x > 0, else weight x, the weight per channel (dim 1) or one for all (PreluBackward0)."""
    if weight.numel() != 1:
        if input.dim() < 2 or input.shape[1] != weight.numel():
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                               f"{weight.numel()} and channel size = {input.shape[1] if input.dim() >= 2 else 1}.")

    def composed():
        w = weight.reshape([1, -1] + [1] * (input.dim() - 2)) if weight.numel() != 1 else weight
        return _pick(input > 0, input, input * w)
    return recorded("PreluBackward0", [input, weight], composed)


def glu(input, dim=-1):
    """a sigmoid(b) with a, b the halves of input along dim."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    dim = _tensor._wrap_dim(dim, input.dim())
    size = input.shape[dim]
    if size % 2 != 0:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim % input.dim()} is size {size}")
    return recorded("GluBackward0", [input],
                    lambda: input.narrow(dim, 0, size // 2) * input.narrow(dim, size // 2, size // 2).sigmoid())


def tanhshrink(input):
    return input - input.tanh()


def softshrink(input, lambd=0.5):
    return recorded("SoftshrinkBackward0", [input], lambda: _pick(input > lambd, input - lambd,
                                                                  _pick(input < -lambd, input + lambd, input * 0)))


def hardshrink(input, lambd=0.5):
    return recorded("HardshrinkBackward0", [input],
                    lambda: _pick((input > lambd).logical_or(input < -lambd), input, input * 0))


def celu(input, alpha=1.0, inplace=False):
    return recorded("CeluBackward0", [input], lambda: _pick(input > 0, input, ((input / alpha).exp() - 1) * alpha))


def threshold(input, threshold, value, inplace=False):
    if input.dtype is _tensor.bool:
        raise RuntimeError("\"threshold_cpu\" not implemented for 'Bool'")
    return recorded("ThresholdBackward0", [input],
                    lambda: _pick(input > threshold, input, (input * 0 + value).to(input.dtype)))


def _exponential_like(t):
    """Exp(1) draws of t's shape as 1.13's CPU exponential_ makes them: -log1p(-u) of a float64 uniform draw per
    element, rounded to t's dtype (so a seed gives 1.13's values, to rounding of log1p)."""
    u = _tensor.empty(tuple(t.shape), dtype=_tensor.float64).uniform_()
    return (-(-u).log1p()).to(t.dtype)


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """softmax((logits + g) / tau) with g = -log(E), E ~ Exp(1) drawn as 1.13's exponential_ (the same stream);
    hard=True gives the one-hot of the argmax with the soft sample's gradient."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -_exponential_like(logits).log()
    y_soft = softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    dim = dim % y_soft.dim()
    index = y_soft.argmax(dim, keepdim=True)
    shape = [1] * y_soft.dim()
    shape[dim] = y_soft.shape[dim]
    y_hard = (_tensor.arange(y_soft.shape[dim]).reshape(shape) == index).to(y_soft.dtype)
    return y_hard - y_soft.detach() + y_soft


# ---- distances and the losses over them ----

def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """||x1 - x2 + eps||_p over the last dim."""
    difference = x1 - x2
    d = recorded("AddBackward1", [difference], lambda: difference + eps)   # 1.13 adds the number eps
    return d.norm(p, -1, keepdim) if x1.dim() > 0 else d.abs()


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """max(0, -target (input1 - input2) + margin)."""
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} ")
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0), reduction)


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """1 - cos(x1, x2) where target = 1, max(0, cos(x1, x2) - margin) where target = -1 (cos with 1.13's
    EPSILON = 1e-12 added to each squared norm)."""
    dot = (input1 * input2).sum(-1)
    mag1 = (input1 * input1).sum(-1) + 1e-12
    mag2 = (input2 * input2).sum(-1) + 1e-12
    cos = dot / (mag1 * mag2).sqrt()
    zeros = cos * 0
    pos = 1 - cos
    neg = (cos - margin).clamp_min(0)
    loss = _pick(target == 1, pos, zeros) + _pick(target == -1, neg, zeros)
    return _reduce(loss, reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_swap = pairwise_distance(positive, negative, p, eps)
        d_neg = _pick(d_swap < d_neg, d_swap, d_neg)
    return _reduce((d_pos - d_neg + margin).clamp_min(0), reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    zeros = input * 0
    loss = _pick(target == 1, input, zeros) + _pick(target == -1, (margin - input).clamp_min(0), zeros)
    return _reduce(loss, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + exp(-y x)) reduced, in the input's dtype (1.13's kernel writes into it whatever the target's)."""
    y = target if target.is_floating_point() else target.to(input.dtype)   # -0.0 for a 0 label, as 1.13's
    def composed():
        loss = _reduce((-y * input).exp().log1p(), reduction)
        return loss if loss.dtype is input.dtype else loss.to(input.dtype)
    return recorded("SoftMarginLossBackward0", [input], composed)


def bilinear(input1, input2, weight, bias=None):
    """y_k = x1^T W_k x2 + b_k; weight (O, I1, I2)."""
    out = (input1.unsqueeze(-2).unsqueeze(-2).matmul(weight.unsqueeze(0) if input1.dim() > 1 else weight)
           .squeeze(-2) * input2.unsqueeze(-2)).sum(-1)
    return out + bias if bias is not None else out


# ---- channel dropout ----

def _feature_dropout(input, p, training, inplace, batched_dims):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0 or input.numel() == 0:
        return input
    shape = list(input.shape[:batched_dims]) + [1] * (input.dim() - batched_dims)
    if p == 1:
        mask = _tensor.zeros(shape, dtype=input.dtype)
    else:
        mask = _tensor.empty(shape, dtype=input.dtype).bernoulli_(1 - p) / (1 - p)
    return _in_place(input, lambda current: current * mask, inplace)


def dropout1d(input, p=0.5, training=True, inplace=False):
    if input.dim() not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D input. Note that "
                           "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, a "
                           "channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    if input.dim() == 2:
        return _feature_dropout(input.unsqueeze(0), p, training, False, 2).squeeze(0)
    return _feature_dropout(input, p, training, inplace, 2)


def dropout3d(input, p=0.5, training=True, inplace=False):
    if input.dim() not in (4, 5):
        warnings.warn(f"dropout3d: Received a {input.dim()}-D input to dropout3d, which is deprecated and will "
                      "result in an error in a future release. To retain the behavior and silence this warning, "
                      "please use dropout instead. Note that dropout3d exists to provide channel-wise dropout on "
                      "inputs with 3 spatial dimensions, a channel dimension, and an optional batch dimension "
                      "(i.e. 4D or 5D inputs).", stacklevel=2)
    if input.dim() == 4:
        return _feature_dropout(input.unsqueeze(0), p, training, False, 2).squeeze(0)
    return _feature_dropout(input, p, training, inplace, 2)


def dropout2d(input, p=0.5, training=True, inplace=False):
    if input.dim() not in (3, 4):
        warnings.warn(f"dropout2d: Received a {input.dim()}-D input to dropout2d, which is deprecated and will "
                      "result in an error in a future release. To retain the behavior and silence this warning, "
                      "please use dropout instead. Note that dropout2d exists to provide channel-wise dropout on "
                      "inputs with 2 spatial dimensions, a channel dimension, and an optional batch dimension "
                      "(i.e. 3D or 4D inputs).", stacklevel=2)
    if input.dim() == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
                      "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel dim. "
                      "This behavior will change in a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout behavior, please "
                      "switch to using dropout1d instead.", stacklevel=2)
    return _feature_dropout(input, p, training, inplace, 2)


# ---- inplace=True ----

def _in_place(input, fn, inplace, node=None):
    """fn(input); with inplace=True its result written into input and returned, recorded as 1.13 records relu_
    and the other in-place forms (the engine's apply_inplace: input's history becomes fn's node; a leaf that
    requires grad is refused with 1.13's text). node: (name, saves its result) of 1.13's node for the in-place
    form where it is not the out-of-place one's (EluBackward1, which saves the result it wrote, so that a later
    in-place change of input raises 1.13's error at backward)."""
    if not inplace:
        return fn(input)
    if node is not None:
        name, saves_result = node
        return input._apply_inplace(
            lambda current: recorded(name, [current], lambda: fn(current), saved_outputs=(0,) if saves_result else ()),
            [])
    return input._apply_inplace(fn, [])


# 1.13's nodes of the in-place forms that differ from the out-of-place ones': (name, whether it saves its result).
_INPLACE_NODES = {"leaky_relu": ("LeakyReluBackward1", True), "elu": ("EluBackward1", True),
                  "selu": ("EluBackward1", True), "celu": ("CeluBackward1", True),
                  "threshold": ("ThresholdBackward1", False)}


def _with_inplace(fn, node=None):
    """fn(input, ...) with its `inplace` argument, given by keyword or by position (F.celu(x, 0.5, True)), honoured."""
    position = list(inspect.signature(fn).parameters).index("inplace") - 1   # among the arguments after input

    @functools.wraps(fn)
    def wrapper(input, *args, inplace=False, **kwargs):
        if len(args) > position:
            args, inplace = args[:position] + args[position + 1:], args[position]
        return _in_place(input, lambda current: fn(current, *args, **kwargs), inplace, node)
    return wrapper


for _name in ("relu", "leaky_relu", "silu", "elu", "selu", "hardtanh", "relu6", "mish", "hardsigmoid", "hardswish",
              "celu", "threshold"):
    globals()[_name] = _with_inplace(globals()[_name], _INPLACE_NODES.get(_name))
del _name


# ---- the in-place forms ----

def relu_(input):
    return relu(input, inplace=True)


def elu_(input, alpha=1.0):
    return elu(input, alpha, inplace=True)


def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, inplace=True)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, inplace=True)


def selu_(input):
    return selu(input, inplace=True)


def celu_(input, alpha=1.0):
    return celu(input, alpha, inplace=True)


def threshold_(input, threshold_value, value):
    return threshold(input, threshold_value, value, inplace=True)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """x / (k + alpha * mean of x^2 over `size` neighbouring channels)^beta (the window zero-padded: size // 2
    channels before, (size - 1) // 2 after)."""
    if input.dim() < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.dim()} dimensions)")
    if input.numel() == 0:
        return input
    n, c = input.shape[:2]
    square = (input * input).reshape([n, 1, c, -1])
    square = pad(square, (0, 0, size // 2, (size - 1) // 2))
    windows = _C.cat([square.narrow(2, i, c) for i in range(size)], 1)   # (N, size, C, rest)
    div = windows.sum(1).reshape(list(input.shape)) / size
    return input / (div * alpha + k).pow(beta)


def pdist(input, p=2):
    """||x_i - x_j||_p of each pair of rows i < j, in row-major order of the pairs."""
    rows = input.shape[0]
    first = [i for i in range(rows) for j in range(i + 1, rows)]
    second = [j for i in range(rows) for j in range(i + 1, rows)]
    if not first:
        return input.new_zeros(0)

    def distances():
        a = input.index_select(0, _tensor.tensor(first, dtype=_tensor.int64))
        b = input.index_select(0, _tensor.tensor(second, dtype=_tensor.int64))
        return (a - b).norm(p, -1)
    return recorded("PdistBackward0", [input], distances)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    """exp(input) - target input (log_input), else input - target log(input + eps); full adds Stirling's term
    target log target - target + log(2 pi target) / 2 where target > 1."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(reduction + " is not a valid value for reduction")
    loss = input.exp() - target * input if log_input else input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + (target * (2 * math.pi)).log() * 0.5
        loss = loss + _pick(target > 1, stirling, stirling * 0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """(log max(var, eps) + (input - target)^2 / max(var, eps)) / 2 (+ log(2 pi) / 2 with full); the clamp is
    outside the graph, as 1.13's."""
    if var.shape != input.shape:
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (tuple(input.shape[:-1]) == tuple(var.shape[:-1]) and var.shape[-1] == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(reduction + " is not valid")
    if bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    var = var.clone()
    from tinyddp.autograd.grad_mode import no_grad
    with no_grad():
        var.copy_(var.clamp_min(eps))
    loss = ((var.log() + (input - target) ** 2 / var)) * 0.5
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(input.dim() - 1) / input.shape[-1]
    return _reduce(loss, reduction)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    """sum over j != y of max(0, margin - x[y] + x[j])^p, over the C classes (times weight[y])."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    return recorded("MultiMarginLossBackward0", [input],
                    lambda: _multi_margin_loss(input, target, p, margin, weight, reduction))


def _multi_margin_loss(input, target, p, margin, weight, reduction):
    x = input if input.dim() == 2 else input.unsqueeze(0)
    y = target.reshape([-1])
    picked = x.gather(1, y.unsqueeze(1))
    margins = (x - picked + margin).clamp_min(0)
    if p == 2:
        margins = margins * margins
    if weight is not None:
        margins = margins * weight.index_select(0, y).unsqueeze(1)
    classes = _tensor.arange(x.shape[1]).reshape([1, -1])
    margins = _pick(classes == y.unsqueeze(1), margins * 0, margins)
    loss = margins.sum(1) / x.shape[1]
    if input.dim() != 2:
        loss = loss.squeeze(0)
    return _reduce(loss, reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False,
                                      reduction="mean"):
    distance = distance_function if distance_function is not None else pairwise_distance
    d_pos, d_neg = distance(anchor, positive), distance(anchor, negative)
    if swap:
        d_swap = distance(positive, negative)
        d_neg = _pick(d_swap < d_neg, d_swap, d_neg)
    return _reduce((d_pos - d_neg + margin).clamp_min(0), reduction)


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Each bag's rows of weight reduced by mode ('sum', 'mean' or 'max'): the bags are input's rows (2-D input)
    or the slices of 1-D input that offsets start; padding_idx's entries are left out (and out of the mean's
    count); an empty bag gives zeros. The sums are a 0/1 matrix product, so their order is not 1.13's."""
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             "fixed length sequences. However, found offsets of type " + _type_text(offsets))
        bags, length = input.shape
        offsets_list = list(range(0, bags * length, length))
        input = input.reshape([-1])
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape([-1])
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        offsets_list = offsets.tolist()
        if include_last_offset:
            offsets_list = offsets_list[:-1]
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  "GitHub.")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    return recorded("EmbeddingBagBackward0", [weight, per_sample_weights], lambda: _embedding_bag(
        input, weight, offsets, offsets_list, max_norm, norm_type, scale_grad_by_freq, mode, per_sample_weights,
        include_last_offset, padding_idx))


def _embedding_bag(input, weight, offsets, offsets_list, max_norm, norm_type, scale_grad_by_freq, mode,
                   per_sample_weights, include_last_offset, padding_idx):
    rows = embedding(input, weight, None, max_norm, norm_type, scale_grad_by_freq)   # (n, D)
    n = input.shape[0]
    ends = offsets_list[1:] + [n] if not include_last_offset or offsets is None else offsets.tolist()[1:]
    keep = [True] * n if padding_idx is None else [v != padding_idx % weight.shape[0] for v in input.tolist()]
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.unsqueeze(1)
    if mode == "max":
        outs = []
        for start, end in zip(offsets_list, ends):
            members = [i for i in range(start, end) if keep[i]]
            if members:
                outs.append(rows.index_select(0, _tensor.tensor(members, dtype=_tensor.int64)).max(0)[0])
            else:
                outs.append(rows.new_zeros(rows.shape[1]))
        return _tensor.stack(outs, 0)
    membership = [[1.0 if start <= i < end and keep[i] else 0.0 for i in range(n)]
                  for start, end in zip(offsets_list, ends)]
    m = _tensor.tensor(membership, dtype=rows.dtype)   # (B, n)
    out = m.matmul(rows)
    if mode == "mean":
        counts = [max(sum(r), 1.0) for r in membership]
        out = out / _tensor.tensor(counts, dtype=rows.dtype).unsqueeze(1)
    return out


def _type_text(obj):
    return f"<class '{type(obj).__module__.replace('tinyddp._tensor', 'torch')}.{type(obj).__name__}'>"


# the spatial functions live in nn/_spatial.py (imported last: they need nothing above)
from tinyddp.nn._spatial import (  # noqa: E402,F401 -- re-exported
    adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d, adaptive_max_pool1d,
    adaptive_max_pool1d_with_indices, adaptive_max_pool2d, adaptive_max_pool2d_with_indices, adaptive_max_pool3d,
    affine_grid, avg_pool1d, avg_pool2d, avg_pool3d, channel_shuffle, conv1d, conv2d, conv3d, conv_transpose1d,
    conv_transpose2d, fold, grid_sample, interpolate, lp_pool1d, lp_pool2d, max_pool1d, max_pool1d_with_indices,
    max_pool2d, max_pool2d_with_indices, max_pool3d, max_unpool1d, max_unpool2d, pad, pixel_shuffle,
    pixel_unshuffle, unfold, upsample, upsample_bilinear, upsample_nearest)


# ---- random activations and SELU-preserving dropouts (their draws as 1.13's, from the seeded stream) ----

def rrelu(input, lower=1. / 8, upper=1. / 3, training=False, inplace=False):
    """x for x > 0, else a x: a uniform in [lower, upper) per element in training (one float64 draw per element
    <= 0, in order, as 1.13's CPU kernel), (lower + upper) / 2 in evaluation. One node, 1.13's
    RreluWithNoiseBackward0 (RreluWithNoiseBackward1 in place), in both modes."""
    if not training:
        slope = (lower + upper) / 2
        return _rrelu_node(input, lambda current: leaky_relu(current, slope), inplace)
    negative = (input <= 0).reshape([-1])
    count = int(negative.sum())
    if not count:
        return _rrelu_node(input, lambda current: current * 1, inplace)
    draws = _tensor.empty(count, dtype=_tensor.float64).uniform_(lower, upper)
    which = (negative.to(_tensor.int64).cumsum(0) - 1).clamp(min=0)   # the draw each negative element takes
    slopes = _pick(negative, draws.index_select(0, which).to(input.dtype), _tensor.ones(input.numel(),
                                                                                      dtype=input.dtype))
    return _rrelu_node(input, lambda current: current * slopes.reshape(list(input.shape)), inplace)


def _rrelu_node(input, fn, inplace):
    if inplace:
        return _in_place(input, fn, True, ("RreluWithNoiseBackward1", True))
    return recorded("RreluWithNoiseBackward0", [input], lambda: fn(input), saved_inputs=(0,))


def rrelu_(input, lower=1. / 8, upper=1. / 3, training=False):
    return rrelu(input, lower, upper, training, inplace=True)


_SELU_ALPHA_SCALE = 1.7580993408473766   # SELU's alpha * scale: the value a dropped unit saturates to (negated)


def _alpha_dropout(input, p, training, inplace, feature):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0 or input.numel() == 0:
        return input
    if p == 1:
        return _in_place(input, lambda current: current * 0, inplace)
    shape = list(input.shape[:2]) + [1] * (input.dim() - 2) if feature else list(input.shape)
    keep = _tensor.empty(shape, dtype=input.dtype).bernoulli_(1 - p)
    a = ((_SELU_ALPHA_SCALE ** 2 * p + 1) * (1 - p)) ** -0.5
    b = (keep - 1) * (_SELU_ALPHA_SCALE * a) + _SELU_ALPHA_SCALE * a * p
    return _in_place(input, lambda current: current * (keep * a) + b, inplace)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout that keeps SELU's zero mean and unit variance: dropped units go to -alpha * scale, then an affine
    map a x + b restores the moments (1.13's bernoulli_ draws, then its arithmetic)."""
    return _alpha_dropout(input, p, training, inplace, False)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    return _alpha_dropout(input, p, training, inplace, True)


# ---- connectionist temporal classification ----

_CTC_NEG = -1e30   # log(0) stand-in: finite, so no -inf - -inf = NaN reaches a gradient


def _logsumexp_stack(terms):
    stacked = _tensor.stack(terms, 0)
    top = stacked.max(0)[0]
    return top + (stacked - top.unsqueeze(0)).exp().sum(0).log()


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """-log p(target | input) summed over the alignments, by the forward (alpha) recursion over the extended
    target blank, l1, blank, l2, ..., blank in log space, composed of engine ops (so the gradient is autograd's).
    log_probs (T, N, C) or (T, C); targets (N, S) padded or 1-D concatenated. 'mean' divides each loss by its
    target length (at least 1) and averages; an impossible alignment gives inf (0 with zero_infinity). The
    gradient wrt log_probs is 1.13's: the true one plus exp(log_probs), as its kernel assumes normalized inputs."""
    unbatched = log_probs.dim() == 2
    if unbatched:
        log_probs = log_probs.unsqueeze(1)
        targets = targets.unsqueeze(0) if targets.dim() == 1 else targets
    input_lengths = input_lengths.tolist() if hasattr(input_lengths, "tolist") else list(input_lengths)
    target_lengths = target_lengths.tolist() if hasattr(target_lengths, "tolist") else list(target_lengths)
    if isinstance(input_lengths, int):
        input_lengths, target_lengths = [input_lengths], [target_lengths]
    batch = log_probs.shape[1]
    flat_targets = targets.tolist()
    losses = []
    offset = 0
    for b in range(batch):
        length = target_lengths[b]
        if targets.dim() == 1 and not unbatched:
            labels = flat_targets[offset:offset + length]
            offset += length
        else:
            labels = flat_targets[b][:length]
        extended = [blank]
        for label in labels:
            extended += [label, blank]
        states = len(extended)
        steps = input_lengths[b]
        lp = log_probs.select(1, b).index_select(1, _tensor.tensor(extended, dtype=_tensor.int64))   # (T, S')
        neg = _tensor.full((1,), _CTC_NEG, dtype=lp.dtype)
        # the skip over a blank is allowed into a label that differs from the label two states back
        skip = _tensor.tensor([1.0 if s >= 2 and extended[s] != blank and extended[s] != extended[s - 2] else 0.0
                               for s in range(states)], dtype=lp.dtype)
        start = _tensor.tensor([0.0] + [0.0 if s == 1 else _CTC_NEG for s in range(1, states)], dtype=lp.dtype)
        alpha = lp.select(0, 0) + start
        for t in range(1, steps):
            one_back = _C.cat([neg.expand([1]), alpha.narrow(0, 0, states - 1)], 0)
            two_back = _C.cat([neg.expand([2]), alpha.narrow(0, 0, states - 2)], 0) if states > 2 else \
                neg.expand([states])
            two_back = _pick(skip > 0, two_back, two_back * 0 + _CTC_NEG)
            alpha = lp.select(0, t) + _logsumexp_stack([alpha, one_back, two_back])
        ends = [alpha.select(0, states - 1)] + ([alpha.select(0, states - 2)] if states > 1 else [])
        loss = -_logsumexp_stack(ends)
        # 1.13's backward kernel assumes normalized log_probs and adds exp(log_probs) over the input's steps to
        # the true gradient (zero in total through a log_softmax): a term of value 0 with that gradient
        steps_lp = log_probs.select(1, b).narrow(0, 0, steps)
        assumed = (steps_lp.detach().exp() * steps_lp).sum()
        loss = loss + (assumed - assumed.detach())
        impossible = bool(loss > 1e29)
        if impossible:
            loss = loss * 0 if zero_infinity else loss * 0 + math.inf
        losses.append(loss)
    out = _tensor.stack(losses, 0)
    if reduction == "none":
        return out.squeeze(0) if unbatched else out
    if reduction == "sum":
        return out.sum()
    if reduction == "mean":
        lengths = _tensor.tensor([max(v, 1) for v in target_lengths], dtype=out.dtype)
        return (out / lengths).mean()
    raise ValueError(f"{reduction} is not a valid value for reduction")


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """sum over target classes j and non-target classes i of max(0, 1 - (x[j] - x[i])), over C; each row's
    targets are its entries before the first -1."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    x = input if input.dim() == 2 else input.unsqueeze(0)
    rows = target.tolist() if target.dim() == 2 else [target.tolist()]
    classes = x.shape[1]
    marks = []
    for row in rows:
        chosen = set()
        for label in row:
            if label < 0:
                break
            chosen.add(label)
        marks.append([1.0 if c in chosen else 0.0 for c in range(classes)])
    is_target = _tensor.tensor(marks, dtype=x.dtype)                             # (N, C)
    pairs = is_target.unsqueeze(2) * (1 - is_target).unsqueeze(1)                # (N, C_j, C_i)
    margins = (1 - (x.unsqueeze(2) - x.unsqueeze(1))).clamp_min(0) * pairs
    loss = margins.sum(2).sum(1) / classes
    if input.dim() != 2:
        loss = loss.squeeze(0)
    return _reduce(loss, reduction)


# 1.13's activations whose CPU kernels are dispatched over floating types only: an integer or bool input is
# refused with the kernel's name (where tinyddp's compositions would compute something or fail elsewhere).
_FLOATING_KERNELS = {
    "gelu": "GeluKernelImpl", "silu": "silu_cpu", "elu": "elu_cpu", "selu": "elu_cpu", "celu": "elu_cpu",
    "mish": "mish_cpu", "softplus": "softplus_cpu", "hardswish": "hardswish_cpu", "hardsigmoid": "hardsigmoid_cpu",
    "leaky_relu": "leaky_relu_cpu", "logsigmoid": "log_sigmoid_cpu", "softshrink": "softshrink_cpu",
    "hardshrink": "hardshrink_cpu"}


def _floating_only(fn, kernel):
    @functools.wraps(fn)
    def activation(input, *args, **kwargs):
        if isinstance(input, _tensor.Tensor) and not input.is_floating_point():
            from tinyddp._tensor_reduce import scalar_name
            raise RuntimeError(f"\"{kernel}\" not implemented for '{scalar_name(input.dtype)}'")
        return fn(input, *args, **kwargs)
    return activation


for _name, _kernel in _FLOATING_KERNELS.items():
    globals()[_name] = _floating_only(globals()[_name], _kernel)
del _name, _kernel
