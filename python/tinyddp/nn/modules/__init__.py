from tinyddp.nn.modules.activation import (ELU, GELU, SELU, CosineSimilarity, Hardtanh, Identity, LeakyReLU,
                                           LogSigmoid, LogSoftmax, Mish, ReLU, ReLU6, SiLU, Sigmoid, Softmax,
                                           Softmin, Softplus, Softsign, Tanh)
from tinyddp.nn.modules.batchnorm import BatchNorm1d, BatchNorm2d
from tinyddp.nn.modules.conv import AvgPool2d, Conv2d, MaxPool2d
from tinyddp.nn.modules.container import ModuleDict, ModuleList, ParameterList, Sequential
from tinyddp.nn.modules.dropout import Dropout
from tinyddp.nn.modules.flatten import Flatten, Unflatten
from tinyddp.nn.modules.linear import Linear
from tinyddp.nn.modules.loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, KLDivLoss, L1Loss,
                                     MSELoss, NLLLoss, SmoothL1Loss)
from tinyddp.nn.modules.module import Module
from tinyddp.nn.modules.normalization import LayerNorm
from tinyddp.nn.modules.sparse import Embedding
from tinyddp.nn.modules.attention import MultiheadAttention, NonDynamicallyQuantizableLinear
from tinyddp.nn.modules.transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder,
                                            TransformerEncoderLayer)
from tinyddp.nn.modules.rnn import GRU, GRUCell, LSTM, LSTMCell, RNN, RNNBase, RNNCell, RNNCellBase

__all__ = ["AvgPool2d", "BatchNorm1d", "BatchNorm2d", "BCELoss", "BCEWithLogitsLoss", "Conv2d", "CosineSimilarity",
           "CrossEntropyLoss", "Dropout", "ELU", "Embedding", "Flatten", "GELU", "Hardtanh", "HuberLoss", "Identity",
           "KLDivLoss", "L1Loss", "LayerNorm", "LeakyReLU", "Linear", "LogSigmoid", "LogSoftmax", "MaxPool2d", "Mish",
           "Module", "ModuleDict", "ModuleList", "MSELoss", "NLLLoss", "ParameterList", "ReLU", "ReLU6", "SELU",
           "Sequential", "Sigmoid", "SiLU", "SmoothL1Loss", "Softmax", "Softmin", "Softplus", "Softsign", "Tanh",
           "Unflatten"]
__all__ += ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase"]
__all__ += ["MultiheadAttention", "NonDynamicallyQuantizableLinear"]
__all__ += ["Transformer", "TransformerDecoder", "TransformerDecoderLayer", "TransformerEncoder", "TransformerEncoderLayer"]
