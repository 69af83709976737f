"""torch.nn.parallel.DistributedDataParallel over dist/ddp.h: the reducer, its buckets, hooks, errors and
warnings, the buffer broadcasts and the join hook are the C++ ones. This module hands it the wrapped module's
named parameters and buffers (so messages name them as PyTorch's do), runs the module's forward from inside DDP's
forward, and passes every tensor of the outputs (tensor, tuple, list or dict, flattened) to the unused-parameter
search."""
import inspect
import logging
import warnings
from contextlib import contextmanager

import tinyddp.distributed as dist
from tinyddp import _C
from tinyddp.futures import Future
from tinyddp._tensor import Tensor
from tinyddp.nn.modules.module import Module
from tinyddp.utils._pytree import flatten


def _check_comm_hook(hook):
    """DistributedDataParallel._check_comm_hook of 1.13: callable, and its annotations (when given) say it takes
    a dist.GradBucket named `bucket` and returns a Future[torch.Tensor] (a bare Future is refused, as there). The
    parameter must be named `bucket` (a KeyError otherwise, as there)."""
    if not callable(hook):
        raise TypeError("Communication hook must be callable.")
    sig = inspect.signature(hook)
    if sig.parameters["bucket"].annotation not in (inspect.Parameter.empty, dist.GradBucket):
        raise ValueError("Communication hook: bucket annotation should be dist.GradBucket.")
    if sig.return_annotation is not inspect.Signature.empty and sig.return_annotation != Future[Tensor]:
        raise ValueError("Communication hook: return annotation should be torch.futures.Future[torch.Tensor].")


class DistributedDataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 process_group=None, bucket_cap_mb=25, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False):
        super().__init__()
        # 1.13's checks, in its order, for CPU modules (every tinyddp module)
        if not any(p.requires_grad for p in module.parameters()):
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter that "
                               "requires a gradient.")
        if device_ids is not None and len(device_ids) > 1:
            raise ValueError("device_ids can only be None or contain a single element.")
        # device_ids and output_device must not be given
        if device_ids or output_device:
            devices = {p.device for p in module.parameters()}
            raise ValueError("DistributedDataParallel device_ids and output_device arguments only work with "
                             "single-device/multiple-device GPU modules or CPU modules, but got device_ids "
                             f"{device_ids}, output_device {output_device}, and module parameters {devices}.")
        if process_group is dist.GroupMember.NON_GROUP_MEMBER:
            # new_group() on a rank outside the group: 1.13's parameter check refuses the placeholder (its text
            # goes on with the object's address and the parameters)
            raise TypeError("_verify_params_across_processes(): incompatible function arguments. The following "
                            "argument types are supported:")
        if process_group is None:
            if not dist.is_initialized():   # 1.13's _get_default_group()
                raise RuntimeError("Default process group has not been initialized, please make sure to call "
                                   "init_process_group.")
            process_group = dist.group.WORLD
        self.module = module
        self.process_group = process_group
        self.broadcast_buffers = broadcast_buffers
        # 1.13's public attributes, as it sets them for a CPU module (read-only here, but for the sync switches)
        self.is_multi_device_module = False
        self.device_type = "cpu"
        self.device_ids = None
        self.output_device = None
        self.dim = dim
        self.device = next(iter(module.parameters())).device
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.bucket_bytes_cap = int(bucket_cap_mb * 1024 * 1024)
        self.parameters_to_ignore = []
        self._no_sync_guard = False    # whether require_backward_grad_sync=False holds the reducer's no_sync
        # False after a forward that prepared no reduction (no grad, or no gradient sync), as 1.13's
        self.require_forward_param_sync = True
        if check_reduction:
            warnings.warn("The `check_reduction` argument in `DistributedDataParallel` module is deprecated. Please "
                          "avoid using it.")
        from tinyddp.nn.modules.linear import LazyLinear   # tinyddp's lazy module: its parameters are placeholders
        if any(isinstance(m, LazyLinear) for m in module.modules()):
            raise RuntimeError("Modules with uninitialized parameters can't be used with `DistributedDataParallel`. "
                               "Run a dummy forward pass to correctly initialize the modules")
        self._options = (float(bucket_cap_mb), find_unused_parameters, static_graph, gradient_as_bucket_view,
                         broadcast_buffers)
        options = _C._dist.DDPOptions(*self._options, dist.get_debug_level().name)
        # Construction broadcasts rank 0's parameters and buffers; with broadcast_buffers each synced forward
        # copies rank 0's buffers again, in place (their versions bump, as 1.13's broadcast does).
        object.__setattr__(self, "_ddp", _C._dist.DistributedDataParallel(
            list(module.named_parameters()), options, list(module.named_buffers()), process_group._pg))
        # 1.13 refuses SyncBatchNorm on CPU modules once the reducer is built (after the broadcasts)
        from tinyddp.nn.modules.batchnorm import SyncBatchNorm
        if any(isinstance(layer, SyncBatchNorm) for layer in module.modules()):
            raise ValueError("SyncBatchNorm layers only work with GPU modules")

    def __getstate__(self):
        """What copy.deepcopy and pickle keep of a DDP, as 1.13's: everything but the reducer and the process group
        (a default group must exist, as there)."""
        dist.get_rank()   # 1.13's _check_default_group: RuntimeError without one
        state = dict(self.__dict__)
        del state["_ddp"], state["process_group"]
        state["_no_sync_guard"] = False
        return state

    def __setstate__(self, state):
        """A copy gets a reducer of its own over its own parameters, built without a collective (1.13's
        _ddp_init_helper); the comm hook and no_sync() are not carried over."""
        self.__dict__.update(state)
        self.process_group = dist._WORLD
        object.__setattr__(self, "_ddp", _C._dist.DistributedDataParallel(
            list(self.module.named_parameters()),
            _C._dist.DDPOptions(*self._options, dist.get_debug_level().name, copy=True),
            list(self.module.named_buffers())))

    def forward(self, *inputs, **kwargs):
        result = {}
        had_rebuilt = self._ddp.has_rebuilt_buckets

        def run_module():
            if not had_rebuilt and self._ddp.has_rebuilt_buckets:   # the reducer's one rebuild, just now
                logging.getLogger("torch.nn.parallel.distributed").info(
                    "Reducer buckets have been rebuilt in this iteration.")
            result["out"] = self.module(*inputs, **kwargs)
            flat = []
            result["rebuild"] = flatten(result["out"], flat)
            return flat

        flat = self._ddp.forward(run_module)
        from tinyddp.autograd.grad_mode import is_grad_enabled
        self.require_forward_param_sync = is_grad_enabled() and self.require_backward_grad_sync
        return result["rebuild"](flat)

    @property
    def require_backward_grad_sync(self):
        """False inside no_sync(); setting it False by hand, as some training loops do, is no_sync() until it is
        set True again (1.13's no_sync is this switch)."""
        return not self.__dict__.get("_no_sync_guard", False)

    @require_backward_grad_sync.setter
    def require_backward_grad_sync(self, value):
        if not value and not self._no_sync_guard:
            self._ddp.enter_no_sync()
            self._no_sync_guard = True
        elif value and self._no_sync_guard:
            self._ddp.exit_no_sync()
            self._no_sync_guard = False

    @contextmanager
    def no_sync(self):
        """Forwards and backwards in scope accumulate gradients locally; the first synced backward averages them."""
        old_require_backward_grad_sync = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old_require_backward_grad_sync

    def join(self, divide_by_initial_world_size=True, enable=True, throw_on_early_termination=False):
        """The join context for uneven inputs over this DDP (tinyddp.distributed.algorithms.join.Join)."""
        from tinyddp.distributed.algorithms.join import Join
        return Join([self], enable, throw_on_early_termination,
                    divide_by_initial_world_size=divide_by_initial_world_size)

    def register_comm_hook(self, state, hook):
        """hook(state, bucket: dist.GradBucket) -> Future: reduces one bucket of gradients in place of DDP's
        allreduce. The Future's value must be the bucket's tensor of reduced (averaged) gradients; the reducer
        copies it into the parameters' .grad. Register it before the first backward; once per DDP."""
        _check_comm_hook(hook)
        params = [p for _, p in self.module.named_parameters()]

        def run(index, buffer, parameter_indices, is_last):
            # Called by the reducer (under the GIL) when a bucket is ready; a str it gets back is an error text.
            result = hook(state, dist.GradBucket(index, buffer, [params[i] for i in parameter_indices], is_last))
            if not isinstance(result, Future):
                # 1.13's text, pybind11's cast failure included, so that it can be searched.
                got = "torch.Tensor" if isinstance(result, Tensor) else type(result).__qualname__
                return ("Unable to cast Python instance to C++ type (#define PYBIND11_DETAILED_ERROR_MESSAGES or "
                        "compile in debug mode for details). DDP communication hook's callback must return a "
                        f"torch.futures.Future object, but got {got}")
            return result

        self._ddp.register_comm_hook(run)

    @property
    def static_graph(self):
        return self._ddp.static_graph

    def _set_static_graph(self):
        """1.13's private switch to static_graph=True after construction, before the first iteration (the
        constructor's static_graph=True is the recommended way)."""
        self._ddp.set_static_graph()

    def _check_before_step(self):
        """tinyddp's addition: warns when gradients accumulated inside no_sync() were never averaged."""
        self._ddp.check_before_step()

    def _get_ddp_logging_data(self):
        """The buckets (parameter indices, in launch order) and the names the reducer's messages use."""
        return {"bucket_indices": self._ddp.bucket_indices(),
                "parameter_names": [name for name, _ in self.module.named_parameters()]}
