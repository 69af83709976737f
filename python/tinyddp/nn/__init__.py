"""torch.nn: Module, Parameter, layers and losses (tinyddp.nn.modules), functional, init, parallel, utils."""
from tinyddp.nn.parameter import Parameter
from tinyddp.nn import functional
from tinyddp.nn import init
from tinyddp.nn.modules import (BatchNorm1d, BatchNorm2d, BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, Dropout,
                                Embedding, Flatten, GELU, Identity, L1Loss, LayerNorm, LeakyReLU, Linear,
                                LogSoftmax, MSELoss, Module, ModuleDict, ModuleList, NLLLoss, ParameterList, ReLU,
                                Sequential, Sigmoid, Softmax, Tanh)
from tinyddp.nn import parallel
from tinyddp.nn import utils

__all__ = ["BatchNorm1d", "BatchNorm2d", "BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "Dropout", "Embedding",
           "Flatten", "GELU", "Identity", "L1Loss", "LayerNorm", "LeakyReLU", "Linear", "LogSoftmax", "MSELoss",
           "Module", "ModuleDict", "ModuleList", "NLLLoss", "Parameter", "ParameterList", "ReLU", "Sequential",
           "Sigmoid", "Softmax", "Tanh", "functional", "init", "parallel", "utils"]
