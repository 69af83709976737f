from tinyddp.nn.modules.activation import GELU, Identity, LeakyReLU, LogSoftmax, ReLU, Sigmoid, Softmax, Tanh
from tinyddp.nn.modules.batchnorm import BatchNorm1d, BatchNorm2d
from tinyddp.nn.modules.container import ModuleDict, ModuleList, ParameterList, Sequential
from tinyddp.nn.modules.dropout import Dropout
from tinyddp.nn.modules.flatten import Flatten
from tinyddp.nn.modules.linear import Linear
from tinyddp.nn.modules.loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, MSELoss, NLLLoss
from tinyddp.nn.modules.module import Module
from tinyddp.nn.modules.normalization import LayerNorm
from tinyddp.nn.modules.sparse import Embedding

__all__ = ["BatchNorm1d", "BatchNorm2d", "BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "Dropout", "Embedding",
           "Flatten", "GELU", "Identity", "L1Loss", "LayerNorm", "LeakyReLU", "Linear", "LogSoftmax", "MSELoss",
           "Module", "ModuleDict", "ModuleList", "NLLLoss", "ParameterList", "ReLU", "Sequential", "Sigmoid",
           "Softmax", "Tanh"]
