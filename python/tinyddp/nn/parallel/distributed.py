"""torch.nn.parallel.DistributedDataParallel over dist/ddp.h: the reducer, its buckets, hooks, errors and
warnings are the C++ ones. This module hands it the wrapped module's named parameters (so messages name them as
PyTorch's do), runs the module's forward from inside DDP's forward, and passes every tensor of the outputs
(tensor, tuple, list or dict, flattened) to the unused-parameter search."""
from contextlib import contextmanager

from tinyddp import _C
from tinyddp._tensor import Tensor
from tinyddp.nn.modules.module import Module


def _flatten(obj, out):
    """Appends the tensors of `obj` to `out`, depth first; returns a function that rebuilds `obj` from them."""
    if isinstance(obj, Tensor):
        i = len(out)
        out.append(obj)
        return lambda flat: flat[i]
    if isinstance(obj, (tuple, list)):
        builders = [_flatten(x, out) for x in obj]
        kind = type(obj)
        if isinstance(obj, tuple) and hasattr(obj, "_fields"):   # a namedtuple
            return lambda flat: kind(*[b(flat) for b in builders])
        return lambda flat: kind(b(flat) for b in builders)
    if isinstance(obj, dict):
        builders = [(k, _flatten(v, out)) for k, v in obj.items()]
        kind = type(obj)
        return lambda flat: kind((k, b(flat)) for k, b in builders)
    return lambda flat: obj


class DistributedDataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True,
                 process_group=None, bucket_cap_mb=25, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False):
        super().__init__()
        if process_group is not None:
            raise NotImplementedError("DistributedDataParallel(process_group=...): tinyddp uses the default group.")
        self.module = module
        self.broadcast_buffers = broadcast_buffers
        options = _C._dist.DDPOptions(float(bucket_cap_mb), find_unused_parameters, static_graph,
                                      gradient_as_bucket_view)
        object.__setattr__(self, "_ddp", _C._dist.DistributedDataParallel(list(module.named_parameters()), options))
        self._sync_buffers()   # PyTorch's _sync_module_states: parameters (done by the C++ DDP) and buffers

    def _sync_buffers(self):
        """Rank 0's buffers to every rank, as PyTorch does at construction and before each synced forward.
        tinyddp's C++ DDP has no buffers, so this is the glue's broadcast."""
        buffers = [b for b in self.module.buffers()]
        if buffers and _C._dist.get_world_size() > 1:
            _C._dist.broadcast_coalesced(buffers, 0)

    def forward(self, *inputs, **kwargs):
        if self.broadcast_buffers and _C.is_grad_enabled() and not getattr(self, "_in_no_sync", False):
            self._sync_buffers()
        result = {}

        def run_module():
            result["out"] = self.module(*inputs, **kwargs)
            flat = []
            result["rebuild"] = _flatten(result["out"], flat)
            return flat

        flat = self._ddp.forward(run_module)
        return result["rebuild"](flat)

    @contextmanager
    def no_sync(self):
        """Forwards and backwards in scope accumulate gradients locally; the first synced backward averages them."""
        self._ddp.enter_no_sync()
        previous = getattr(self, "_in_no_sync", False)
        object.__setattr__(self, "_in_no_sync", True)
        try:
            yield
        finally:
            object.__setattr__(self, "_in_no_sync", previous)
            self._ddp.exit_no_sync()

    def _check_before_step(self):
        """tinyddp's addition: warns when gradients accumulated inside no_sync() were never averaged."""
        self._ddp.check_before_step()

    def _get_ddp_logging_data(self):
        """The buckets (parameter indices, in launch order) and the names the reducer's messages use."""
        return {"bucket_indices": self._ddp.bucket_indices(),
                "parameter_names": [name for name, _ in self.module.named_parameters()]}
