"""The rebuild functions of torch/_utils.py: what a pickled tensor or Parameter calls when it is loaded.

A checkpoint names them torch._utils._rebuild_tensor_v2 and so on (tinyddp.serialization writes and reads those
names); plain pickles of tinyddp tensors name these functions themselves.
"""
from tinyddp._tensor import Tensor


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None):
    """A leaf viewing `storage` (tinyddp.storage.TypedStorage) at (storage_offset, size, stride): PyTorch's
    tensor.set_(storage, offset, size, stride). Tensors rebuilt over one storage object share its memory."""
    t = storage._t._as_strided(list(size), list(stride), storage_offset)
    if requires_grad:
        t.requires_grad_(True)
    _apply_backward_hooks(t, backward_hooks)
    return t


def _apply_backward_hooks(t, backward_hooks):
    # PyTorch restores Tensor._backward_hooks (an OrderedDict, empty unless hooks were registered and pickled):
    # each hook is registered again on a tensor that requires grad, as PyTorch would run it.
    if backward_hooks and t.requires_grad:
        for hook in backward_hooks.values():
            t.register_hook(hook)


def _rebuild_parameter(data, requires_grad, backward_hooks):
    from tinyddp.nn.parameter import Parameter
    param = Parameter(data, requires_grad)
    _apply_backward_hooks(param, backward_hooks)
    return param


def _set_obj_state(obj, state):
    """PyTorch's _set_obj_state: a dict of attributes, or (dict, slots dict)."""
    if isinstance(state, tuple):
        dict_state, slots_state = state
    else:
        dict_state, slots_state = state, None
    for name, value in (dict_state or {}).items():
        setattr(obj, name, value)
    for name, value in (slots_state or {}).items():
        setattr(obj, name, value)
    return obj


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    return _set_obj_state(_rebuild_parameter(data, requires_grad, backward_hooks), state)


def _rebuild_from_type_v2(func, new_type, args, state):
    """torch._tensor._rebuild_from_type_v2: a tensor rebuilt by func(*args) as `new_type` (Tensor or Parameter
    here), then its Python attributes."""
    from tinyddp.nn.parameter import Parameter
    ret = func(*args)
    if type(ret) is not new_type:
        if new_type is Parameter:
            ret = Parameter(ret, ret.requires_grad)
        elif new_type is not Tensor:
            raise TypeError(f"tinyddp: cannot rebuild a tensor of type {new_type!r}; tinyddp has Tensor and "
                            "nn.Parameter only")
    setstate = getattr(type(ret), "__setstate__", None)
    if setstate is not None:
        setstate(ret, state)
    else:
        _set_obj_state(ret, state)
    return ret
