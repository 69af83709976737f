"""torch.nn.InstanceNorm1d and InstanceNorm2d over F.instance_norm: 1.13's defaults (affine=False,
track_running_stats=False), buffers and reprs (batchnorm.py's _NormBase), and its unbatched inputs."""
from tinyddp.nn import functional as F
from tinyddp.nn.modules.batchnorm import _NormBase


class _InstanceNorm(_NormBase):
    _spatial = 1

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False, device=None,
                 dtype=None):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype)

    def _check_input_dim(self, input):
        if input.dim() not in (self._spatial + 1, self._spatial + 2):
            raise ValueError(f"expected {self._spatial + 1}D or {self._spatial + 2}D input (got {input.dim()}D "
                             f"input)")

    def forward(self, input):
        self._check_input_dim(input)
        unbatched = input.dim() == self._spatial + 1
        if unbatched:
            input = input.unsqueeze(0)
        use_stats = self.training or not self.track_running_stats
        out = F.instance_norm(input, self.running_mean, self.running_var, self.weight, self.bias, use_stats,
                              self.momentum, self.eps)
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    _spatial = 1


class InstanceNorm2d(_InstanceNorm):
    _spatial = 2


class InstanceNorm3d(_InstanceNorm):
    _spatial = 3
