"""torch.nn.utils: clip_grad_norm_, clip_grad_value_ (clip_grad.py) and parameters_to_vector / vector_to_parameters
(convert_parameters.py), weight_norm / remove_weight_norm (weight_norm.py),
spectral_norm / remove_spectral_norm (spectral_norm.py)."""
from tinyddp.nn.utils.clip_grad import clip_grad_norm, clip_grad_norm_, clip_grad_value_
from tinyddp.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters
from tinyddp.nn.utils.weight_norm import remove_weight_norm, weight_norm
from tinyddp.nn.utils.spectral_norm import remove_spectral_norm, spectral_norm
from tinyddp.nn.utils import rnn

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "parameters_to_vector", "vector_to_parameters"]
__all__ += ["remove_spectral_norm", "remove_weight_norm", "rnn", "spectral_norm", "weight_norm"]
