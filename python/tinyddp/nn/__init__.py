"""torch.nn: Module, Parameter, layers and losses (tinyddp.nn.modules), functional, parallel."""
from tinyddp.nn.parameter import Parameter
from tinyddp.nn import functional
from tinyddp.nn.modules import (CrossEntropyLoss, Dropout, Identity, Linear, MSELoss, Module, ModuleList, ReLU,
                                Sequential, Sigmoid, Tanh)
from tinyddp.nn import parallel

__all__ = ["CrossEntropyLoss", "Dropout", "Identity", "Linear", "MSELoss", "Module", "ModuleList", "Parameter", "ReLU",
           "Sequential", "Sigmoid", "Tanh", "functional", "parallel"]
