"""torch functions and Tensor methods of _tensor_math.py and _tensor_shape.py under real PyTorch 1.13: for each
case, its result(s) (shape, dtype, values, whether it requires grad), the gradients of its leaves and its
warnings, or its error's type and message.

Run by hand from anywhere: /usr/bin/python3 tests/golden/gen_tensor_math.py
Writes tensor_math.json next to this script (deterministic; a few seconds).

A case is a snippet run with `torch` bound to the library under test; it builds its inputs (literals, or randn
after manual_seed, which tinyddp reproduces bitwise) and binds `out` (a tensor, a tuple of tensors or a Python
value). When an output requires grad, loss = sum over floating outputs o of (o * c).sum(), c = ((k % 7) - 3) / 2
for element k (so every element's gradient differs), is backpropagated and the .grad of every leaf local that
requires grad is recorded. tests/python/test_tensor_math.py runs the same snippets through tinyddp.

Layout: {"cases": [{"id", "code", "outs": [{"shape", "dtype", "values", "requires_grad", "grad_fn"} or {"py": value}],
"grads": {name: {"shape", "values"}}, "warnings": [text]} or {"id", "code", "error": {"type", "message"}}]}.
"""
import sys

import torch

sys.dont_write_bytecode = True  # keep __pycache__ out of tests/golden
from gen_tdp_params import here, write_json
from tensor_math_cases import run

SEED = "torch.manual_seed(0)\n"
X = "x = torch.tensor([[0.5, -1.25, 2.0], [3.5, 0.25, -0.75]], requires_grad=True)\n"
R = SEED + "r = torch.randn(3, 4, requires_grad=True)\n"

CASES = [
    # shape and selection
    ("reshape", X + "out = torch.reshape(x, (3, 2))"),
    ("all_any", "a = torch.tensor([[True, False], [True, True]])\nout = (torch.all(a), torch.any(a), "
                "torch.all(a, 1), torch.any(a, dim=0, keepdim=True), torch.all(torch.tensor([1, 2, 0])))"),
    ("masked_fill", X + "out = torch.masked_fill(x, x > 1, -5.0)"),
    ("scatter_src", X + "out = torch.zeros(3, 3).scatter(0, torch.tensor([[0, 1, 2], [2, 0, 1]]), x)"),
    ("scatter_value", "out = torch.zeros(2, 4).scatter(1, torch.tensor([[1, 3], [0, 0]]), 2.5)"),
    ("scatter_grad_self", X + "out = x.scatter(1, torch.tensor([[2], [0]]), torch.tensor([[9.0], [8.0]]))"),
    ("scatter_add", R + "i = torch.tensor([[0, 1, 0, 1], [1, 1, 1, 0], [0, 0, 0, 0]])\n"
                        "out = torch.zeros(2, 4).scatter_add(0, i, r)"),
    ("scatter_add_self_grad", X + "out = x.scatter_add(1, torch.tensor([[0, 0], [1, 2]]), "
                                  "torch.tensor([[1.0, 2.0], [3.0, 4.0]]))"),
    ("scatter_add_", "t = torch.ones(5)\nt.scatter_add_(0, torch.tensor([0, 0, 4, 2]), torch.tensor([1., 2., 3., 4.]))"
                     "\nout = t"),
    ("scatter_reduce_add", "out = torch.zeros(3).scatter(0, torch.tensor([0, 0, 2]), torch.tensor([1., 2., 3.]), "
                           "reduce='add')"),
    ("index_add_", R + "t = torch.zeros(2, 4)\nout = t.index_add(0, torch.tensor([1, 0, 1]), r, alpha=2)"),
    ("index_add_inplace", "t = torch.zeros(3, 2)\nt.index_add_(0, torch.tensor([2, 2]), torch.ones(2, 2))\nout = t"),
    ("index_fill_", "t = torch.arange(6.).reshape(2, 3)\nt.index_fill_(1, torch.tensor([0, 2]), -1.0)\nout = t"),
    ("index_put_", "t = torch.zeros(3, 3)\nt.index_put_((torch.tensor([0, 2]), torch.tensor([1, 1])), "
                   "torch.tensor([5., 6.]))\nout = t"),
    ("index_put_acc", "t = torch.zeros(4)\nt.index_put_((torch.tensor([1, 1, 3]),), torch.tensor([1., 2., 3.]), "
                      "accumulate=True)\nout = t"),
    ("masked_scatter_", "t = torch.zeros(2, 3)\nt.masked_scatter_(torch.tensor([[True, False, True], [False, True, "
                        "False]]), torch.tensor([1., 2., 3., 4.]))\nout = t"),
    ("put_", "t = torch.zeros(2, 2)\nt.put_(torch.tensor([3, 0]), torch.tensor([7., 8.]))\nout = t"),
    ("take", X + "out = torch.take(x, torch.tensor([[5, 0], [1, 1]]))"),
    ("tile", X + "out = (torch.tile(x, (2,)), x.tile((2, 1, 2)))"),
    ("repeat_interleave", X + "out = (torch.repeat_interleave(x, 2), x.repeat_interleave(torch.tensor([1, 3]), "
                              "dim=0), torch.repeat_interleave(torch.tensor([2, 0, 1])))"),
    ("meshgrid_ij", "out = torch.meshgrid(torch.tensor([1, 2]), torch.tensor([3, 4, 5]), indexing='ij')"),
    ("meshgrid_xy", "out = torch.meshgrid(torch.tensor([1., 2.]), torch.tensor([3., 4., 5.]), indexing='xy')"),
    ("meshgrid_warns", "out = torch.meshgrid(torch.tensor([1, 2]), torch.tensor([3, 4, 5]))"),
    ("stacks", "a = torch.tensor([1., 2.])\nb = torch.tensor([3., 4.])\nout = (torch.hstack([a, b]), "
               "torch.vstack([a, b]), torch.dstack([a, b]), torch.column_stack([a, b]), torch.row_stack((a, b)))"),
    ("stacks_2d", X + "out = (torch.hstack([x, x]), torch.vstack((x, x)), torch.dstack([x, x]), "
                      "torch.column_stack([x, x]))"),
    ("squeeze_stack", X + "y = x.unsqueeze(1)\nout = (y, y.squeeze(), y.squeeze(1), y.squeeze(0), torch.stack([x, x * 2], 1), "
                          "torch.stack((x[0], x[1])), x.unsqueeze(-1).squeeze(-1))"),
    ("basic_index_views", X + "out = (x[0], x[:, 1], x[0, 1:3], x[None], x[0, None], x[..., 1], x[:], x[...], "
                              "x[()], x[0, ...], x[:, None, :], x[-1, 2], x[1:2, None])"),
    ("broadcast_tensors", X + "out = torch.broadcast_tensors(x, torch.tensor([1., 2., 3.]))"),
    ("diag", X + "out = (torch.diag(x), torch.diag(x, 1), torch.diag(x, -1), x.diag())"),
    ("diag_vector", "v = torch.tensor([1., 2., 3.], requires_grad=True)\nout = (torch.diag(v), torch.diag(v, 1), "
                    "torch.diag(v, -2))"),
    ("diagonal", R + "out = (torch.diagonal(r), r.diagonal(1), torch.diagonal(r, -1), torch.diagonal(r, 0, 1, 0))"),
    ("diagonal_3d", SEED + "r = torch.randn(2, 3, 3, requires_grad=True)\nout = torch.diagonal(r, 0, -2, -1)"),
    ("diag_embed", X + "out = (torch.diag_embed(x), torch.diag_embed(x, 1))"),
    ("trace", R + "out = torch.trace(r)"),
    ("unfold", "t = torch.arange(7.).requires_grad_()\nout = (t.unfold(0, 3, 2), t.reshape(1, 7).unfold(1, 2, 3))"),
    ("rot90", X + "out = (torch.rot90(x), torch.rot90(x, 2), torch.rot90(x, -1), torch.rot90(x, 1, [1, 0]))"),
    ("flips", X + "out = (torch.fliplr(x), torch.flipud(x))"),
    ("block_diag", X + "out = torch.block_diag(x, torch.tensor([[7.]]), torch.tensor([1., 2.]))"),
    ("cartesian_prod", "out = torch.cartesian_prod(torch.tensor([1, 2]), torch.tensor([3, 4, 5]))"),
    ("combinations", "v = torch.tensor([1., 2., 3., 4.])\nout = (torch.combinations(v), torch.combinations(v, 3), "
                     "torch.combinations(v, with_replacement=True))"),
    ("combinations_r0", "out = torch.combinations(torch.tensor([1., 2.]), 0)"),
    ("more_shapes", SEED + "x = torch.randn(3, 4, 5, requires_grad=True)\n"
                    "out = (torch.diag_embed(x, 1, 0, 2), x.unfold(1, 2, 1), x.repeat_interleave(torch.tensor([1, 2, "
                    "0, 1, 1]), dim=-1), torch.zeros(3, 2, 5).index_add(1, torch.tensor([1, 0, 1, 1]), x), "
                    "torch.einsum('ij,jk,kl->il', x[0], x[1].t(), x[2]), torch.cdist(x, x[:, :2]), "
                    "torch.zeros(3, 2, 4).index_put((torch.tensor([0, 2]), torch.tensor([1, 0])), x[0, 0, :4]), "
                    "torch.zeros(2, 5).masked_scatter(torch.tensor([True, False, True, True, False]), x[0]))"),
    ("tril_triu_indices", "out = (torch.tril_indices(3, 3), torch.triu_indices(3, 4, 1), "
                          "torch.tril_indices(4, 3, -1))"),
    ("unflatten", R + "out = (torch.unflatten(r, 1, (2, 2)), r.unflatten(0, (3, 1)))"),
    ("sum_to_size", R + "out = (r.sum_to_size(1, 4), r.sum_to_size(3, 1), r.sum_to_size(4))"),
    # linear algebra
    ("einsum_mm", R + "out = torch.einsum('ij,jk->ik', r, r.t())"),
    ("einsum_batch", SEED + "a = torch.randn(2, 3, 4, requires_grad=True)\nb = torch.randn(2, 4, 5, requires_grad=True)"
                     "\nout = torch.einsum('bij,bjk->bik', a, b)"),
    ("einsum_attention", SEED + "q = torch.randn(2, 3, 4, requires_grad=True)\nk = torch.randn(2, 5, 4)\n"
                         "out = torch.einsum('bqd,bkd->bqk', q, k)"),
    ("einsum_ellipsis", SEED + "a = torch.randn(2, 3, 4, requires_grad=True)\nb = torch.randn(4, 2)\n"
                        "out = torch.einsum('...ij,jk->...ik', a, b)"),
    ("einsum_misc", R + "v = torch.tensor([1., 2., 3., 4.])\n"
                        "out = (torch.einsum('ij->ji', r), torch.einsum('ij->', r), "
                        "torch.einsum('ij,j->i', r, v), torch.einsum('i,j->ij', v, v), torch.einsum('ii', r[:, :3]), "
                        "torch.einsum('ii->i', r[:, :3]), torch.einsum('ij', r), torch.einsum('ij,ij->ij', r, r))"),
    ("einsum_list", R + "out = torch.einsum('ij,kj', [r, r])"),
    ("addmm", R + "m = torch.tensor([[1., 0.], [2., 1.], [0., 3.], [1., 1.]])\nb = torch.tensor([0.5, -0.5])\n"
                  "out = (torch.addmm(b, r, m), torch.addmm(b, r, m, beta=0.5, alpha=2), r.addmm(r, torch.eye(4)))"),
    ("addmv_mv", R + "v = torch.tensor([1., 2., 3., 4.])\nout = (torch.mv(r, v), torch.addmv(torch.ones(3), r, v), "
                     "r.mv(v))"),
    ("baddbmm", SEED + "a = torch.randn(2, 3, 4, requires_grad=True)\nb = torch.randn(2, 4, 2)\n"
                "c = torch.randn(2, 3, 2)\nout = (torch.baddbmm(c, a, b), torch.baddbmm(c, a, b, beta=0.5, "
                "alpha=-1.5), torch.addbmm(c[0], a, b))"),
    ("tensordot", SEED + "a = torch.randn(2, 3, 4, requires_grad=True)\nb = torch.randn(3, 4, 5)\n"
                  "out = (torch.tensordot(a, b), torch.tensordot(a, b, ([1], [0])).shape, "
                  "torch.tensordot(a, b, dims=([1, 2], [0, 1])))"),
    ("inner_kron", X + "out = (torch.inner(x, x), torch.kron(x, torch.tensor([[1., 2.], [3., 4.]])), "
                       "torch.kron(torch.tensor([1, 2]), torch.tensor([1, 10, 100])))"),
    ("cross", SEED + "a = torch.randn(4, 3, requires_grad=True)\nb = torch.randn(4, 3)\n"
              "out = (torch.cross(a, b, dim=1), a.cross(b, 1))"),
    ("diff", X + "out = (torch.diff(x), torch.diff(x, dim=0), torch.diff(x, n=2), "
                 "torch.diff(torch.tensor([1, 4, 9])))"),
    ("dist", X + "y = torch.tensor([[1., 1., 1.], [0., 0., 0.]])\nout = (torch.dist(x, y), torch.dist(x, y, 1), "
                 "torch.dist(x, y, 3))"),
    ("cdist", SEED + "a = torch.randn(3, 4, requires_grad=True)\nb = torch.randn(2, 4)\n"
              "out = (torch.cdist(a, b), torch.cdist(a, b, p=1))"),
    ("cosine_similarity", SEED + "a = torch.randn(3, 4, requires_grad=True)\nb = torch.randn(3, 4)\n"
                          "out = (torch.cosine_similarity(a, b), torch.cosine_similarity(a, b, dim=0))"),
    ("chain_matmul", R + "out = torch.chain_matmul(r, r.t(), r)"),
    ("trapz", X + "out = (torch.trapz(x), torch.trapz(x, dx=0.5), torch.trapz(x, torch.tensor([0., 1., 3.])), "
                  "torch.trapezoid(x, dim=0))"),
    # elementwise
    ("trig", SEED + "r = (torch.rand(3, 4) * 1.8 - 0.9).requires_grad_()\nout = (torch.tan(r), torch.asin(r), "
                    "torch.acos(r), torch.atan(r), torch.sinh(r), torch.cosh(r), r.tan(), torch.arcsin(r))"),
    ("inverse_hyperbolic", SEED + "r = (torch.rand(40) * 1.8 - 0.9).requires_grad_()\n"
                           "out = (torch.asinh(r * 3), torch.atanh(r), torch.acosh(r.abs() + 1), "
                           "torch.asinh(r.detach().double()), torch.atanh(torch.tensor([0, 1])))"),
    ("atan2", R + "o = torch.tensor([[1.], [-2.], [0.5]])\nout = (torch.atan2(r, o), r.atan2(o))"),
    ("logs", SEED + "r = (torch.rand(3, 4) * 5 + 0.1).requires_grad_()\nout = (torch.log2(r), torch.log10(r), "
                    "r.log2(), torch.log2(torch.tensor([8, 3])))"),
    ("fmod", X + "out = (torch.fmod(x, 1.5), torch.fmod(torch.tensor([-7, 7, 5]), 3), x.fmod(-0.5))"),
    ("hypot", X + "out = torch.hypot(x, torch.tensor([1., 2., 3.]))"),
    ("logaddexp", X + "out = torch.logaddexp(x, torch.tensor([1., -2., 2.]))"),
    ("xlogy", X + "out = torch.xlogy(torch.tensor([[0., 1., 2.], [3., 0., 1.]]), x.abs())"),
    ("logit", SEED + "r = torch.rand(3, 4).requires_grad_()\nout = (torch.logit(r), torch.logit(r, eps=0.2))"),
    ("heaviside", "out = torch.heaviside(torch.tensor([-1.5, 0., 2.]), torch.tensor([0.5]))"),
    ("lerp", X + "e = torch.tensor([[1., 1., 1.], [-1., -1., -1.]], requires_grad=True)\n"
                 "out = (torch.lerp(x, e, 0.3), torch.lerp(x, e, 0.75), x.lerp(e, torch.tensor([0.1, 0.6, 1.0])))"),
    ("lerp_", "t = torch.tensor([1., 2., 3.])\nt.lerp_(torch.tensor([3., 3., 3.]), 0.5)\nout = t"),
    ("addcmul", X + "a = torch.tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)\n"
                    "out = (torch.addcmul(x, a, x), torch.addcmul(x, a, a, value=-0.1))"),
    ("addcdiv", X + "a = torch.tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)\n"
                    "out = (torch.addcdiv(x, a, a + 1), torch.addcdiv(x, x, a, value=-0.001))"),
    ("adam_step", SEED + "p = torch.randn(5)\ng = torch.randn(5)\nm = torch.zeros(5)\nv = torch.zeros(5)\n"
                  "for step in range(1, 4):\n    m.mul_(0.9).add_(g, alpha=0.1)\n    v.mul_(0.999).addcmul_(g, g, "
                  "value=0.001)\n    denom = (v.sqrt() / math.sqrt(1 - 0.999 ** step)).add_(1e-8)\n"
                  "    p.addcdiv_(m, denom, value=-0.01 / (1 - 0.9 ** step))\n    m.lerp_(g, 0.5)\nout = (p, m, v)"),
    ("nan_to_num", "t = torch.tensor([float('nan'), float('inf'), -float('inf'), 1.5])\n"
                   "out = (torch.nan_to_num(t), torch.nan_to_num(t, nan=2.0, posinf=9.0), t.nan_to_num(neginf=-1.0))"),
    ("logical", "a = torch.tensor([0., 1., 2., 0.])\nb = torch.tensor([True, True, False, False])\n"
                "out = (torch.logical_and(a, b), torch.logical_or(a, b), torch.logical_xor(a, b), a.logical_and(b))"),
    # reductions
    ("prod", X + "out = (torch.prod(x), x.prod(1), torch.prod(x, 0, keepdim=True), "
                 "torch.prod(torch.tensor([2, 3, 4])))"),
    ("prod_zero_grad", "x = torch.tensor([[2., 0., 3.], [0., 0., 1.]], requires_grad=True)\n"
                       "out = (x.prod(), x.prod(1))"),
    ("cumprod", X + "out = (torch.cumprod(x, 1), x.cumprod(0), torch.cumprod(torch.tensor([1, 2, 3]), 0))"),
    ("median", R + "out = (torch.median(r), r.median(1), torch.median(r, 0, keepdim=True), "
                   "torch.median(torch.tensor([4, 1, 3, 2])))"),
    ("median_nan", "t = torch.tensor([[1., float('nan'), 0.], [1., 2., 3.], [float('nan'), 5., float('nan')]])\n"
                   "out = (torch.median(t), t.median(1), t[1].median(), t.median(0, keepdim=True))"),
    ("kthvalue", R + "out = (torch.kthvalue(r, 2), r.kthvalue(3, 0), torch.kthvalue(r, 1, 1, True))"),
    ("mode", "t = torch.tensor([[1., 2., 2., 3.], [4., 4., 5., 5.]])\nout = (torch.mode(t), t.mode(0))"),
    ("quantile", R + "out = (torch.quantile(r, 0.3), r.quantile(torch.tensor([0.25, 0.5, 0.9]), dim=1), "
                     "torch.quantile(r, 0.5, dim=0, keepdim=True), torch.quantile(r, 0.4, interpolation='lower'), "
                     "torch.quantile(r, 0.4, interpolation='midpoint'), torch.quantile(r, 0.4, "
                     "interpolation='nearest'))"),
    ("quantile_shapes", SEED + "x = torch.randn(3, 4, 5, requires_grad=True)\nq = torch.tensor([0.2, 0.8])\n"
                        "out = (torch.quantile(x, q, dim=1, keepdim=True), torch.quantile(x, 0.3, keepdim=True), "
                        "torch.quantile(x, q), torch.quantile(x, q, keepdim=True), torch.quantile(x, 0.5, dim=-1))"),
    ("nansum_nanmean", "t = torch.tensor([[1., float('nan'), 3.], [float('nan'), 2., 4.]], requires_grad=True)\n"
                       "out = (torch.nansum(t), t.nansum(1), torch.nanmean(t), torch.nanmean(t, 0))"),
    ("std_var_mean", R + "out = torch.std_mean(r) + torch.var_mean(r, 1) + torch.var_mean(r, 0, unbiased=False)"),
    # searches
    ("searchsorted", "s = torch.tensor([1., 3., 5., 7.])\nv = torch.tensor([[0., 3.], [6., 9.]])\n"
                     "out = (torch.searchsorted(s, v), torch.searchsorted(s, v, right=True), "
                     "torch.searchsorted(torch.tensor([[1, 2], [3, 4]]), torch.tensor([[2], [5]])))"),
    ("bucketize", "out = (torch.bucketize(torch.tensor([0.5, 3., 8.]), torch.tensor([1., 3., 5.])), "
                  "torch.bucketize(torch.tensor([3, 5]), torch.tensor([1, 3, 5]), right=True))"),
    ("histc", SEED + "r = torch.randn(50)\nout = (torch.histc(r, bins=5), torch.histc(r, 4, min=-1, max=1))"),
    # random forms
    ("normal", SEED + "out = (torch.normal(2.0, 3.0, (2, 3)), torch.normal(torch.zeros(3), torch.ones(3) * 2), "
                      "torch.normal(torch.ones(2), 0.5), torch.normal(1.0, torch.tensor([1., 2.])))"),
    ("bernoulli_p", SEED + "out = torch.bernoulli(torch.zeros(8), 0.5)"),
    ("bernoulli_tensor", SEED + "p = torch.rand(3, 7)\nt = torch.zeros(3, 7)\nt.bernoulli_(p)\n"
                         "out = (torch.bernoulli(p), p.bernoulli(), t, torch.zeros(2, 7).bernoulli_(p[0]), "
                         "torch.rand(2))"),
    ("multinomial", SEED + "p = torch.tensor([0.1, 0.2, 0.3, 0.4])\nw = torch.rand(3, 6)\n"
                    "out = (torch.multinomial(p, 2), torch.multinomial(p, 1), torch.multinomial(p, 7, True), "
                    "w.multinomial(4), torch.multinomial(w, 5, replacement=True), torch.multinomial(w.double(), 3), "
                    "torch.multinomial(torch.tensor([0., 3., 0., 1.]), 10, True), torch.rand(2))"),
    ("multinomial_generator", "g = torch.Generator().manual_seed(5)\n"
                              "out = torch.multinomial(torch.ones(100), 20, generator=g)"),
    ("exponential_", SEED + "out = (torch.empty(5).exponential_(), torch.empty(2, 3).exponential_(2.5), "
                     "torch.empty(3, dtype=torch.float64).exponential_(), torch.rand(2))"),
    ("cauchy_geometric_", SEED + "out = (torch.empty(5).cauchy_(), torch.empty(4).cauchy_(1.0, 0.5), "
                          "torch.empty(6).geometric_(0.3), torch.randn(2))"),
    ("log_normal_", SEED + "out = (torch.empty(21).log_normal_(), torch.empty(2, 3).log_normal_(0.5, 0.25), "
                    "torch.empty(3, dtype=torch.float64).log_normal_(), torch.randn(3))"),
    # misc
    ("as_tensor", "t = torch.tensor([1., 2.])\nout = (torch.as_tensor([1, 2]), torch.as_tensor(t) is t, "
                  "torch.as_tensor(t, dtype=torch.float64), torch.is_floating_point(t), "
                  "torch.is_floating_point(torch.tensor([1])))"),
    ("inplace_spellings", "t = torch.tensor([[1., 2., 3.], [4., 5., 6.]])\na = t.clone()\na.cumsum_(1)\n"
                          "b = t.clone()\nb.divide_(2).multiply_(3).subtract_(1).negative_()\nc = t.clone()\n"
                          "c.gt_(2.5)\nd = t.clone()\nd.unsqueeze_(0)\ne = t.clone()\ne.t_()\n"
                          "f = torch.ones(1, 3, 1)\nf.squeeze_()\ng = t.clone() / 7\ng.arcsin_()\n"
                          "out = (a, b, c, d, e, f, g, e.is_contiguous(), d.shape)"),
    ("apply_map", "t = torch.tensor([1., 2., 3.])\nt.apply_(lambda v: v * 10 + 1)\n"
                  "t.map_(torch.tensor([1., 1., 2.]), lambda a, b: a - b)\nout = t"),
    ("renorm", X + "out = torch.renorm(x, 2, 0, 1.0)"),
    # second derivatives: out is a first gradient (create_graph), so the recorded x.grad is a second derivative
    ("grad2_trig", "x = torch.tensor([0.3, -0.7, 0.5], dtype=torch.float64, requires_grad=True)\n"
                   "y = (torch.tan(x) + torch.asin(x) + torch.atan(x) * torch.sinh(x) + torch.log2(x.abs())).sum()\n"
                   "out = torch.autograd.grad(y, x, create_graph=True)[0]"),
    ("grad2_atan2_hypot", "x = torch.tensor([0.3, -0.7, 0.5], dtype=torch.float64, requires_grad=True)\n"
                          "o = torch.tensor([1.0, 2.0, -1.5], dtype=torch.float64, requires_grad=True)\n"
                          "y = (torch.atan2(x, o) * torch.hypot(x, o)).sum()\n"
                          "out = torch.autograd.grad(y, (x, o), create_graph=True)"),
    ("grad2_products", "x = torch.tensor([[0.3, -0.7, 0.5], [1.5, 2.0, -1.0]], dtype=torch.float64, "
                       "requires_grad=True)\ny = (x.prod(1) + torch.cumprod(x, 1).sum(1) * 0.5).sum()\n"
                       "out = torch.autograd.grad(y, x, create_graph=True)[0]"),
    ("grad2_scatter_lerp", "x = torch.tensor([0.3, -0.7, 0.5], requires_grad=True)\n"
                           "z = torch.zeros(2).scatter_add(0, torch.tensor([0, 1, 0]), x * x)\n"
                           "y = (z * torch.tensor([1.0, 2.0])).sum() + torch.lerp(x * x, x, 0.25).sum() + "
                           "torch.addcmul(x, x, x, value=2.0).sum()\n"
                           "out = torch.autograd.grad(y, x, create_graph=True)[0]"),
    ("grad2_einsum", SEED + "a = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)\n"
                     "y = torch.einsum('ij,ij->', a * a, a)\nout = torch.autograd.grad(y, a, create_graph=True)[0]"),
    # errors
    ("err_scatter_dtype", "out = torch.zeros(3).scatter(0, torch.tensor([0]), torch.tensor([1]))"),
    ("err_kthvalue_range", "out = torch.kthvalue(torch.ones(3), 4)"),
    ("err_quantile_q", "out = torch.quantile(torch.ones(3), 1.5)"),
    ("err_diagonal_dims", "out = torch.diagonal(torch.ones(2, 2), 0, 1, 1)"),
    ("err_trace", "out = torch.trace(torch.ones(2, 2, 2))"),
    ("err_unfold", "out = torch.ones(3).unfold(0, 4, 1)"),
    ("err_meshgrid", "out = torch.meshgrid(torch.ones(2), torch.ones(2), indexing='yx')"),
    ("err_cdist", "out = torch.cdist(torch.ones(2, 3), torch.ones(2, 4))"),
    ("err_combinations", "out = torch.combinations(torch.ones(2, 2))"),
    ("err_stack_empty", "out = torch.hstack([])"),
    ("err_repeat_negative", "out = torch.repeat_interleave(torch.ones(2), torch.tensor([1, -1]))"),
    ("err_multinomial_count", "out = torch.multinomial(torch.tensor([0.5, 0.5]), 3)"),
    ("err_multinomial_negative", "out = torch.multinomial(torch.tensor([-0.5, 0.5]), 1)"),
    ("err_multinomial_zero", "out = torch.multinomial(torch.tensor([0., 0.]), 1, True)"),
    ("err_multinomial_dims", "out = torch.multinomial(torch.ones(2, 2, 2), 1)"),
    ("err_multinomial_dtype", "out = torch.multinomial(torch.tensor([1, 2]), 1)"),
    ("err_bernoulli_range", "out = torch.bernoulli(torch.tensor([1.5]))"),
    ("err_scatter_bounds", "out = torch.zeros(3).scatter(0, torch.tensor([5]), torch.ones(1))"),
    ("err_scatter_add_bounds", "out = torch.zeros(3).scatter_add(0, torch.tensor([5]), torch.ones(1))"),
    ("err_index_add_bounds", "out = torch.zeros(3).index_add(0, torch.tensor([5]), torch.ones(1))"),
    ("err_index_fill_bounds", "out = torch.zeros(3).index_fill(0, torch.tensor([4]), 1.)"),
    ("err_einsum_operands", "out = torch.einsum('ij,jk', torch.ones(2, 3))"),
    ("err_index_position_with_none", X + "out = x[None, 0, 5]"),
    ("err_index_position_with_ellipsis", X + "out = x[..., -4]"),
    ("err_diag_dims", "out = torch.diag(torch.ones(2, 2, 2))"),
    ("err_addmm_input", "out = torch.addmm(torch.ones(5), torch.ones(4, 3), torch.ones(3, 4))"),
    ("err_addmm_mats", "out = torch.addmm(torch.ones(4), torch.ones(4, 3), torch.ones(2, 4))"),
    ("err_baddbmm_input", "out = torch.baddbmm(torch.ones(5), torch.ones(2, 4, 3), torch.ones(2, 3, 4))"),
    ("err_addcdiv_int", "out = torch.addcdiv(torch.tensor([1]), torch.tensor([1]), torch.tensor([1]))"),
]


def encode(value):
    if isinstance(value, torch.Tensor):
        return {"shape": list(value.shape), "dtype": str(value.dtype), "requires_grad": value.requires_grad,
                "grad_fn": type(value.grad_fn).__name__ if value.grad_fn is not None else None,
                "values": value.detach().reshape(-1).tolist()}
    if isinstance(value, torch.Size):
        return {"py": list(value)}
    return {"py": value}


def main():
    cases = []
    for id_, code in CASES:
        try:
            outs, grads, caught = run(torch, code)
            grads = {name: {"shape": list(g.shape), "values": g.reshape(-1).tolist()} for name, g in grads.items()}
        except Exception as e:  # the case's expected error
            cases.append({"id": id_, "code": code, "error": {"type": type(e).__name__, "message": str(e)}})
            continue
        cases.append({"id": id_, "code": code, "outs": [encode(o) for o in outs], "grads": grads, "warnings": caught})
    write_json({"cases": cases}, here("tensor_math.json"))


if __name__ == "__main__":
    main()
