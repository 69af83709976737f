"""torch.autograd.Function: an op whose forward and backward are the user's Python (1.13's staticmethod form).

As 1.13's: the forward runs under no_grad; when grad mode is on and a tensor argument requires grad, one node
(`<MyFunctionBackward object>`, an edge per tensor argument) becomes the outputs' history, and its backward calls
the user's with the gradients of the outputs (zeros where none arrived, unless set_materialize_grads(False)). The
engine makes the node and wraps the outputs (engine/autograd/custom_function.h, Note [Outputs of a custom
Function]): an input marked dirty takes the node as its history as an in-place op's result does, an input returned
as-is comes back as a view of itself, and views among the outputs may not be modified in place (1.13's texts).
Saved tensors are checked at the backward for in-place changes, as any op's.
"""
import functools
import warnings

from tinyddp import _C
from tinyddp._tensor import Tensor
from tinyddp.autograd.grad_mode import is_grad_enabled, no_grad


class FunctionCtx:
    """ctx: save_for_backward / saved_tensors, needs_input_grad, mark_dirty, mark_non_differentiable,
    set_materialize_grads, and any attribute the forward sets."""

    def __init__(self):
        self._saved, self._unpacked = (), None
        self._dirty, self._non_differentiable = [], []
        self.materialize_grads = True

    def save_for_backward(self, *tensors):
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} is of type "
                                f"{type(t).__name__}")
        self._saved = tensors

    @property
    def saved_tensors(self):
        """In the backward: the saved tensors unpacked by the node (checked for in-place changes since they were
        saved, an output with its history); in the forward, what was given."""
        return self._unpacked if self._unpacked is not None else self._saved

    def mark_non_differentiable(self, *tensors):
        self._non_differentiable.extend(tensors)

    def mark_dirty(self, *tensors):
        self._dirty.extend(tensors)

    def set_materialize_grads(self, value):
        self.materialize_grads = value


class Function:
    """Subclass with @staticmethod forward(ctx, *args) and backward(ctx, *grad_outputs); call .apply(*args)."""

    def __init__(self, *args, **kwargs):
        # 1.13 only warns here (its text, missing space included); calling the instance is what fails.
        warnings.warn(f"{type(self)} should not be instantiated. Methods on autograd functionsare all static, so you "
                      "should invoke them on the class itself. Instantiating an autograd function will raise an "
                      "error in a future version of PyTorch.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is deprecated. Please use new-"
                           "style autograd function with static forward method. (Example: https://pytorch.org/docs/"
                           "stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward   # 1.13: "vjp and backward are alias of each other"

    @classmethod
    def apply(cls, *args, **kwargs):
        if kwargs:   # 1.13's apply is a C function taking positional arguments only
            raise TypeError("apply() takes no keyword arguments")
        ctx = FunctionCtx()
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        tensor_args = [a for a in args if isinstance(a, Tensor)]
        records = is_grad_enabled() and any(t.requires_grad for t in tensor_args)
        with no_grad():
            outputs = cls.forward(ctx, *args)
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        node = _C._custom_function_node(cls.__name__ + "Backward", tensor_args,
                                        cls._backward_of(ctx, [isinstance(a, Tensor) for a in args])) \
            if records else None
        wrapped = _C._wrap_custom_function_outputs(node, tensor_args,
                                                   [o if isinstance(o, Tensor) else None for o in outs],
                                                   [t for t in ctx._dirty if isinstance(t, Tensor)],
                                                   [t for t in ctx._non_differentiable if isinstance(t, Tensor)])
        # the same Python object where the engine kept the tensor (a dirty input, a new result), else its new one
        results = tuple(o if not isinstance(o, Tensor) or w._is_same(o) else w for o, w in zip(outs, wrapped))
        if node is not None:
            node.set_materialize_grads(ctx.materialize_grads)
            node.save([t for t in ctx._saved])   # after the wrapping: a saved output is saved as one
        ctx._saved = ()   # the node holds them now (a saved output would otherwise keep the graph alive)
        return results[0] if single else results

    @classmethod
    def _backward_of(cls, ctx, is_tensor):
        """The node's backward: the user's, with 1.13's checks of what it returns; one gradient per tensor
        argument (the node's edges)."""
        name = cls.__name__ + "Backward"

        def run(grads, saved):
            ctx._unpacked = tuple(saved)
            try:
                result = cls.backward(ctx, *grads)
            finally:
                ctx._unpacked = None
            result = result if isinstance(result, tuple) else (result,)
            if len(result) > len(is_tensor) and all(r is None for r in result[len(is_tensor):]):
                result = result[:len(is_tensor)]   # extra Nones are fine
            if len(result) != len(is_tensor):
                raise RuntimeError(f"function {name} returned an incorrect number of gradients (expected "
                                   f"{len(is_tensor)}, got {len(result)})")
            out = []
            for i, (r, tensor) in enumerate(zip(result, is_tensor)):
                if not tensor:
                    if r is not None:
                        raise RuntimeError(f"function {name} returned a gradient different than None at position "
                                           f"{i + 1}, but the corresponding forward input was not a Variable")
                    continue
                if r is not None and not isinstance(r, Tensor):
                    raise RuntimeError(f"expected Variable or None (got {type(r).__name__})")
                out.append(r)
            return out
        return run


def once_differentiable(fn):
    """1.13's decorator for a backward that is not itself differentiable: it runs under no_grad, and where grad mode
    is on and a tensor argument (a gradient reaching it) requires grad, its results are new leaves behind an
    `Error` node, so that differentiating them again raises 1.13's error instead of giving a wrong answer."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            outputs = fn(ctx, *args)
        if not is_grad_enabled() or not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            return outputs
        single = not isinstance(outputs, tuple)
        outs = [o.detach().requires_grad_() if isinstance(o, Tensor) else None
                for o in ((outputs,) if single else outputs)]
        inputs = [o for o in outs if o is not None]

        def refuse(grads, saved):
            raise RuntimeError("trying to differentiate twice a function that was marked with @once_differentiable")
        node = _C._custom_function_node("Error", inputs, refuse)
        results = tuple(_C._wrap_custom_function_outputs(node, inputs, outs, [], []))
        return results[0] if single else results
    return wrapper
