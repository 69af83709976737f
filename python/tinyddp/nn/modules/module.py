"""torch.nn.Module for Python subclasses (PyTorch's torch/nn/modules/module.py is Python too).

Parameters, buffers and submodules are registered by attribute assignment, in assignment order, and walked as
PyTorch walks them: a module's own entries before its children's, depth first, each tensor or module once
under the first name it was reached by. The module tree is Python's; every tensor operation (zero_grad's
in-place zeroing, copies in load_state_dict) runs in the engine. models/nn's C++ Module cannot hold Python
children or buffers, so the walk is written here once for Python modules.
"""
import functools
import warnings
from collections import OrderedDict, namedtuple
from collections.abc import Mapping

from tinyddp import _C
from tinyddp._device import _NO_CUDA, _parse_to
from tinyddp import _tensor as _tensor_module
from tinyddp._tensor import Tensor, dtype as _dtype, float32 as _float32, float64 as _float64
from tinyddp.autograd.grad_mode import no_grad
from tinyddp.nn.parameter import Parameter
from tinyddp._tensor_more import typename as _typename   # 1.13's texts name a tensor by type(): 'torch.FloatTensor'
from tinyddp._object_repr import object_repr


_EXTRA_STATE_KEY = "_extra_state"   # the key suffix of a module's get_extra_state() value


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(text, spaces):
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    return lines[0] + "\n" + "\n".join(" " * spaces + line for line in lines[1:])


def _identity_function():
    from tinyddp.autograd.function import Function

    class BackwardHookFunction(Function):
        """Identity on its tensors, returned as they are (so, as 1.13's, each comes back as a view of itself made by
        a custom Function, which an in-place op may not modify); its backward hands their gradients to
        `on_backward` (which may replace them)."""

        @staticmethod
        def forward(ctx, on_backward, *tensors):
            ctx.on_backward = on_backward
            ctx.mark_non_differentiable(*[t for t in tensors if not t.requires_grad])
            return tensors

        @staticmethod
        def backward(ctx, *grads):
            return (None,) + tuple(ctx.on_backward(grads))
    return BackwardHookFunction


def _backward_hook_inputs(module, args):
    """The module's tensor args passed through the input-side identity (if any needs a gradient)."""
    from tinyddp._tensor import Tensor
    fn = _identity_function()
    state = {"module": module, "grad_output": None, "n_inputs": sum(isinstance(a, Tensor) for a in args),
             "has_inputs": any(isinstance(a, Tensor) and a.requires_grad for a in args)}
    if not state["has_inputs"]:
        return state, args
    positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]

    def on_backward(grads):
        grads = tuple(grads)
        for hook in list(module._backward_hooks.values()):
            result = hook(module, grads, state["grad_output"])
            if result is not None:
                grads = tuple(result)
        return grads
    wrapped = fn.apply(on_backward, *[args[i] for i in positions])
    wrapped = wrapped if isinstance(wrapped, tuple) else (wrapped,)
    args = list(args)
    for i, t in zip(positions, wrapped):
        args[i] = t
    return state, tuple(args)


def _backward_hook_outputs(state, output):
    """The output tensors passed through the output-side identity, which records grad_output (and calls the hooks
    when no input needs a gradient)."""
    from tinyddp._tensor import Tensor
    single = isinstance(output, Tensor)
    outs = (output,) if single else output
    if not isinstance(outs, tuple) or not all(isinstance(o, Tensor) for o in outs):
        return output
    module = state["module"]

    def on_backward(grads):
        state["grad_output"] = tuple(grads)
        if not state["has_inputs"]:
            grad_input = (None,) * state["n_inputs"]
            for hook in list(module._backward_hooks.values()):
                hook(module, grad_input, state["grad_output"])
        return grads
    wrapped = _identity_function().apply(on_backward, *outs)
    wrapped = wrapped if isinstance(wrapped, tuple) else (wrapped,)
    return wrapped[0] if single else wrapped


class RemovableHandle:
    """torch.utils.hooks.RemovableHandle: remove() takes the hook out of the dict it was registered in; also a
    context manager that removes it on exit."""
    __repr__ = object_repr   # <torch....Name object at 0x...>, as 1.13's default repr
    _torch_module = "torch.utils.hooks"   # where 1.13 keeps it
    _next_id = 0

    def __init__(self, hooks_dict):
        self._hooks = hooks_dict
        self.id = RemovableHandle._next_id
        RemovableHandle._next_id += 1

    def remove(self):
        self._hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


# torch.nn.modules.module's global hooks: every module's call runs them before its own (pre-hooks, then hooks)
_global_forward_pre_hooks = OrderedDict()
_global_forward_hooks = OrderedDict()


def register_module_forward_pre_hook(hook):
    handle = RemovableHandle(_global_forward_pre_hooks)
    _global_forward_pre_hooks[handle.id] = hook
    return handle


def register_module_forward_hook(hook):
    handle = RemovableHandle(_global_forward_hooks)
    _global_forward_hooks[handle.id] = hook
    return handle


class Module:
    training: bool
    # The state_dict format version, recorded per module in state_dict()._metadata (PyTorch's: 1; BatchNorm's 2)
    _version: int = 1

    def __init__(self):
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent_buffers_set", set())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_forward_pre_hooks", OrderedDict())
        object.__setattr__(self, "_forward_hooks", OrderedDict())
        object.__setattr__(self, "_backward_hooks", OrderedDict())
        object.__setattr__(self, "_state_dict_hooks", OrderedDict())
        object.__setattr__(self, "_load_state_dict_pre_hooks", OrderedDict())
        object.__setattr__(self, "_load_state_dict_post_hooks", OrderedDict())

    def forward(self, *input):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    def __call__(self, *args, **kwargs):
        """PyTorch 1.13's _call_impl without global hooks: pre-hooks see (module, args) and may return new args
        (a non-tuple is wrapped in one); forward hooks see (module, args, output) and may return a new output.
        Keyword arguments go to forward only, as in 1.13."""
        backward_hooks = self.__dict__.get("_backward_hooks")
        if (not self._forward_pre_hooks and not self._forward_hooks and not backward_hooks
                and not _global_forward_pre_hooks and not _global_forward_hooks):   # the common case
            return self.forward(*args, **kwargs)
        for hook in (*_global_forward_pre_hooks.values(), *self._forward_pre_hooks.values()):
            result = hook(self, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
        state = None
        full = backward_hooks and self.__dict__.get("_is_full_backward_hook") is not False
        if full:
            state, args = _backward_hook_inputs(self, args)
        output = self.forward(*args, **kwargs)
        for hook in (*_global_forward_hooks.values(), *self._forward_hooks.values()):
            result = hook(self, args, output)
            if result is not None:
                output = result
        if state is not None:
            output = _backward_hook_outputs(state, output)
        if backward_hooks and not full:
            self._register_non_full_backward_hooks(args, output)
        return output

    def _register_non_full_backward_hooks(self, args, output):
        """1.13's deprecated register_backward_hook: the hooks go on the grad_fn of the first tensor of the
        output, and see that one node's gradients (with 1.13's warnings where that misses some)."""
        var = output
        while not isinstance(var, Tensor):
            var = next(v for v in var.values() if isinstance(v, Tensor)) if isinstance(var, dict) else var[0]
        grad_fn = var.grad_fn
        if grad_fn is None:
            return
        for hook in list(self._backward_hooks.values()):
            grad_fn.register_hook(lambda grad_input, grad_output, hook=hook: hook(self, grad_input, grad_output))
        if isinstance(output, Tensor):
            results = (output,)
        elif isinstance(output, tuple) and all(isinstance(r, Tensor) for r in output):
            results = output
        else:
            warnings.warn("Using non-full backward hooks on a Module that does not return a single Tensor or a tuple "
                          "of Tensors is deprecated and will be removed in future versions. This hook will be missing "
                          "some of the grad_output. Please use register_full_backward_hook to get the documented "
                          "behavior.")
            return
        if not all(isinstance(a, Tensor) for a in args):
            warnings.warn("Using non-full backward hooks on a Module that does not take as input a single Tensor or a "
                          "tuple of Tensors is deprecated and will be removed in future versions. This hook will be "
                          "missing some of the grad_input. Please use register_full_backward_hook to get the "
                          "documented behavior.")
            return
        out_grad_fn = [r.grad_fn for r in results if r.grad_fn is not None]
        distinct = []
        for fn in out_grad_fn:
            if not any(fn is d for d in distinct):
                distinct.append(fn)
        if not distinct or (len(distinct) == 1 and distinct[0] is not grad_fn):
            warnings.warn("Using a non-full backward hook when outputs are nested in python data structure is "
                          "deprecated and will be removed in future versions. This hook will be missing some "
                          "grad_output.")
        elif len(distinct) > 1:
            warnings.warn("Using a non-full backward hook when outputs are generated by different autograd Nodes is "
                          "deprecated and will be removed in future versions. This hook will be missing some "
                          "grad_output. Please use register_full_backward_hook to get the documented behavior.")
        else:
            inputs_grad_fn = {id(a.grad_fn) for a in args if a.grad_fn is not None}
            next_functions = {id(n[0]) for n in grad_fn.next_functions}
            if inputs_grad_fn != next_functions:
                warnings.warn("Using a non-full backward hook when the forward contains multiple autograd Nodes is "
                              "deprecated and will be removed in future versions. This hook will be missing some "
                              "grad_input. Please use register_full_backward_hook to get the documented behavior.")

    def register_forward_pre_hook(self, hook):
        handle = RemovableHandle(self._forward_pre_hooks)
        self._forward_pre_hooks[handle.id] = hook
        return handle

    def register_backward_hook(self, hook):
        """1.13's deprecated form: hook(module, grad_input, grad_output) on the grad_fn of the forward's (first)
        output, so grad_input are that node's input gradients (for Linear's addmm: bias, input, weight.t()).
        tinyddp's hook may observe them but not return replacements."""
        return self._add_backward_hook(hook, full=False)

    def register_full_backward_hook(self, hook):
        """hook(module, grad_input, grad_output) once the gradients wrt the module's tensor inputs are computed
        (grad_input holds None for inputs that need none); it may return new grad_input. Identity autograd
        Functions around the inputs and outputs observe the gradients, as 1.13's BackwardHook does."""
        return self._add_backward_hook(hook, full=True)

    def _add_backward_hook(self, hook, full):
        """One module has backward hooks of one kind, regular or full (1.13's _is_full_backward_hook)."""
        if self.__dict__.get("_is_full_backward_hook") is (not full):
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single Module. "
                               "Please use only one of them.")
        object.__setattr__(self, "_is_full_backward_hook", full)
        handle = RemovableHandle(self._backward_hooks)
        self._backward_hooks[handle.id] = hook
        return handle

    def register_forward_hook(self, hook):
        handle = RemovableHandle(self._forward_hooks)
        self._forward_hooks[handle.id] = hook
        return handle

    def _hooks(self, name):
        """The hook dict `name`, made on first use (a module unpickled from an older tinyddp has none)."""
        return self.__dict__.setdefault(name, OrderedDict())

    def _register_state_dict_hook(self, hook):
        """hook(module, state_dict, prefix, local_metadata) after state_dict() has saved this module's subtree;
        a result that is not None replaces the state dict."""
        hooks = self._hooks("_state_dict_hooks")
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        return handle

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        """hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs), with the
        module first when with_module, before this module loads its own tensors (it may edit the state dict)."""
        hooks = self._hooks("_load_state_dict_pre_hooks")
        handle = RemovableHandle(hooks)
        hooks[handle.id] = functools.partial(hook, self) if with_module else hook
        return handle

    def register_load_state_dict_post_hook(self, hook):
        """hook(module, incompatible_keys) after load_state_dict has loaded this module's subtree; it may edit the
        keys' lists in place (the root's edits count for strict), and must return None."""
        hooks = self._hooks("_load_state_dict_post_hooks")
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        return handle

    def get_submodule(self, target):
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def get_parameter(self, target):
        module_path, _, param_name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, param_name):
            raise AttributeError(mod._get_name() + " has no attribute `" + param_name + "`")
        param = getattr(mod, param_name)
        from tinyddp.nn.parameter import Parameter
        if not isinstance(param, Parameter):
            raise AttributeError("`" + param_name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target):
        module_path, _, buffer_name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, buffer_name):
            raise AttributeError(mod._get_name() + " has no attribute `" + buffer_name + "`")
        if buffer_name not in mod._buffers:
            raise AttributeError("`" + buffer_name + "` is not a buffer")
        return getattr(mod, buffer_name)

    def share_memory(self):
        """A no-op: tinyddp's worker processes share no tensors (each has its own copy)."""
        return self

    # ---- registration ----
    def _check_init(self):
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameters before Module.__init__() call")

    def register_parameter(self, name, param):
        self._check_init()
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
        elif not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        elif param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be created "
                             f"explicitly. To express '{name}' as a function of another Tensor, compute the value in "
                             "the forward() method.")
        else:
            self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        self._check_init()
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name, module):
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._modules[name] = module

    register_module = add_module

    def __setattr__(self, name, value):
        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self.__dict__.pop(name, None)
            self._buffers.pop(name, None)
            self._modules.pop(name, None)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            if "_modules" not in self.__dict__:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self.__dict__.pop(name, None)
            self._parameters.pop(name, None)
            self._buffers.pop(name, None)
            self._modules[name] = value
        elif "_modules" in self.__dict__ and name in self._modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            self._modules[name] = value
        elif "_buffers" in self.__dict__ and name in self._buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                "(torch.Tensor or None expected)")
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        for store in ("_parameters", "_buffers", "_modules"):
            d = self.__dict__.get(store)
            if d is not None and name in d:
                return d[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for store in (self._parameters, self._buffers, self._modules):
            if name in store:
                del store[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    # ---- traversal ----
    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            yield from module.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        seen = set()
        for name, module in self._modules.items():
            if module is not None and module not in seen:
                seen.add(module)
                yield name, module

    def children(self):
        for _, m in self.named_children():
            yield m

    def _named_members(self, store, prefix="", recurse=True, remove_duplicate=True):
        seen = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for name, value in getattr(module, store).items():
                if value is None or (remove_duplicate and value in seen):
                    continue
                if remove_duplicate:
                    seen.add(value)
                yield module_prefix + ("." if module_prefix else "") + name, value

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def apply(self, fn):
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # ---- state ----
    def get_extra_state(self):
        """What a module that overrides it adds to its state dict under `_extra_state` (any picklable value)."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called. Please "
                           "file an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml "
                           "to report this bug.")

    def set_extra_state(self, state):
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called. Please "
                           "file an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml "
                           "to report this bug.")

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        """This module's own entries: its parameters, its persistent buffers, then its extra state (when its class
        overrides get_extra_state). Override it to change what one module saves."""
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """Each module's _save_to_state_dict, then its children's, then its state-dict hooks (1.13's protocol);
        `destination._metadata` holds {"version": module._version} per module prefix (torch.save writes it, so a
        tinyddp checkpoint's state dicts are PyTorch's). Positional arguments warn, as in 1.13."""
        if args:   # 1.13's reading: a keyword given too wins
            destination = args[0] if destination is None else destination
            prefix = args[1] if len(args) > 1 and prefix == "" else prefix
            keep_vars = args[2] if len(args) > 2 and keep_vars is False else keep_vars
            warnings.warn("Positional args are being deprecated, use kwargs instead. Refer to "
                          "https://pytorch.org/docs/master/generated/torch.nn.Module.html#torch.nn.Module.state_dict"
                          " for details.", stacklevel=2)
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = dict(version=self._version)
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        for hook in self._hooks("_state_dict_hooks").values():
            result = hook(self, destination, prefix, local_metadata)
            if result is not None:
                destination = result
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        """Loads this module's own entries from state_dict (the keys under `prefix`), in place, as 1.13's: the
        pre-hooks first, then each parameter and persistent buffer (a missing key, a non-tensor, a size mismatch or
        a failed copy is recorded, not raised), the extra state, and the keys under prefix that name nothing here.
        Override it to read an older format (BatchNorm's version 1, say)."""
        for hook in self._hooks("_load_state_dict_pre_hooks").values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        persistent = {k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set}
        local_state = {k: v for k, v in list(self._parameters.items()) + list(persistent.items()) if v is not None}
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            source = state_dict[key]
            if not isinstance(source, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected torch.Tensor or Tensor-like '
                                  f"object from checkpoint but received {type(source)}")
                continue
            if param.dim() == 0 and source.dim() == 1:   # a 0.3-era 1-element tensor for a 0-dim one
                source = source[0]
            if source.shape != param.shape:
                error_msgs.append(f"size mismatch for {key}: copying a param with shape {source.shape} from "
                                  f"checkpoint, the shape in current model is {param.shape}.")
                continue
            try:
                with no_grad():
                    param.copy_(source)
            except Exception as ex:   # noqa: BLE001  (1.13 records whatever the copy raised)
                error_msgs.append(f'While copying the parameter named "{key}", whose dimensions in the model are '
                                  f"{param.size()} and whose dimensions in the checkpoint are {source.size()}, an "
                                  f"exception occurred : {ex.args}.")
        extra_key = prefix + _EXTRA_STATE_KEY
        if type(self).set_extra_state is not Module.set_extra_state:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            for key in state_dict.keys():
                if key.startswith(prefix) and key != extra_key:
                    name = key[len(prefix):].split(".", 1)[0]   # a parameter, buffer or child of this module
                    if name not in self._modules and name not in local_state:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict=True):
        """Copies the values in place (the tensors keep their identity: optimizers and DDP built on them keep
        working) by 1.13's protocol: each module's _load_from_state_dict on the keys under its prefix, pre-order,
        each module's post-hooks after its subtree; then strict's errors, PyTorch's texts."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata

        def load(module, local_state_dict, prefix=""):
            local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
            module._load_from_state_dict(local_state_dict, prefix, local_metadata, True, missing, unexpected, errors)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    load(child, {k: v for k, v in local_state_dict.items() if k.startswith(child_prefix)},
                         child_prefix)
            keys = _IncompatibleKeys(missing, unexpected)   # hooks may edit the lists in place
            for hook in module._hooks("_load_state_dict_post_hooks").values():
                out = hook(module, keys)
                assert out is None, ("Hooks registered with ``register_load_state_dict_post_hook`` are not"
                                     "expected to return new values, if incompatible_keys need to be modified,"
                                     "it should be done inplace.")
        load(self, state_dict)
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(type(self).__name__,
                                                                                   "\n\t".join(errors)))
        return _IncompatibleKeys(missing, unexpected)

    # ---- training ----
    def to(self, *args, **kwargs):
        """Module.to(device, dtype), to(dtype), to(tensor): the device must be the CPU, where every tensor already
        is; a dtype converts the floating parameters and buffers (and their gradients), as 1.13's."""
        _, dtype, _ = _parse_to(args, kwargs, _dtype, Tensor)
        if dtype is not None:
            if not dtype.is_floating_point:
                raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but got desired "
                                f"dtype={dtype}")
            self._convert_floating(dtype)
        return self

    def double(self):
        return self._convert_floating(_float64)

    def float(self):  # noqa: A003  (PyTorch's name)
        return self._convert_floating(_float32)

    def half(self):
        return self._convert_floating(_tensor_module.float16)

    def bfloat16(self):
        return self._convert_floating(_tensor_module.bfloat16)

    def type(self, dst_type):  # noqa: A003  (PyTorch's name)
        """Every parameter and buffer cast to dst_type (a dtype or a legacy tensor class), as 1.13's."""
        dtype = getattr(dst_type, "dtype", dst_type)
        for t in list(self.parameters()) + list(self.buffers()):
            if t.dtype is not dtype:
                grad = t.grad
                t.data = t.detach().to(dtype)
                if grad is not None:
                    t.grad = grad.to(dtype)
        return self

    def _convert_floating(self, dtype):
        """Every floating parameter and buffer of this module and its submodules in `dtype`: 1.13's
        `param.data = param.to(dtype)` (the same Parameter objects, so optimizers and hooks keep working), and
        each existing .grad likewise."""
        for t in list(self.parameters()) + list(self.buffers()):
            if t.is_floating_point() and t.dtype is not dtype:
                grad = t.grad
                t.data = t.detach().to(dtype)
                if grad is not None:
                    t.grad = grad.to(dtype)
        return self

    def cpu(self):
        return self

    def cuda(self, device=None):
        raise AssertionError(_NO_CUDA)

    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=False):
        """PyTorch 1.13's default: zero each existing .grad in place (models/nn's zero_grad_of)."""
        _C._nn.zero_grad(list(self.parameters()), set_to_none)

    # ---- printing ----
    def extra_repr(self):
        return ""

    def _get_name(self):
        return type(self).__name__

    def __repr__(self):
        lines = [line for line in self.extra_repr().split("\n") if line]
        for name, module in self._modules.items():
            lines.append("(" + name + "): " + _addindent(repr(module), 2))
        head = self._get_name() + "("
        if not self._modules and len(lines) <= 1:
            return head + (lines[0] if lines else "") + ")"
        return head + "\n  " + "\n  ".join(lines) + "\n)"

    def __dir__(self):
        return sorted(set(object.__dir__(self)) | set(self._parameters) | set(self._buffers) | set(self._modules))
