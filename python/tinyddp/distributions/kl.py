"""torch.distributions.kl: kl_divergence(p, q) dispatched on the pair of types (the most specific registered
pair, searched along both classes' MROs), register_kl, and 1.13's closed forms for the distributions here."""
import math

import tinyddp as torch
import tinyddp.nn.functional as F
from tinyddp.distributions.bernoulli import Bernoulli
from tinyddp.distributions.categorical import Categorical
from tinyddp.distributions.exp_family import ExponentialFamily
from tinyddp.distributions.independent import Independent
from tinyddp.distributions.normal import Normal
from tinyddp.distributions.uniform import Uniform
from tinyddp.distributions.utils import _sum_rightmost

_KL_REGISTRY = {}


def register_kl(type_p, type_q):
    def decorator(fun):
        _KL_REGISTRY[type_p, type_q] = fun
        return fun
    return decorator


def _dispatch_kl(type_p, type_q):
    """The registered function of the closest (p, q) ancestors: the smallest sum of MRO distances."""
    best, best_rank = None, None
    for i, super_p in enumerate(type_p.__mro__):
        for j, super_q in enumerate(type_q.__mro__):
            fun = _KL_REGISTRY.get((super_p, super_q))
            if fun is not None and (best_rank is None or (i + j, i) < best_rank):
                best, best_rank = fun, (i + j, i)
    return best


def kl_divergence(p, q):
    fun = _dispatch_kl(type(p), type(q))
    if fun is None:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type {p.__class__.__name__} and q type "
                                  f"{q.__class__.__name__}")
    return fun(p, q)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t[(q.probs == 0).expand_as(t)] = math.inf
    t[(p.probs == 0).expand_as(t)] = 0
    return t.sum(-1)


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * (F.softplus(-q.logits) - F.softplus(-p.logits))
    t1[q.probs == 0] = math.inf
    t1[p.probs == 0] = 0
    t2 = (1 - p.probs) * (F.softplus(q.logits) - F.softplus(p.logits))
    t2[q.probs == 1] = math.inf
    t2[p.probs == 1] = 0
    return t1 + t2


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    result[(q.low > p.low) | (q.high < p.high)] = math.inf
    return result


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


@register_kl(Normal, Uniform)
def _kl_normal_uniform(p, q):
    return torch.full_like(p.loc, math.inf)   # a Normal's support is never inside a bounded interval


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    common_term = p.high - p.low
    t1 = (math.sqrt(math.pi * 2) * q.scale / common_term).log()
    t2 = common_term.pow(2) / 12
    t3 = ((p.high + p.low - 2 * q.loc) / 2).pow(2)
    return t1 + 0.5 * (t2 + t3) / q.scale.pow(2)


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    if not type(p) == type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential families cannot \
                            be computed using Bregman divergences")
    raise NotImplementedError(f"tinyddp: no KL(p || q) for p and q of type {type(p).__name__} (1.13 computes it "
                              "as a Bregman divergence; tinyddp registers closed forms only)")
