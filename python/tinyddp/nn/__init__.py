"""torch.nn: Module, Parameter, layers and losses (tinyddp.nn.modules), functional, init, parallel, utils."""
from tinyddp.nn.parameter import Parameter
from tinyddp.nn import functional
from tinyddp.nn import init
from tinyddp.nn.modules import (AvgPool2d, BatchNorm1d, BatchNorm2d, BCELoss, BCEWithLogitsLoss, Conv2d,
                                CosineSimilarity, CrossEntropyLoss, Dropout, ELU, Embedding, Flatten, GELU, Hardtanh,
                                HuberLoss, Identity, KLDivLoss, L1Loss, LayerNorm, LeakyReLU, Linear, LogSigmoid,
                                LogSoftmax, MaxPool2d, Mish, Module, ModuleDict, ModuleList, MSELoss, NLLLoss,
                                ParameterList, ReLU, ReLU6, SELU, Sequential, Sigmoid, SiLU, SmoothL1Loss, Softmax,
                                Softmin, Softplus, Softsign, Tanh, Unflatten)
from tinyddp.nn.modules.attention import MultiheadAttention, NonDynamicallyQuantizableLinear
from tinyddp.nn.modules.transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder,
                                            TransformerEncoderLayer)
from tinyddp.nn.modules.rnn import GRU, GRUCell, LSTM, LSTMCell, RNN, RNNBase, RNNCell, RNNCellBase
from tinyddp.nn import parallel
from tinyddp.nn.parallel import DataParallel
from tinyddp.nn import utils

__all__ = ["AvgPool2d", "BatchNorm1d", "BatchNorm2d", "BCELoss", "BCEWithLogitsLoss", "Conv2d", "CosineSimilarity",
           "CrossEntropyLoss", "Dropout", "ELU", "Embedding", "Flatten", "GELU", "Hardtanh", "HuberLoss", "Identity",
           "KLDivLoss", "L1Loss", "LayerNorm", "LeakyReLU", "Linear", "LogSigmoid", "LogSoftmax", "MaxPool2d", "Mish",
           "Module", "ModuleDict", "ModuleList", "MSELoss", "NLLLoss", "Parameter", "ParameterList", "ReLU", "ReLU6",
           "SELU", "Sequential", "Sigmoid", "SiLU", "SmoothL1Loss", "Softmax", "Softmin", "Softplus", "Softsign",
           "Tanh", "Unflatten", "functional", "init", "parallel", "utils"]
__all__ += ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase"]
__all__ += ["MultiheadAttention", "NonDynamicallyQuantizableLinear"]
__all__ += ["Transformer", "TransformerDecoder", "TransformerDecoderLayer", "TransformerEncoder", "TransformerEncoderLayer"]
from tinyddp.nn.modules import _MORE_LAYERS
from tinyddp.nn.modules import *  # noqa: E402,F401,F403 -- the layers of _MORE_LAYERS
__all__ += _MORE_LAYERS
__all__ += ["DataParallel"]
