"""torch.distributions.ExponentialFamily: the base of Normal and Bernoulli, as in 1.13 (so that isinstance and
kl_divergence's dispatch see the same class tree); tinyddp computes no Bregman divergences with it."""
from tinyddp.distributions.distribution import Distribution


class ExponentialFamily(Distribution):
    pass
