from tinyddp.nn.modules.activation import Identity, ReLU, Sigmoid, Tanh
from tinyddp.nn.modules.container import ModuleList, Sequential
from tinyddp.nn.modules.dropout import Dropout
from tinyddp.nn.modules.linear import Linear
from tinyddp.nn.modules.loss import CrossEntropyLoss, MSELoss
from tinyddp.nn.modules.module import Module

__all__ = ["CrossEntropyLoss", "Dropout", "Identity", "Linear", "MSELoss", "Module", "ModuleList", "ReLU", "Sequential",
           "Sigmoid", "Tanh"]
