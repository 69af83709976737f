"""torch.autograd: grad, backward, grad mode and anomaly mode over the engine (engine/autograd/); Function."""
import warnings

from tinyddp import _C
from tinyddp._tensor import _warn_once
from tinyddp.autograd import function, graph
from tinyddp.autograd.function import Function
from tinyddp.autograd.variable import Variable
from tinyddp.autograd.anomaly_mode import detect_anomaly, set_detect_anomaly
from tinyddp.autograd.grad_mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled

is_anomaly_enabled = _C.is_anomaly_enabled


def _as_tuple(tensors, length):
    """1.13's _tensor_or_tensors_to_tuple: None for each output, a tensor as a 1-tuple, else tuple(...) (a float
    then raises Python's own TypeError, as there)."""
    if tensors is None:
        return (None,) * length
    if isinstance(tensors, _C.Tensor):
        return (tensors,)
    return tuple(tensors)


def _checked_grads(outputs, grads):
    """1.13's checks of the gradients given for outputs (the engine checks their shapes and makes the implicit
    ones): each a tensor or None, one per output."""
    for g in grads:
        if g is not None and not isinstance(g, _C.Tensor):
            raise TypeError("gradients can be either Tensors or None, but got " + type(g).__name__)
    if len(grads) != len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grads)} gradients")
    return list(grads)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=False, is_grads_batched=False):
    """The gradients of `outputs` with respect to `inputs`, as a tuple (None for an unused input when
    allow_unused); engine/autograd/functional.h's grad with PyTorch's texts. is_grads_batched: the first dim of
    each grad_output is a batch of vectors, and each result holds their vector-Jacobian products stacked along a
    first dim (1.13 vmaps one backward; here one backward per vector, the graph kept until the last)."""
    if not only_inputs:
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to True). To accumulate "
                      "gradient for other parts of the graph, please use torch.autograd.backward.", stacklevel=2)
    outputs = (outputs,) if isinstance(outputs, _C.Tensor) else tuple(outputs)
    inputs = (inputs,) if isinstance(inputs, _C.Tensor) else tuple(inputs)
    if not inputs:
        raise ValueError("grad requires non-empty inputs.")
    if not is_grads_batched:
        grads = _checked_grads(outputs, _as_tuple(grad_outputs, len(outputs)))
        return _C._grad(outputs, inputs, grads, retain_graph, create_graph, allow_unused)
    seeds = [grad_outputs] if isinstance(grad_outputs, _C.Tensor) else list(grad_outputs)
    count = seeds[0].shape[0]
    if retain_graph is None:
        retain_graph = create_graph
    per_vector = [_C._grad(outputs, inputs, [s[k] for s in seeds], retain_graph or k < count - 1, create_graph,
                           allow_unused) for k in range(count)]
    return tuple(None if column[0] is None else _C.stack(list(column), 0) for column in zip(*per_vector))


def _warn_create_graph():
    """1.13's engine warns once per process for a backward that accumulates with a graph (Tensor.backward
    comes here from the binding)."""
    _warn_once("Using backward() with create_graph=True will create a reference cycle between the parameter and "
               "its gradient which can cause a memory leak. We recommend using autograd.grad when creating the "
               "graph to avoid this. If you have to use this function, make sure to reset the .grad fields of "
               "your parameters to None after use to break the cycle and avoid the leak. (Triggered internally "
               "at  ./torch/csrc/autograd/engine.cpp:1059.)", stacklevel=1)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None, inputs=None):
    """torch.autograd.backward: one graph task from all `tensors` (engine/autograd/functional.h); a non-leaf in
    `inputs` retains its gradient into .grad, as 1.13's."""
    if grad_variables is not None:
        warnings.warn("'grad_variables' is deprecated. Use 'grad_tensors' instead.", stacklevel=2)
        if grad_tensors is None:
            grad_tensors = grad_variables
        else:
            raise RuntimeError("'grad_tensors' and 'grad_variables' (deprecated) arguments both passed to "
                               "backward(). Please only use 'grad_tensors'.")
    tensors = (tensors,) if isinstance(tensors, _C.Tensor) else tuple(tensors)
    if inputs is not None and not isinstance(inputs, _C.Tensor) and len(inputs) == 0:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    grads = _checked_grads(tensors, _as_tuple(grad_tensors, len(tensors)))
    if create_graph:
        _warn_create_graph()
    _C._backward(tensors, grads, retain_graph, create_graph, inputs)


def _tensor_backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Tensor.backward: torch.autograd.backward(self, gradient, ...), as 1.13's."""
    backward(self, gradient, retain_graph, create_graph, inputs=inputs)


_C.Tensor.backward = _tensor_backward


__all__ = ["backward", "detect_anomaly", "enable_grad", "Function", "function", "grad", "graph", "inference_mode",
           "is_anomaly_enabled", "is_grad_enabled", "no_grad", "set_detect_anomaly", "set_grad_enabled", "Variable",
           "functional", "gradcheck", "gradgradcheck"]

from tinyddp.autograd import functional  # noqa: E402  (calls back into torch.autograd.grad at call time)
from tinyddp.autograd.gradcheck import gradcheck, gradgradcheck  # noqa: E402  (the functions shadow the module, as 1.13's)
