"""torch.optim: Optimizer with 1.13's parameter groups and state_dict; SGD, Adam and AdamW (their updates in
models/optim); RMSprop, Adagrad, Adamax, NAdam, RAdam, Adadelta, Rprop, ASGD and LBFGS (their updates in Python over
the engine's ops, rounded as 1.13's CPU kernels: _functional.py); and lr_scheduler."""
from tinyddp.optim import lr_scheduler
from tinyddp.optim import swa_utils
from tinyddp.optim.adadelta import Adadelta
from tinyddp.optim.adagrad import Adagrad
from tinyddp.optim.adam import Adam, AdamW
from tinyddp.optim.adamax import Adamax
from tinyddp.optim.asgd import ASGD
from tinyddp.optim.lbfgs import LBFGS
from tinyddp.optim.nadam import NAdam
from tinyddp.optim.optimizer import Optimizer
from tinyddp.optim.radam import RAdam
from tinyddp.optim.rmsprop import RMSprop
from tinyddp.optim.rprop import Rprop
from tinyddp.optim.sgd import SGD

__all__ = ["ASGD", "Adadelta", "Adagrad", "Adam", "AdamW", "Adamax", "LBFGS", "NAdam", "Optimizer", "RAdam", "RMSprop",
           "Rprop", "SGD", "lr_scheduler", "swa_utils"]
