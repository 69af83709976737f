"""torch.nn.DataParallel as 1.13 builds it on a machine without CUDA, which tinyddp's Python front end always is:
the wrapper keeps the module (its parameters are "module.*") and device_ids is [], so forward calls the module
itself (1.13 replicates over GPUs only when it has some)."""
from tinyddp.nn.modules.module import Module


class DataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module   # no CUDA device: 1.13 returns here, before reading device_ids
        self.device_ids = []

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)
