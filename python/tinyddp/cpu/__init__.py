"""torch.cpu: its amp subpackage (torch.cpu.amp.autocast)."""
from tinyddp.cpu import amp  # noqa: F401
