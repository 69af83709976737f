"""torch.utils.data._utils: the collate functions and the worker bookkeeping DataLoader uses."""
from tinyddp.utils.data._utils import collate, worker  # noqa: F401
