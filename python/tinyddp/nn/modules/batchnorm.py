"""torch.nn.BatchNorm1d and BatchNorm2d over the engine's batch_norm (engine/ops/normalization.cpp), with 1.13's
Python logic (torch/nn/modules/batchnorm.py): the buffers, num_batches_tracked and momentum=None's cumulative
average, and which statistics a forward uses in train and eval mode."""
from tinyddp import _tensor
from tinyddp.autograd.grad_mode import no_grad
from tinyddp.nn import functional as F
from tinyddp.nn.modules.module import Module
from tinyddp.nn.parameter import Parameter


class _NormBase(Module):
    _version = 2   # 1.13's: state dicts of version 2 have num_batches_tracked
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = Parameter(_tensor.empty(num_features, dtype=dtype))
            self.bias = Parameter(_tensor.empty(num_features, dtype=dtype))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", _tensor.zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", _tensor.ones(num_features, dtype=dtype))
            self.register_buffer("num_batches_tracked", _tensor.tensor(0, dtype=_tensor.int64))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self):
        # In place, as 1.13's: each buffer leaves construction at version 1 (what DDP's messages count from).
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self):
        self.reset_running_stats()
        if self.affine:
            with no_grad():
                self.weight.fill_(1.0)
                self.bias.zero_()

    def _check_input_dim(self, input):
        raise NotImplementedError

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        """1.13's: a state dict of version 1, or one without metadata (a DDP checkpoint's keys stripped into a new
        dict, say), may lack num_batches_tracked, which then loads as 0."""
        version = local_metadata.get("version", None)
        if (version is None or version < 2) and self.track_running_stats:
            key = prefix + "num_batches_tracked"
            if key not in state_dict:
                state_dict[key] = _tensor.tensor(0, dtype=_tensor.int64)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                      error_msgs)

    def extra_repr(self):
        return ("{num_features}, eps={eps}, momentum={momentum}, affine={affine}, "
                "track_running_stats={track_running_stats}".format(**self.__dict__))


class _BatchNorm(_NormBase):
    def forward(self, input):
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            # 1.13's add_(1), one version bump (the engine's add_ takes floating tensors; fill_ takes int64).
            self.num_batches_tracked.fill_(int(self.num_batches_tracked) + 1)
            # momentum=None: the cumulative moving average, weight 1 / (batches seen).
            factor = 1.0 / float(self.num_batches_tracked) if self.momentum is None else self.momentum
        # Batch statistics in training, and in eval mode too when there are no running stats.
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        use_running = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if use_running else None,
                            self.running_var if use_running else None, self.weight, self.bias, bn_training, factor,
                            self.eps)


class BatchNorm1d(_BatchNorm):
    def _check_input_dim(self, input):
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    def _check_input_dim(self, input):
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    def _check_input_dim(self, input):
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


class SyncBatchNorm(_BatchNorm):
    """1.13's SyncBatchNorm: its forward takes GPU inputs only (a CPU input raises 1.13's ValueError, in train and
    eval mode alike); on one process, or outside training, it is BatchNorm. convert_sync_batchnorm swaps every
    BatchNorm*d of a model for one, keeping the same parameters and buffers."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 process_group=None, device=None, dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def forward(self, input):
        if not input.is_cuda:
            raise ValueError("SyncBatchNorm expected input tensor to be on GPU")
        self._check_input_dim(input)
        if self.training:
            from tinyddp import distributed as dist
            if dist.is_available() and dist.is_initialized() and dist.get_world_size(self.process_group) > 1:
                raise NotImplementedError("tinyddp: SyncBatchNorm across processes (the statistics' all-reduce) "
                                          "is not supported; use BatchNorm per process.")
        return super().forward(input)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        out = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            out = SyncBatchNorm(module.num_features, module.eps, module.momentum, module.affine,
                                module.track_running_stats, process_group)
            if module.affine:
                with no_grad():
                    out.weight = module.weight
                    out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
            if hasattr(module, "qconfig"):
                out.qconfig = module.qconfig
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        del module
        return out
