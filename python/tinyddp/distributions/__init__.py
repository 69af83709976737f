"""torch.distributions, the part training scripts use: Normal, Categorical, Bernoulli, Uniform and Independent
with 1.13's parameters, validation (texts included), draws from the same random stream, log_prob / entropy /
mean / variance formulas, and kl_divergence between them (register_kl for more). Pure Python over the tensor
API, as 1.13's is. Not there: the other distributions and transforms."""
from tinyddp.distributions import constraints
from tinyddp.distributions.bernoulli import Bernoulli
from tinyddp.distributions.categorical import Categorical
from tinyddp.distributions.distribution import Distribution
from tinyddp.distributions.exp_family import ExponentialFamily
from tinyddp.distributions.independent import Independent
from tinyddp.distributions.kl import kl_divergence, register_kl
from tinyddp.distributions.normal import Normal
from tinyddp.distributions.uniform import Uniform

__all__ = ["Bernoulli", "Categorical", "Distribution", "ExponentialFamily", "Independent", "Normal", "Uniform", "constraints",
           "kl_divergence", "register_kl"]
