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
from tinyddp.nn.modules.activation import (CELU, GLU, Hardshrink, Hardsigmoid, Hardswish, PReLU, Softshrink,
                                           Tanhshrink, Threshold)
from tinyddp.nn.modules.container import ParameterDict
from tinyddp.nn.modules.conv import Conv1d, ConvTranspose1d, ConvTranspose2d
from tinyddp.nn.modules.distance import PairwiseDistance
from tinyddp.nn.modules.dropout import Dropout1d, Dropout2d
from tinyddp.nn.modules.fold import Fold, Unfold
from tinyddp.nn.modules.instancenorm import InstanceNorm1d, InstanceNorm2d
from tinyddp.nn.modules.linear import Bilinear
from tinyddp.nn.modules.loss import (CosineEmbeddingLoss, HingeEmbeddingLoss, MarginRankingLoss, SoftMarginLoss,
                                     TripletMarginLoss)
from tinyddp.nn.modules.normalization import GroupNorm
from tinyddp.nn.modules.padding import (ConstantPad1d, ConstantPad2d, ConstantPad3d, ReflectionPad1d, ReflectionPad2d,
                                        ReplicationPad1d, ReplicationPad2d, ZeroPad2d)
from tinyddp.nn.modules.pooling import (AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveMaxPool1d, AdaptiveMaxPool2d,
                                        AvgPool1d, MaxPool1d)
from tinyddp.nn.modules.upsampling import (PixelShuffle, PixelUnshuffle, Upsample, UpsamplingBilinear2d,
                                           UpsamplingNearest2d)

_MORE_LAYERS = ["AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AvgPool1d",
                "Bilinear", "CELU", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "Conv1d", "ConvTranspose1d",
                "ConvTranspose2d", "CosineEmbeddingLoss",
                "Dropout1d", "Dropout2d", "Fold", "GLU", "GroupNorm", "Hardshrink", "Hardsigmoid", "Hardswish",
                "HingeEmbeddingLoss", "InstanceNorm1d", "InstanceNorm2d", "MarginRankingLoss", "MaxPool1d",
                "PReLU", "PairwiseDistance", "ParameterDict", "PixelShuffle", "PixelUnshuffle", "ReflectionPad1d",
                "ReflectionPad2d", "ReplicationPad1d", "ReplicationPad2d", "SoftMarginLoss", "Softshrink",
                "Tanhshrink", "Threshold", "TripletMarginLoss", "Unfold", "Upsample", "UpsamplingBilinear2d",
                "UpsamplingNearest2d", "ZeroPad2d"]
from tinyddp.nn.modules.activation import ChannelShuffle, Softmax2d
from tinyddp.nn.modules.batchnorm import BatchNorm3d, SyncBatchNorm
from tinyddp.nn.modules.loss import (GaussianNLLLoss, MultiLabelSoftMarginLoss, MultiMarginLoss, PoissonNLLLoss,
                                     TripletMarginWithDistanceLoss)
from tinyddp.nn.modules.normalization import LocalResponseNorm
from tinyddp.nn.modules.pooling import AdaptiveAvgPool3d, LPPool1d, LPPool2d
from tinyddp.nn.modules.sparse import EmbeddingBag

_MORE_LAYERS += ["AdaptiveAvgPool3d", "BatchNorm3d", "SyncBatchNorm", "ChannelShuffle", "EmbeddingBag",
                 "GaussianNLLLoss", "LPPool1d", "LPPool2d", "LocalResponseNorm",
                 "MultiLabelSoftMarginLoss", "MultiMarginLoss", "PoissonNLLLoss", "Softmax2d",
                 "TripletMarginWithDistanceLoss"]
from tinyddp.nn.modules.conv import Conv3d
from tinyddp.nn.modules.dropout import Dropout3d
from tinyddp.nn.modules.instancenorm import InstanceNorm3d
from tinyddp.nn.modules.padding import ReflectionPad3d, ReplicationPad3d
from tinyddp.nn.modules.pooling import AdaptiveMaxPool3d, AvgPool3d, MaxPool3d

_MORE_LAYERS += ["AdaptiveMaxPool3d", "AvgPool3d", "Conv3d", "Dropout3d", "InstanceNorm3d", "MaxPool3d",
                 "ReflectionPad3d", "ReplicationPad3d"]
from tinyddp.nn.modules.activation import RReLU
from tinyddp.nn.modules.dropout import AlphaDropout, FeatureAlphaDropout
from tinyddp.nn.modules.pooling import MaxUnpool1d, MaxUnpool2d

_MORE_LAYERS += ["AlphaDropout", "FeatureAlphaDropout", "MaxUnpool1d", "MaxUnpool2d", "RReLU"]
from tinyddp.nn.modules.linear import LazyLinear
from tinyddp.nn.modules.loss import CTCLoss, MultiLabelMarginLoss, NLLLoss2d

_MORE_LAYERS += ["CTCLoss", "LazyLinear", "MultiLabelMarginLoss", "NLLLoss2d"]
__all__ += _MORE_LAYERS
