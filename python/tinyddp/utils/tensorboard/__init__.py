"""torch.utils.tensorboard: 1.13's imports the tensorboard package first, so without it the import fails with
ModuleNotFoundError "No module named 'tensorboard'", as here; with it, tinyddp still has no SummaryWriter."""
import tensorboard  # noqa: F401

raise ImportError("tinyddp: torch.utils.tensorboard (SummaryWriter) is not supported; log with print or the "
                  "tensorboard package's own writer")
