from tinyddp.nn.modules.activation import ReLU, Sigmoid, Tanh
from tinyddp.nn.modules.container import Sequential
from tinyddp.nn.modules.linear import Linear
from tinyddp.nn.modules.loss import CrossEntropyLoss, MSELoss
from tinyddp.nn.modules.module import Module

__all__ = ["CrossEntropyLoss", "Linear", "MSELoss", "Module", "ReLU", "Sequential", "Sigmoid", "Tanh"]
