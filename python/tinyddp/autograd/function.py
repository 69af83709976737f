"""torch.autograd.Function: an op whose forward and backward are the user's Python (1.13's staticmethod form).

The engine has no Python node, so apply() builds one from what it has: the forward runs under no_grad, and each
output becomes `value + link`, where `link` is an exact zero computed from a view ("gate") of every input that
requires grad (the sum of an empty slice of each). The gradient reaching an output is the gradient reaching
its link, which a hook records; the gates' hooks then run the user's backward once, with those gradients, and
replace each gate's (zero) gradient by the backward's result for that input. So the gradients, hooks order and
DDP's reducer see 1.13's values. That graph is recorded as one node named as 1.13's, `<MyFunctionBackward object>`,
with an edge to each tensor argument (tinyddp/_node.py).
"""
from tinyddp import _C, _tensor
from tinyddp._node import recorded
from tinyddp._tensor import Tensor
from tinyddp.autograd.grad_mode import is_grad_enabled, no_grad


class FunctionCtx:
    """ctx: save_for_backward / saved_tensors, needs_input_grad, mark_non_differentiable,
    set_materialize_grads, and any attribute the forward sets."""

    def __init__(self):
        self._saved, self._non_differentiable, self.materialize_grads = (), set(), True

    def save_for_backward(self, *tensors):
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError("save_for_backward can only save variables, but argument 0 is of type "
                                f"{type(t).__name__}")
        self._saved = tensors

    @property
    def saved_tensors(self):
        return self._saved

    def mark_non_differentiable(self, *tensors):
        self._non_differentiable.update(id(t) for t in tensors)

    def mark_dirty(self, *tensors):
        raise NotImplementedError("tinyddp: autograd.Function with in-place outputs (mark_dirty) is not supported")

    def set_materialize_grads(self, value):
        self.materialize_grads = value


class _Backward:
    """One apply()'s bookkeeping: the outputs' gradients (recorded by the links' hooks) and the inputs'
    (from the user's backward, computed at the first gate hook)."""

    def __init__(self, cls, ctx, outputs, n_inputs):
        self.cls, self.ctx, self.outputs, self.n_inputs = cls, ctx, outputs, n_inputs
        self.output_grads, self.input_grads = [None] * len(outputs), None

    def record(self, k):
        def hook(grad):
            self.output_grads[k] = grad
            self.input_grads = None   # a new backward through this graph (retain_graph) runs the user's again
        return hook

    def gate(self, i):
        def hook(grad):
            if self.input_grads is None:
                self.input_grads = self._run()
            return self.input_grads[i]
        return hook

    def _run(self):
        grads = [g if g is not None or not self.ctx.materialize_grads or not isinstance(o, Tensor)
                 else _tensor.zeros_like(o) for g, o in zip(self.output_grads, self.outputs)]
        result = self.cls.backward(self.ctx, *grads)
        result = result if isinstance(result, tuple) else (result,)
        if len(result) != self.n_inputs:
            if len(result) < self.n_inputs or any(r is not None for r in result[self.n_inputs:]):
                raise RuntimeError(f"function {self.cls.__name__}Backward returned an incorrect number of "
                                   f"gradients (expected {self.n_inputs}, got {len(result)})")
            result = result[:self.n_inputs]
        self.output_grads = [None] * len(self.outputs)
        return result


class Function:
    """Subclass with @staticmethod forward(ctx, *args) and backward(ctx, *grad_outputs); call .apply(*args)."""

    def __init__(self, *args, **kwargs):
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

    @classmethod
    def apply(cls, *args):
        ctx = FunctionCtx()
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        with no_grad():
            outputs = cls.forward(ctx, *args)
        differentiable = [i for i, a in enumerate(args) if isinstance(a, Tensor) and a.requires_grad]
        if not differentiable or not is_grad_enabled():
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        tensors = [k for k, out in enumerate(outs) if isinstance(out, Tensor)]

        def link_tensors():
            linked = cls._linked(ctx, args, outs, differentiable)
            return tuple(linked[k] for k in tensors)
        linked = list(outs)
        for k, out in zip(tensors, recorded(cls.__name__ + "Backward", [a for a in args if isinstance(a, Tensor)],
                                            link_tensors)):
            linked[k] = out
        return linked[0] if single else tuple(linked)

    @classmethod
    def _linked(cls, ctx, args, outs, differentiable):
        """outs, each differentiable one as its value plus the link that carries its gradient (the class's
        docstring)."""
        state = _Backward(cls, ctx, outs, len(args))
        link = None
        for i in differentiable:
            gate = args[i].view(list(args[i].shape))
            gate.register_hook(state.gate(i))
            zero = gate.reshape([-1]).narrow(0, 0, 0).sum()   # exactly 0, whatever the input holds
            link = zero if link is None else link + zero
        linked = []
        for k, out in enumerate(outs):
            if (not isinstance(out, Tensor) or not out.is_floating_point()
                    or id(out) in ctx._non_differentiable):
                linked.append(out)
                continue
            # a node of its own per output (expand and to() return their input when nothing changes)
            spread = _C.expand(link.to(out.dtype), list(out.shape)).view(list(out.shape))
            spread.register_hook(state.record(k))
            linked.append(out.detach() + spread)
        return linked


def once_differentiable(fn):
    """1.13's decorator for a backward that is not itself differentiable: here the backward runs as written."""
    return fn
