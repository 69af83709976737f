"""torch.optim: SGD and Adam (models/optim)."""
from tinyddp.optim.adam import Adam
from tinyddp.optim.optimizer import Optimizer
from tinyddp.optim.sgd import SGD

__all__ = ["Adam", "Optimizer", "SGD"]
