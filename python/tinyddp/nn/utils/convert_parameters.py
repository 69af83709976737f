"""torch.nn.utils.parameters_to_vector and vector_to_parameters, as 1.13's convert_parameters.py."""
from tinyddp import _tensor
from tinyddp.autograd.grad_mode import no_grad


def _check_same_device(param, device):
    if param.device != device:
        raise TypeError("Found two parameters on different devices, this is currently not supported.")


def parameters_to_vector(parameters):
    """One 1-D tensor of every parameter's elements, in order (CatBackward0: it stays in the graph)."""
    device, vec = None, []
    for param in parameters:
        device = param.device if device is None else device
        _check_same_device(param, device)
        vec.append(param.view(-1))
    return _tensor.cat(vec)


def vector_to_parameters(vec, parameters):
    """Each parameter takes the values of its slice of vec. Copied in place (under no_grad, bumping the
    parameter's version): 1.13 assigns param.data, so its parameters alias vec afterwards, which tinyddp's
    engine cannot do (see Tensor.data in docs/python.md)."""
    if not isinstance(vec, _tensor.Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    device, pointer = None, 0
    for param in parameters:
        device = param.device if device is None else device
        _check_same_device(param, device)
        n = param.numel()
        with no_grad():
            param.copy_(vec[pointer:pointer + n].view(param.shape))
        pointer += n
