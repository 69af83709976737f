"""torch.nn.parallel.DistributedDataParallel over dist/ddp.h: the reducer, its buckets, hooks, errors and
warnings, the buffer broadcasts and the join hook are the C++ ones. This module hands it the wrapped module's
named parameters and buffers (so messages name them as PyTorch's do), runs the module's forward from inside DDP's
forward, and passes every tensor of the outputs (tensor, tuple, list or dict, flattened) to the unused-parameter
search."""
from contextlib import contextmanager

from tinyddp import _C
from tinyddp.nn.modules.module import Module
from tinyddp.utils._pytree import flatten


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
                                      gradient_as_bucket_view, broadcast_buffers)
        # Construction broadcasts rank 0's parameters and buffers; with broadcast_buffers each synced forward
        # copies rank 0's buffers again, in place (their versions bump, as 1.13's broadcast does).
        object.__setattr__(self, "_ddp", _C._dist.DistributedDataParallel(
            list(module.named_parameters()), options, list(module.named_buffers())))

    def forward(self, *inputs, **kwargs):
        result = {}

        def run_module():
            result["out"] = self.module(*inputs, **kwargs)
            flat = []
            result["rebuild"] = flatten(result["out"], flat)
            return flat

        flat = self._ddp.forward(run_module)
        return result["rebuild"](flat)

    @contextmanager
    def no_sync(self):
        """Forwards and backwards in scope accumulate gradients locally; the first synced backward averages them."""
        self._ddp.enter_no_sync()
        try:
            yield
        finally:
            self._ddp.exit_no_sync()

    def join(self, divide_by_initial_world_size=True, enable=True, throw_on_early_termination=False):
        """The join context for uneven inputs over this DDP (tinyddp.distributed.algorithms.join.Join)."""
        from tinyddp.distributed.algorithms.join import Join
        return Join([self], enable, throw_on_early_termination,
                    divide_by_initial_world_size=divide_by_initial_world_size)

    def _check_before_step(self):
        """tinyddp's addition: warns when gradients accumulated inside no_sync() were never averaged."""
        self._ddp.check_before_step()

    def _get_ddp_logging_data(self):
        """The buckets (parameter indices, in launch order) and the names the reducer's messages use."""
        return {"bucket_indices": self._ddp.bucket_indices(),
                "parameter_names": [name for name, _ in self.module.named_parameters()]}
