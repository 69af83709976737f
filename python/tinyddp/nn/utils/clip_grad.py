"""torch.nn.utils.clip_grad_norm_ as 1.13 composes it (the norm of the per-parameter norms over the engine's norm
kernel, which is 1.13's bit for bit, then one scaling per gradient; the result is a 0-dim tensor, the norm before
clipping), for every norm type; and clip_grad_value_ over the engine's clamp. The engine's fused multi-tensor
clip_grad_norm_ (engine/ops/multi_tensor.cpp) is the C++ API's, not used here: it sums in another order."""
import math

from tinyddp import _C, _tensor
from tinyddp.autograd.grad_mode import no_grad


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False):
    if isinstance(parameters, _tensor.Tensor):
        parameters = [parameters]
    parameters = [p for p in parameters if p.grad is not None]
    max_norm, norm_type = float(max_norm), float(norm_type)
    if len(parameters) == 0:
        return _tensor.tensor(0.0)
    # 1.13's composition for every order: the norm of the per-parameter norms, whose values the engine's norm
    # kernel gives bit for bit (the fused grad-norm kernel, _C._nn.clip_grad_norm_, sums in another order and
    # can differ from 1.13 in the last bit, and so can the gradients it scales).
    return _clip_norm_(parameters, max_norm, norm_type, error_if_nonfinite)


def clip_grad_norm(parameters, max_norm, norm_type=2., error_if_nonfinite=False):
    """Deprecated alias of clip_grad_norm_, with 1.13's warning."""
    import warnings
    warnings.warn("torch.nn.utils.clip_grad_norm is now deprecated in favor of torch.nn.utils.clip_grad_norm_.",
                  stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite)


def _clip_norm_(parameters, max_norm, norm_type, error_if_nonfinite):
    """1.13's composition: the norm of the per-parameter norms (the largest |g| for inf),
    then every .grad scaled by min(max_norm / (norm + 1e-6), 1)."""
    from tinyddp import _tensor_ops
    if norm_type == math.inf:
        norms = [p.grad.detach().abs().max() for p in parameters]
        total_norm = norms[0] if len(norms) == 1 else _tensor.stack(norms).max()
    else:
        total_norm = _tensor_ops.norm(_tensor.stack([_tensor_ops.norm(p.grad.detach(), norm_type)
                                                     for p in parameters]), norm_type)
    value = float(total_norm)
    if error_if_nonfinite and (math.isnan(value) or math.isinf(value)):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, "
                           "so it cannot be clipped. To disable this error and scale the gradients by the "
                           "non-finite norm anyway, set `error_if_nonfinite=False`")
    clip_coef_clamped = (max_norm / (total_norm + 1e-6)).clamp(max=1.0)
    with no_grad():
        for p in parameters:
            p.grad.detach().mul_(clip_coef_clamped)
    return total_norm


def clip_grad_value_(parameters, clip_value):
    """Clamps every .grad into [-clip_value, clip_value] in place (one version bump each, as 1.13's clamp_)."""
    if isinstance(parameters, _tensor.Tensor):
        parameters = [parameters]
    clip_value = float(clip_value)
    with no_grad():
        for p in parameters:
            g = p.grad
            if g is None:
                continue
            if clip_value < 0:   # min > max: 1.13's clamp sets every element to max
                g.fill_(clip_value)
            else:
                g.copy_(_C._nn.clamp(g, -clip_value, clip_value))
