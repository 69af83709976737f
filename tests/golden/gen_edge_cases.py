"""Reductions and shape ops at the edges under real PyTorch 1.13: 0-dim, empty ((0,), (3, 0), (0, 3)), size-1 and
bool/int64 tensors, NaN and infinities, equal values (the index 1.13's unstable algorithms report), int64
overflow, dims out of range, dtype=, axis=/keepdims=, and the ops tinyddp added for them (cummax, cummin,
logcumsumexp, msort, aminmax). For each case: its results (type, shape, dtype, values, requires_grad, grad_fn
name), the gradients of its leaves (or the backward's error) and its warnings, or its error's type and message.

Run by hand from anywhere: /usr/bin/python3 tests/golden/gen_edge_cases.py
Writes edge_cases.json next to this script (deterministic; a few seconds). tests/python/test_edge_cases.py runs the
same snippets through tinyddp (edge_cases_cases.py is the shared runner).

Layout: {"torch_version", "cases": [{"id", "code", "kind", "outs": [...], "grads": {...}, "warnings": [...]} or
{"id", "code", "error": {"type", "message"}}]}.
"""
import sys

import torch

sys.dont_write_bytecode = True  # keep __pycache__ out of tests/golden
from edge_cases_cases import run  # noqa: E402
from gen_tdp_params import here, write_json  # noqa: E402

# leaves (float32 unless said): written-out values with ties, zeros, NaN and infinities where the case is about them
V = "v = torch.tensor([1.5, -0.5, 1.0, 1.0, 0.0, -2.0], requires_grad=True)\n"
M = "m = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)\n"
S = "s = torch.tensor(2.5, requires_grad=True)\n"
E = "e = torch.zeros(0, requires_grad=True)\n"
E30 = "e30 = torch.zeros(3, 0, requires_grad=True)\n"
E03 = "e03 = torch.zeros(0, 3, requires_grad=True)\n"
NAN = "n = torch.tensor([1.0, float('nan'), 3.0, float('nan'), -1.0], requires_grad=True)\n"
INF = "f = torch.tensor([1.0, float('inf'), -2.0, float('inf')], requires_grad=True)\n"
TIES = "t = torch.tensor([[2.0, 2.0, 1.0, 2.0], [0.5, 3.0, 3.0, 0.5]], requires_grad=True)\n"
Z = "z = torch.tensor([[0.0, 2.0, 0.0], [1.5, -1.0, 3.0]], requires_grad=True)\n"
B = "b = torch.tensor([True, False, True, True])\n"
L = "l = torch.tensor([3, 1, 2, 3, 0])\n"
BIG = "big = torch.tensor([2 ** 62, 2 ** 62, 3])\n"
# rows of equal values longer than 16 (where std::sort's introsort, not its insertion sort, decides the order)
LONG = "lab = torch.tensor([1, 0, 2, 0, 1, 1, 2, 0, 0, 1, 2, 2, 0, 1, 0, 2, 1, 0, 1, 2, 0, 0, 1, 2, 1, 0, 2, 1, 0, 0, 1])\n"

CASES = [
    # ---- sum, mean: dim forms, dtype=, empties ----
    ("sum_dims_forms", M + "out = (m.sum(), m.sum(()), m.sum(None, True), m.sum([0, 1]), m.sum((0, -1), keepdim=True), "
                           "torch.sum(m, -1))"),
    ("sum_dtype", M + "out = (m.sum(dtype=torch.float64), m.sum(1, dtype=torch.float64), torch.sum(m, dtype=torch.float64), "
                      "torch.tensor([1, 2]).sum(dtype=torch.float32), torch.tensor([True, False]).sum(dtype=torch.bool))"),
    ("sum_empty", E30 + "out = (e30.sum(), e30.sum(0), e30.sum(1), e30.sum(1, keepdim=True), torch.zeros(0).sum())"),
    ("sum_int_overflow", BIG + "out = (big.sum(), big.sum(0), big.cumsum(0), big.prod(), big.cumprod(0), big * 4, big + big)"),
    ("sum_bool_int", B + L + "out = (b.sum(), b.sum(0, keepdim=True), l.sum(), l.mean(dtype=torch.float64))"),
    ("err_sum_dim_twice", M + "out = m.sum((0, -2))"),
    ("err_sum_dim_range", M + "out = m.sum(2)"),
    ("err_sum_dim_range_0dim", S + "out = s.sum(1)"),
    ("err_sum_int_dtype_grad", M + "out = m.sum(dtype=torch.int64)"),
    ("mean_empty_is_nan", E + E30 + "out = (e.mean(), e30.mean(1), e30.mean(0), e30.mean(()), e.mean(dtype=torch.float64))"),
    ("mean_dtype", M + L + "out = (m.mean(dtype=torch.float64), m.mean(0, True, dtype=torch.float64), "
                           "l.float().mean(), torch.mean(l, 0, dtype=torch.float32))"),
    ("err_mean_int", L + "out = l.mean()"),
    ("err_mean_int_dtype", L + "out = l.mean(dtype=torch.int64)"),
    ("zero_dim_reductions", S + "out = (s.sum(0), s.sum(-1, keepdim=True), s.mean(0), s.max(), s.min(), s.max(0), "
                                "s.argmax(), s.argmax(0), s.amax(), s.prod(0), s.std(), s.norm(), s.logsumexp(0), "
                                "s.softmax(0), s.cumsum(0), s.all(), s.any(-1), s.count_nonzero(0))"),
    ("zero_dim_item", "out = (torch.tensor(3.5).item(), torch.tensor(7).item(), torch.tensor(True).item(), "
                      "float(torch.tensor(2.5)), int(torch.tensor(7.9)), bool(torch.tensor(0.0)), torch.tensor(3.).max().item())"),
    # ---- all, any, count_nonzero ----
    ("all_any_forms", B + S + E30 + "out = (b.all(), b.any(), b.all(0), b.any(0, keepdim=True), s.all(0), s.any(-1), "
                                    "e30.all(), e30.any(), e30.all(1), e30.any(1), e30.all(0), torch.all(b), "
                                    "torch.tensor([1.5, 0.0]).all(), torch.tensor([2, 0]).any(0))"),
    ("err_all_dim_tuple", B + "out = b.all(dim=(0,))"),
    ("err_any_dim_range", S + "out = s.any(1)"),
    ("count_nonzero_forms", M + E30 + "out = (m.count_nonzero(), m.count_nonzero(0), m.count_nonzero((0, 1)), "
                                      "m.count_nonzero([]), e30.count_nonzero(), e30.count_nonzero(1), "
                                      "torch.count_nonzero(m, dim=-1))"),
    ("err_count_nonzero_dim_twice", M + "out = m.count_nonzero((1, -1))"),
    # ---- max, min, argmax, argmin, aminmax, amax ----
    ("max_min_dim_forms", M + "out = (m.max(1), m.min(0), m.max(1, keepdim=True), m.max(dim=-1).values, "
                              "torch.max(m, 0), torch.min(m, dim=1, keepdim=True), m.argmax(), m.argmin(1), "
                              "m.argmax(None, True), m.argmin(keepdim=True))"),
    ("return_types", M + "r = m.max(0)\nout = (type(r).__name__, type(r).__module__, repr(type(r)), "
                         "isinstance(r, tuple), len(r), r.indices, type(m.sort()).__name__, "
                         "type(m.aminmax()).__name__, type(m.cummax(0)).__name__, type(m.median(0)).__name__)"),
    ("max_min_empty_along_other_dim", E30 + "out = (e30.max(0), e30.min(0), e30.argmax(0), e30.amax(0), e30.amin(0))"),
    ("err_max_empty", E30 + "out = e30.max()"),
    ("err_min_empty", E30 + "out = e30.min()"),
    ("err_max_empty_dim", E30 + "out = e30.max(1)"),
    ("err_min_empty_dim", E30 + "out = e30.min(-1)"),
    ("err_argmax_empty", E30 + "out = e30.argmax()"),
    ("err_argmin_empty_dim", E30 + "out = e30.argmin(1)"),
    ("err_amax_empty", E30 + "out = e30.amax()"),
    ("err_amax_empty_dim", E30 + "out = e30.amax(-1)"),
    ("err_argmax_bool", B + "out = b.argmax()"),
    ("argmax_bool_trivial", "out = (torch.tensor([True]).argmax(0), torch.ones(1, 3, dtype=torch.bool).argmax(0), "
                            "torch.ones(1, 3, dtype=torch.bool).argmin(0))"),
    ("err_argmax_bool_0dim", "out = torch.tensor(True).argmax(0)"),
    ("max_min_bool_int", B + L + "out = (b.max(), b.min(), b.max(0), b.min(0), l.max(), l.min(0), l.argmax(), "
                                 "l.argmin(), b.amax(), b.amin())"),
    ("max_nan", NAN + "out = n.max()"),
    ("min_nan", NAN + "out = n.min()"),
    ("max_nan_dim", NAN + "out = (n.max(0), n.reshape(-1, 1).max(1), n.argmax(), n.argmin())"),
    ("max_ties_share_gradient", TIES + "out = t.max()"),
    ("min_ties_share_gradient", TIES + "out = t.min()"),
    ("max_dim_ties", TIES + "out = (t.max(1), t.min(1), t.argmax(1), t.argmin(0))"),
    ("amax_ties_and_nan", TIES + NAN + "out = (t.amax(1), t.amin(0), n.amax())"),
    ("aminmax", M + S + "out = (m.aminmax(), m.aminmax(dim=1), m.aminmax(dim=0, keepdim=True), torch.aminmax(m, dim=-1), "
                        "s.aminmax(), s.aminmax(dim=0, keepdim=True), torch.tensor([True, False]).aminmax())"),
    ("aminmax_backward_fails", M + "out = m.aminmax(dim=1)"),
    ("err_aminmax_empty", E + "out = e.aminmax()"),
    ("err_aminmax_dim_tuple", M + "out = m.aminmax(dim=(0, 1))"),
    ("maximum_inf_nan", "a = torch.tensor([1.0, float('-inf'), float('inf'), float('nan'), 2.0], requires_grad=True)\n"
                        "c = torch.tensor([0.0, 0.0, float('inf'), 1.0, 2.0], requires_grad=True)\n"
                        "out = (torch.maximum(a, c), torch.minimum(a, c), torch.max(a, c), a.min(c))"),
    ("maximum_broadcast_promote", M + "c = torch.tensor([2.0, 2.0, 7.0], dtype=torch.float64)\n"
                                      "out = (torch.maximum(m, c), torch.minimum(m, torch.tensor(3.0)), "
                                      "torch.maximum(torch.tensor([1, 5]), torch.tensor([2.5, 0.5])), "
                                      "torch.maximum(torch.tensor([True, False]), torch.tensor([False, False])))"),
    # ---- running reductions ----
    ("cummax_cummin", TIES + "out = (t.cummax(1), t.cummin(1), t.cummax(0), torch.cummin(t, dim=-1))"),
    ("cummax_nan", NAN + "out = (n.cummax(0), n.cummin(0))"),
    ("cummax_int_bool", L + B + "out = (l.cummax(0), l.cummin(0), b.cummax(0))"),
    ("cummax_0dim_empty", S + E30 + "out = (s.cummax(0), s.cummin(-1), e30.cummax(0), e30.cummax(1), e30.cummin(2))"),
    ("err_cummax_dim", M + "out = m.cummax(2)"),
    ("cummax_0dim_dim_backward_fails", S + "out = s.cummax(1)"),
    ("logcumsumexp", M + "out = (m.logcumsumexp(1), torch.logcumsumexp(m, 0))"),
    ("logcumsumexp_extremes", "x = torch.tensor([-1000.0, 0.0, float('-inf'), 30.0, float('inf')], dtype=torch.float64, "
                              "requires_grad=True)\nout = x.logcumsumexp(0)"),
    ("logcumsumexp_0dim_empty", S + E30 + "out = (s.logcumsumexp(0), e30.logcumsumexp(1), e30.logcumsumexp(0))"),
    ("err_logcumsumexp_int", L + "out = l.logcumsumexp(0)"),
    ("err_logcumsumexp_dim", S + "out = s.logcumsumexp(1)"),
    ("grad2_logcumsumexp", "x = torch.tensor([0.3, -0.7, 0.5, 2.0], dtype=torch.float64, requires_grad=True)\n"
                           "w = torch.tensor([1.0, -2.0, 0.5, 3.0], dtype=torch.float64)\n"
                           "g = torch.autograd.grad((x.logcumsumexp(0) * w).sum(), x, create_graph=True)[0]\n"
                           "out = g * 1"),
    ("cumsum_cumprod", Z + "out = (z.cumsum(1), z.cumprod(1), z.cumsum(0, dtype=torch.float64), torch.cumprod(z, -1))"),
    ("cumsum_cumprod_int_bool", L + B + BIG + "out = (l.cumsum(0), b.cumsum(0), b.cumprod(0), l.cumprod(0), "
                                              "l.cumsum(0, dtype=torch.float32), big.cumsum(0), big.cumprod(0))"),
    ("cumsum_empty_0dim", E30 + S + "out = (e30.cumsum(0), e30.cumsum(1), e30.cumprod(-1), s.cumsum(0), s.cumprod(-1))"),
    ("err_cumsum_dim_empty", E30 + "out = e30.cumsum(2)"),
    ("err_cumsum_bool_dtype", "out = torch.tensor([1.0, 2.0]).cumsum(0, dtype=torch.bool)"),
    ("cumprod_zeros_grad", "x = torch.tensor([[2.0, 0.0, 3.0, 0.0, 4.0], [1.5, -2.0, 0.5, 2.0, 0.0]], requires_grad=True)\n"
                           "out = x.cumprod(1)"),
    ("grad2_cumprod_zero", "x = torch.tensor([2.0, 0.0, 3.0, 4.0], dtype=torch.float64, requires_grad=True)\n"
                           "g = torch.autograd.grad((x.cumprod(0) * torch.tensor([1.0, 2.0, -1.0, 0.5], "
                           "dtype=torch.float64)).sum(), x, create_graph=True)[0]\nout = g * 1"),
    ("prod_forms", Z + INF + "out = (z.prod(), z.prod(1), z.prod(0, keepdim=True), f.prod(), torch.prod(z, -1), "
                             "z.prod(dtype=torch.float64))"),
    ("prod_no_zero_grad", M + "out = (m.prod(), m.prod(1))"),
    ("prod_inf_grad", INF + "out = f.prod()"),
    ("prod_empty_int_bool", E30 + L + B + "out = (e30.prod(), e30.prod(1), e30.prod(0), l.prod(), b.prod(), "
                                          "b.prod(dtype=torch.bool), torch.tensor([1.5, 2.5]).prod(dtype=torch.int64))"),
    ("err_prod_dim_tuple", M + "out = m.prod((0, 1))"),
    ("msort", TIES + "out = (t.msort(), torch.msort(t.t()))"),
    # ---- order: sort, argsort, topk, kthvalue, mode, median ----
    ("sort_ties_long_rows", LONG + "out = (lab.sort(), lab.argsort(), lab.sort(descending=True), "
                                   "lab.sort(stable=True), lab.argsort(descending=True))"),
    ("sort_zeros", "x = torch.zeros(20, requires_grad=True)\nout = (x.sort(), x.topk(3), x.argsort(descending=True))"),
    ("sort_nan", NAN + "out = (n.sort(), n.sort(descending=True), n.argsort(), n.msort())"),
    ("sort_2d_dims", TIES + "out = (t.sort(0), t.sort(1, True), t.sort(dim=-1, stable=True), t.argsort(0))"),
    ("sort_empty_0dim_bool", E30 + S + B + "out = (e30.sort(), e30.sort(0), e30.argsort(1), s.sort(), s.argsort(), "
                                           "b.sort(), b.argsort(descending=True))"),
    ("topk_ties", TIES + LONG + "out = (t.topk(2, 1), t.topk(2, 1, largest=False), t.topk(1, 0), "
                                "lab.topk(5), lab.topk(4, largest=False), lab.float().topk(20))"),
    ("topk_unsorted", "x = torch.tensor([1.0, 5.0, 3.0, 4.0, 2.0, 5.0, 0.0])\nout = x.topk(4, sorted=False)"),
    ("topk_nan_empty_0dim", NAN + E30 + S + "out = (n.topk(2), n.topk(2, largest=False), e30.topk(0), e30.topk(2, 0), "
                                            "s.topk(1), s.topk(0))"),
    ("err_topk_k", M + "out = m.topk(4)"),
    ("err_topk_bool", B + "out = b.topk(1)"),
    ("err_topk_0dim_dim", S + "out = s.topk(1, 1)"),
    ("kthvalue_ties", TIES + "x = torch.tensor([1.0, 1.0, 1.0, 1.0, 1.0])\n"
                             "out = (t.kthvalue(2, 1), t.kthvalue(1, 0, True), x.kthvalue(2), x.kthvalue(4), "
                             "torch.tensor([1.5, -0.5, 1.0, 1.0]).kthvalue(2))"),
    ("kthvalue_nan_0dim_empty", NAN + S + E03 + "out = (n.kthvalue(5), n.kthvalue(1), s.kthvalue(1), e03.kthvalue(2, 1))"),
    ("err_kthvalue_empty_dim", E30 + "out = e30.kthvalue(1)"),
    ("err_kthvalue_k", M + "out = m.kthvalue(4)"),
    ("err_kthvalue_bool", B + "out = b.kthvalue(1)"),
    ("mode", TIES + L + LONG + "out = (t.mode(1), t.mode(0), l.mode(), lab.mode(), torch.tensor([1, 2, 2, 1]).mode(), "
                               "torch.tensor([True, False, True]).mode())"),
    ("mode_0dim_empty", S + E30 + "out = (s.mode(), e30.mode(0))"),
    ("err_mode_empty_dim", E30 + "out = e30.mode()"),
    ("median_forms", TIES + L + "out = (t.median(), t.median(1), t.median(0, keepdim=True), l.median(), "
                                "torch.median(t, dim=-1))"),
    ("median_nan", NAN + "out = (n.median(), n.median(0), n.nanmedian(), n.nanmedian(0))"),
    ("median_empty", E30 + "out = (e30.median(), e30.median(0), e30.nanmedian(), torch.zeros(0, dtype=torch.long).median())"),
    ("err_median_empty_dim", E30 + "out = e30.median(1)"),
    ("err_nanmedian_empty_dim", E30 + "out = e30.nanmedian(1)"),
    ("err_median_bool", B + "out = b.median()"),
    ("err_median_bool_dim", B + "out = b.median(0)"),
    ("median_ties_gradient", TIES + "out = t.median()"),
    ("nanmedian_all_nan", "x = torch.tensor([float('nan'), float('nan')])\nout = (x.nanmedian(), x.nanmedian(0))"),
    # ---- var, std ----
    ("std_zero_deviation_grad", "x = torch.tensor([[1.0, 1.0, 1.0], [1.0, 2.0, 4.0]], requires_grad=True)\n"
                                "out = (x.std(1), x.std(0, unbiased=False))"),
    ("var_std_forms", M + "out = (m.var(), m.var(False), m.std(0, False), m.var(1, True, True), m.var(dim=None, "
                          "keepdim=True), m.std(correction=0, dim=1), torch.var_mean(m, 1), torch.std_mean(m, False))"),
    ("var_std_empty", E30 + "out = (e30.var(), e30.std(1), e30.var(0), torch.ones(1).var(unbiased=False))"),
    ("err_std_int", L + "out = l.std()"),
    ("err_std_mean_int", L + "out = torch.std_mean(l)"),
    # ---- logsumexp, softmax ----
    ("logsumexp_empty_int_bool", E30 + L + B + "out = (e30.logsumexp(1), e30.logsumexp(0), e30.logsumexp(()), "
                                               "l.logsumexp(0), b.logsumexp(0), torch.logsumexp(torch.tensor(2.0), 0))"),
    ("logsumexp_inf", INF + "out = (f.logsumexp(0), torch.tensor([float('-inf'), float('-inf')]).logsumexp(0))"),
    ("err_logsumexp_dim_twice", M + "out = m.logsumexp((0, 0))"),
    ("softmax_edges", S + E30 + "out = (s.softmax(0), s.log_softmax(-1), e30.softmax(0), e30.log_softmax(1), "
                                "torch.zeros(3, 0, dtype=torch.long).softmax(0), torch.ones(2, 3, dtype=torch.long)"
                                ".softmax(1, dtype=torch.float32))"),
    ("err_softmax_int_lastdim", "out = torch.ones(2, 3, dtype=torch.long).softmax(1)"),
    ("err_softmax_int_dim", "out = torch.ones(2, 3, dtype=torch.long).softmax(0)"),
    ("err_log_softmax_bool", "out = torch.ones(2, 3, dtype=torch.bool).log_softmax(-1)"),
    ("err_softmax_dim", S + "out = s.softmax(1)"),
    # ---- norms ----
    ("norm_empty", E30 + "out = (e30.norm(), e30.norm(-1), e30.norm(float('inf')), e30.norm(dim=1), e30.norm(0, dim=0))"),
    ("err_vector_norm_empty", E + "out = torch.linalg.vector_norm(e, -1)"),
    ("err_norm_dim_bool", M + "out = m.norm(2, True)"),
    # ---- shapes at the edges ----
    ("split_chunk_empty", E30 + E03 + "out = (e30.split(2), e30.split(1, 1), e03.chunk(2), e30.chunk(3, 1), "
                                      "e03.split([0, 0])) "),
    ("err_split_0dim", S + "out = s.split(1)"),
    ("err_chunk_0dim", S + "out = s.chunk(2)"),
    ("tril_triu_edges", E + E30 + "out = (e.tril(), e.triu(1), e30.tril(-1), torch.ones(2, 3).triu(5), "
                                  "torch.ones(2, 3, 3).tril(-1))"),
    ("err_tril_1d", "out = torch.ones(4).tril()"),
    ("err_triu_0dim", S + "out = s.triu()"),
    ("roll_flip_edges", S + E30 + M + "out = (s.flip(0), s.flip((-1,)), e30.roll(1, 5), e30.roll(1), m.roll(1), "
                                      "m.roll((1, 1), (0, 1)), m.flip((0, 1)))"),
    ("err_roll_0dim", S + "out = s.roll(1, 0)"),
    ("err_flip_0dim_dim", S + "out = s.flip((0, 1))"),
    ("select_narrow_edges", E30 + M + "out = (e30.select(0, 2), e30.narrow(1, 0, 0), m.narrow(1, -1, 1), "
                                      "m.narrow(0, 2, 0), m.select(-1, -1))"),
    ("err_select_0dim", S + "out = s.select(0, 0)"),
    ("err_narrow_length", M + "out = m.narrow(1, 2, 5)"),
    ("err_narrow_start", "out = torch.zeros(0).narrow(0, 1, 1)"),
    ("err_narrow_start_wrap", M + "out = m.narrow(1, -1, 2)"),
    ("movedim_t_flatten_edges", S + E30 + M + "out = (s.movedim(0, 0), s.movedim(-1, 0), s.t(), s.T, e30.t(), "
                                              "torch.ones(4).t(), s.flatten(), m.flatten(1), m.flatten(-1), "
                                              "m.flatten(0, 1), e30.flatten(), e30.flatten(1))"),
    ("flatten_returns_itself", M + "out = (m.flatten(1) is m, torch.ones(4).flatten() is not None)"),
    ("err_flatten_0dim_dim", S + "out = s.flatten(1)"),
    ("err_t_3d", "out = torch.ones(2, 3, 4).t()"),
    ("diag_diff_trace_edges", E + "out = (torch.diag(e, 1), torch.diag(e, -2), torch.diag(torch.ones(2, 3), 3), "
                                  "torch.diag(torch.ones(2, 3), -2), torch.diagonal(torch.ones(2, 3), 5), "
                                  "torch.diff(torch.zeros(3, 0), dim=0), torch.trace(torch.zeros(3, 0)))"),
    ("err_diag_offset", "out = torch.diag(torch.ones(2, 3), 4)"),
    ("err_diag_empty_offset", "out = torch.diag(torch.zeros(3, 0), 1)"),
    ("err_diff_0dim", S + "out = torch.diff(s)"),
    ("err_trace_bool", "out = torch.trace(torch.ones(2, 2, dtype=torch.bool))"),
    ("repeat_expand_edges", S + E + "out = (s.repeat(2), s.repeat(2, 3), s.repeat(0), e.repeat(3), s.expand(3), "
                                    "torch.ones(1).expand(1), e.expand(0), e.unsqueeze(-1).expand(0, 4))"),
    ("err_repeat_fewer_dims", "out = torch.ones(2, 3).repeat(2)"),
    ("err_expand_fewer_sizes", "out = torch.ones(2, 3).expand(3)"),
    ("err_expand_size", "out = torch.zeros(3, 0).expand(2, 2)"),
    ("err_unbind_0dim", S + "out = s.unbind()"),
    ("view_reshape_empty", E30 + "out = (e30.reshape(-1), e30.view(0, 5), e30.reshape(3, -1), torch.zeros(0).reshape(0, 5), "
                               "e30.t().reshape(-1), torch.zeros(0).view(1, 0, 2))"),
    ("err_view_no_sizes", M + "out = m.view()"),
    ("err_reshape_empty_infer", E30 + "out = e30.reshape(-1, 0)"),
    ("strides_of_empty", "out = (torch.zeros(3, 0).stride(), torch.zeros(0, 3).stride(), torch.zeros(2, 0, 3).stride(), "
                         "torch.zeros(3, 0).t().is_contiguous(), torch.zeros(3, 0)[::2].stride())"),
    ("err_size_dim", M + "out = m.size(2)"),
    ("size_neg_dim", M + "out = (m.size(-1), m.size(dim=0), m.shape[-2])"),
    # ---- cat, stack, matmul, losses of empties ----
    ("cat_skips_empty_1d", M + E + "out = (torch.cat([e, m]), torch.cat([m, torch.zeros(0)], 1), torch.cat([e, e]), "
                                   "torch.cat([torch.zeros(0, dtype=torch.float64), m]), torch.cat([torch.zeros(3, 0), "
                                   "torch.ones(3, 2)], 1))"),
    ("err_cat_empty_list", "out = torch.cat([])"),
    ("err_stack_empty_list", "out = torch.stack([])"),
    ("err_cat_0dim", S + "out = torch.cat([s, s])"),
    ("err_cat_dims", M + "out = torch.cat([m, torch.ones(3)])"),
    ("matmul_zero_dims", "a = torch.zeros(3, 0, requires_grad=True)\nc = torch.zeros(0, 4)\n"
                         "out = (a @ c, c.t() @ a.t(), torch.zeros(0) @ torch.zeros(0), torch.mm(a, torch.ones(0, 2)), "
                         "torch.zeros(2, 3, 0) @ torch.zeros(2, 0, 4))"),
    ("err_matmul_0dim", S + "out = s @ s"),
    ("losses_of_empty_batch", "x = torch.zeros(0, 3, requires_grad=True)\ny = torch.zeros(0, dtype=torch.long)\n"
                              "out = (torch.nn.functional.cross_entropy(x, y), torch.nn.functional.nll_loss(x, y), "
                              "torch.nn.functional.mse_loss(torch.zeros(0), torch.zeros(0)))"),
    ("masks_selecting_nothing", V + "mask = v > 10\nsel = v[mask]\nout = (sel, sel.sum(), sel.mean(), mask.any(), "
                                    "mask.nonzero(), sel.numel(), len(sel), v[[]], v[0:0])"),
    ("err_max_of_nothing_selected", V + "out = v[v > 10].max()"),
    ("err_bool_of_empty", "out = bool(torch.zeros(0))"),
    # ---- numpy keyword names ----
    ("axis_keepdims", M + "out = (m.sum(axis=0), m.sum(axis=1, keepdims=True), torch.mean(m, axis=1), m.max(axis=1), "
                          "torch.argmax(m, axis=0), m.std(axis=0), m.softmax(axis=1), torch.cat([m, m], axis=1), "
                          "torch.stack([m, m], axis=1), m.squeeze(axis=0), m.unsqueeze(axis=0), m.size(axis=1), "
                          "m.cumsum(axis=1), m.any(axis=0), torch.logsumexp(m, axis=1))"),
    ("err_axis_on_python_op", M + "out = m.split(1, axis=0)"),
    # ---- other edges ----
    ("sign_nan_int_bool", NAN + "out = (n.sign(), torch.tensor([-3, 0, 2]).sign(), torch.tensor([True, False]).sign())"),
    ("clamp_promotes", B + L + "out = (b.clamp(0, 1), b.clamp(min=0.5), l.clamp(min=0.5), l.clamp(0, 1), "
                               "torch.tensor([1.0, float('nan'), 5.0]).clamp(0, 2))"),
    ("clamp_gradient_zeros", "x = torch.tensor([-1.0, 0.5, 3.0], requires_grad=True)\nout = x.clamp(0, 2)"),
    ("err_clamp_bool_bounds", B + "out = b.clamp(min=True)"),
    ("nonzero_0dim", "out = (torch.tensor(3.0).nonzero(as_tuple=True), torch.tensor(0.0).nonzero(as_tuple=True), "
                     "torch.tensor(3.0).nonzero())"),
    ("unique_grad_fn", "x = torch.tensor([3.0, 1.0, 3.0], requires_grad=True)\nout = torch.unique(x)"),
    ("err_histc_nan", NAN + "out = torch.histc(n.detach(), 4)"),
    ("err_histc_bool", B + "out = torch.histc(b, 4)"),
    ("err_quantile_empty", E + "out = torch.quantile(e, 0.5)"),
    ("quantile_0dim", S + "out = (torch.quantile(s.detach(), 0.5), torch.quantile(s.detach(), 0.5, dim=0))"),
    ("integral_rounding_errors", "out = [torch.tensor([1]).floor(), torch.tensor([2]).round()]"),
    ("err_floor_bool", "out = torch.tensor([True]).floor()"),
    ("err_round_bool", "out = torch.tensor([True]).round()"),
    ("embedding_repeated_indices", "w = torch.tensor([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]], requires_grad=True)\n"
                                   "i = torch.tensor([2, 0, 2, 2, 1, 0])\n"
                                   "out = torch.nn.functional.embedding(i, w) * torch.tensor([[0.7], [1.3], [-0.1], "
                                   "[0.33], [2.0], [-1.7]])"),
    ("neg_of_zeros", "x = torch.zeros(20)\nout = (-x, x.neg(), torch.neg(torch.zeros(3, 7)), 0 - x[:3])"),
    ("explicit_dim_none", M + "out = (m.sum(None), m.sum(dim=None), torch.sum(m, None), m.mean(None), "
                              "m.sum(None, dtype=torch.float64))"),
    ("index_select_edges", M + S + "out = (m.index_select(1, torch.tensor([2, 0, 2])), s.index_select(0, "
                                   "torch.tensor([0, 0])), torch.zeros(3, 0).index_select(1, torch.tensor([], "
                                   "dtype=torch.long)))"),
    ("err_index_select_range", M + "out = m.index_select(1, torch.tensor([3]))"),
    ("err_index_select_negative", M + "out = m.index_select(1, torch.tensor([-1]))"),
    ("err_index_select_empty_dim", "out = torch.zeros(2, 0, 4).index_select(-2, torch.tensor([0]))"),
    ("softmax_gradient_zeros", "x = torch.tensor([[1.0, 2.0], [1.0, 0.5], [1.0, -1.0]], requires_grad=True)\n"
                               "out = (x.softmax(0), x.log_softmax(1))"),
    ("flip_forms", M + "out = (m.flip(0), m.flip(0, 1), m.flip([1]), torch.flip(m, (0,)), m.flip(dims=(-1,)))"),
    ("err_flip_dim_twice", M + "out = m.flip((1, -1))"),
    ("err_torch_flip_int", M + "out = torch.flip(m, 0)"),
    ("unflatten_diff_gather_empties", E30 + "out = (e30.unflatten(0, (1, -1)), torch.zeros(2, 4, 0).unflatten(1, (2, -1)), "
                                            "torch.diff(e30, n=0, dim=5), e30.gather(1, torch.zeros(3, 0, "
                                            "dtype=torch.long)), e30.gather(0, torch.zeros(1, 0, dtype=torch.long)))"),
    ("err_unflatten_0dim", S + "out = s.unflatten(0, (1, 1))"),
    ("err_repeat_interleave_0dim", S + "out = s.repeat_interleave(2, dim=1)"),
    ("err_logsumexp_none", M + "out = m.logsumexp(None)"),
    ("cosine_similarity_zero_vector", "a = torch.tensor([[0.0, 0.0, 0.0], [1.0, 2.0, 2.0]], requires_grad=True)\n"
                                      "c = torch.tensor([[1.0, 0.0, 1.0], [0.5, 0.5, 1.0]])\n"
                                      "out = torch.cosine_similarity(a, c)"),
    ("err_cosine_similarity_int", "out = torch.cosine_similarity(torch.ones(2, 3, dtype=torch.long), "
                                  "torch.ones(2, 3, dtype=torch.long))"),
    ("cummax_later_nan", "x = torch.tensor([1.0, float('nan'), 3.0, float('nan'), 0.5], requires_grad=True)\n"
                         "out = (x.cummax(0), x.cummin(0))"),
    ("where_forms", M + L + B + "out = (torch.where(m > 2, m, 0.0), torch.where(b, l[:4], 1.5), torch.where(b, 1, 0), "
                            "torch.where(b, 1.0, 0.0), torch.where(b, True, False), torch.where(b), torch.where(m > 2), "
                            "torch.where(b, l[:4], torch.tensor(2.5, dtype=torch.float64)), torch.where(b, b, 2))"),
    ("masked_fill_broadcasts", M + "out = (torch.ones(3, 1).masked_fill(torch.tensor([True, False]), 5.0), "
                                   "m.masked_fill(torch.zeros(2, 3, dtype=torch.bool), 1.0), "
                                   "torch.tensor(2.0).masked_fill(torch.tensor([[True], [False]]), 0.0))"),
    ("err_masked_fill_inplace_broadcast", "out = torch.ones(3, 1).masked_fill_(torch.tensor([True, False]), 5.0)"),
    ("remainder_floor_divide_signs", "a = torch.tensor([-3.0, 3.0, -1.5, 0.0, 4.5])\nc = torch.tensor([1.5, -1.5, 1.5, -2.0, 1.5])\n"
                                     "out = (a % c, torch.remainder(a, 1.5), a // c, torch.fmod(a, c), "
                                     "torch.tensor([-7, 7]) % 3, torch.tensor([-7, 7]) // 3)"),
    ("err_floor_divide_bool", B + "out = b // b"),
    ("err_remainder_bool", B + "out = torch.remainder(b, True)"),
    ("err_broadcast_dim_index", "out = torch.ones(3, 0) + torch.ones(0, 1, 3)"),
    ("err_maximum_broadcast", "out = torch.maximum(torch.ones(3, 0), torch.ones(0, 1, 3))"),
    ("err_hypot_broadcast", "out = torch.hypot(torch.ones(3, 1), torch.ones(2, 3))"),
    ("err_hypot_int", L + "out = torch.hypot(l, l)"),
    ("atan2_0dim_int", "out = (torch.atan2(torch.tensor(1), torch.tensor(-1)), torch.atan2(torch.tensor(2.0), torch.tensor(0.0)))"),
    ("err_lerp_dtype", M + "out = torch.lerp(m, torch.ones(2, 3, dtype=torch.long), 0.5)"),
    ("err_lerp_int", L + "out = torch.lerp(l, l, 0.5)"),
    ("err_addcmul_bool", B + "out = torch.addcmul(b, b, b)"),
    ("linspace_one_step", "out = (torch.linspace(0, 1, 1), torch.linspace(3, -3, 1), torch.linspace(0, 1, 0))"),
    ("err_one_hot_empty", "out = torch.nn.functional.one_hot(torch.tensor([], dtype=torch.long))"),
    ("one_hot_empty_classes", "out = torch.nn.functional.one_hot(torch.tensor([], dtype=torch.long), 3)"),
    ("renorm_edges", "out = (torch.zeros(3, 0).renorm(2, 0, 1.0), torch.ones(2, 3).renorm(2, 1, 1.0))"),
    ("err_renorm_1d", "out = torch.ones(3).renorm(2, 0, 1.0)"),
]


def encode_error(e):
    return {"type": type(e).__name__, "message": str(e)}


def main():
    cases = []
    for id_, code in CASES:
        try:
            outs, kind, grads, caught = run(torch, code)
        except Exception as e:  # noqa: BLE001  (the case's expected error)
            cases.append({"id": id_, "code": code, "error": encode_error(e)})
            continue
        cases.append({"id": id_, "code": code, "kind": kind, "outs": outs, "grads": grads, "warnings": caught})
    write_json({"torch_version": torch.__version__, "cases": cases}, here("edge_cases.json"))


if __name__ == "__main__":
    main()
