"""torch.amp: autocast (torch.autocast). See autocast_mode.py."""
from tinyddp.amp.autocast_mode import autocast  # noqa: F401
