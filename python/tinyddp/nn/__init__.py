"""torch.nn: Module, Parameter, layers and losses (tinyddp.nn.modules), functional, parallel."""
from tinyddp.nn.parameter import Parameter
from tinyddp.nn import functional
from tinyddp.nn.modules import CrossEntropyLoss, Linear, MSELoss, Module, ReLU, Sequential, Sigmoid, Tanh
from tinyddp.nn import parallel

__all__ = ["CrossEntropyLoss", "Linear", "MSELoss", "Module", "Parameter", "ReLU", "Sequential", "Sigmoid", "Tanh",
           "functional", "parallel"]
