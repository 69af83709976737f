"""torch.special: the names 1.13 gives there to functions tinyddp has (erf, erfc, erfinv, expit, logit, xlogy,
gammaln, digamma/psi, polygamma, exp2, expm1, log1p, round, softmax, log_softmax, logsumexp)."""
from tinyddp import _tensor_special
from tinyddp._tensor_forms import erf, expm1, log1p, logsumexp, round  # noqa: A004  (torch.special's names)
from tinyddp._tensor_math import exp2, logit, xlogy
from tinyddp._tensor_special import digamma, erfc, erfinv, polygamma, psi

gammaln = _tensor_special.lgamma


def expit(input):
    return input.sigmoid()


def softmax(input, dim, *, dtype=None):
    return input.softmax(dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    return input.log_softmax(dim, dtype=dtype)


__all__ = ["digamma", "erf", "erfc", "erfinv", "exp2", "expit", "expm1", "gammaln", "log1p", "log_softmax", "logit",
           "logsumexp", "polygamma", "psi", "round", "softmax", "xlogy"]
