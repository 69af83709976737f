"""torch.utils: `tinyddp.utils.data` (also an attribute, as torch.utils.data is) and `tinyddp.utils.checkpoint`
(import it by name, as torch.utils.checkpoint)."""
from tinyddp.utils import data  # noqa: F401
