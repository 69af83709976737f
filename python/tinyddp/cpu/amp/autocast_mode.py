"""torch.cpu.amp.autocast: torch.autocast("cpu", ...), whose default dtype is bfloat16 (tinyddp/amp/autocast_mode.py
says what tinyddp does with it)."""
from tinyddp import _tensor
from tinyddp.amp import autocast_mode


class autocast(autocast_mode.autocast):  # noqa: N801
    def __init__(self, enabled=True, dtype=_tensor.bfloat16, cache_enabled=True):
        super().__init__("cpu", enabled=enabled, dtype=dtype, cache_enabled=cache_enabled)
