"""torch.optim: Optimizer with 1.13's parameter groups and state_dict, SGD, Adam and AdamW (their updates in
models/optim), and lr_scheduler."""
from tinyddp.optim import lr_scheduler
from tinyddp.optim.adam import Adam, AdamW
from tinyddp.optim.optimizer import Optimizer
from tinyddp.optim.sgd import SGD

__all__ = ["Adam", "AdamW", "Optimizer", "SGD", "lr_scheduler"]
