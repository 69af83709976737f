"""torch.autograd.graph: saved_tensors_hooks over engine/autograd/saved_tensor_hooks.h."""
from tinyddp import _C


class saved_tensors_hooks:  # noqa: N801  (PyTorch's name)
    """While in scope, every tensor an op saves for backward goes through pack_hook(tensor), which may return any
    object; the backward gets the tensor back from unpack_hook(packed). Only the innermost pair applies, and a
    pair stays with the tensors saved under it after the scope ends (PyTorch 1.13's semantics; the engine's
    header lists them). Hooks are per thread: enter and exit the scope on one thread."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        _C._push_saved_tensors_default_hooks(self.pack_hook, self.unpack_hook)

    def __exit__(self, *args):
        _C._pop_saved_tensors_default_hooks()


__all__ = ["saved_tensors_hooks"]
