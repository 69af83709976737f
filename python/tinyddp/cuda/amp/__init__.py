"""torch.cuda.amp: autocast, custom_fwd, custom_bwd and GradScaler as 1.13's on a machine without CUDA: autocast
warns and disables itself, GradScaler warns and is disabled (scale returns its input, step calls optimizer.step)."""
from tinyddp.cuda.amp.autocast_mode import autocast, custom_bwd, custom_fwd  # noqa: F401
from tinyddp.cuda.amp.grad_scaler import GradScaler  # noqa: F401
