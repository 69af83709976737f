"""The torch API CPU training scripts use beyond tensor math, under real PyTorch 1.13: torch.linalg's norms and
torch.norm, amax/amin, inference_mode and inference tensors, autocast and GradScaler on a machine without CUDA,
dtype objects, finfo/iinfo, torch.__version__, torch.backends flags, thread and determinism settings, torch.cuda's
answers without CUDA, bincount, isin, logspace, detach_ and autograd.Variable. For each case: its results (shape,
dtype, values, requires_grad, grad_fn, is_inference; Python values; reprs), the gradients of its leaves and its
warnings, or its error's type and message.

Run by hand from anywhere: /usr/bin/python3 tests/golden/gen_api_more.py
Writes api_more.json next to this script (deterministic; a few seconds). tests/python/test_api_more.py runs the same
snippets through tinyddp (api_more_cases.py is the shared runner).
"""
import sys

import torch

sys.dont_write_bytecode = True  # keep __pycache__ out of tests/golden
from gen_tdp_params import here, write_json  # noqa: E402
from api_more_cases import encode, run  # noqa: E402

SEED = "torch.manual_seed(0)\n"
R = SEED + "r = torch.randn(3, 4, requires_grad=True)\n"
X = "x = torch.tensor([[3., -4., 0.5], [0., 1., -2.]], requires_grad=True)\n"
Z = "z = torch.zeros(2, 3, requires_grad=True)\n"
INF = "inf = float('inf')\n"


def err(stmt):
    """A snippet line that runs `stmt` and binds `e` to the text of the exception it raises (or None)."""
    return f"try:\n    {stmt}\n    e = None\nexcept Exception as ex:\n    e = type(ex).__name__ + ': ' + str(ex)\n"


CASES = [
    # ---- torch.linalg.vector_norm: every order, dims, keepdim, dtype; gradients (0 at a zero norm) ----
    ("vector_norm_orders", R + INF + "out = tuple(torch.linalg.vector_norm(r, o) for o in (2, 1, inf, -inf, 0, 3, "
                                     "0.5, -1, -2.5, 1.5))"),
    ("vector_norm_dims", R + "out = (torch.linalg.vector_norm(r, dim=1), torch.linalg.vector_norm(r, 1, dim=0, "
                             "keepdim=True), torch.linalg.vector_norm(r, 3, dim=(0, 1)), torch.linalg.vector_norm(r, "
                             "dim=[-1], keepdim=True), torch.linalg.vector_norm(r, float('inf'), 0), "
                             "torch.linalg.vector_norm(r, dim=[]), torch.linalg.vector_norm(r, keepdim=True))"),
    ("vector_norm_3d", SEED + "t = torch.randn(2, 3, 4, requires_grad=True)\nout = (torch.linalg.vector_norm(t, "
                              "dim=(0, 2)), torch.linalg.vector_norm(t, -float('inf'), dim=(2, 0), keepdim=True), "
                              "torch.linalg.vector_norm(t, 0.5, 1))"),
    ("vector_norm_dtype", R + "out = (torch.linalg.vector_norm(r, dtype=torch.float64), "
                              "torch.linalg.vector_norm(r.double(), 1, dtype=torch.float64))"),
    ("vector_norm_zero_grads", Z + INF + "out = tuple(torch.linalg.vector_norm(z, o) for o in (2, 1, inf, 3, 0.5, "
                                         "1.5))"),
    ("vector_norm_zero_grad_ord0", Z + "out = torch.linalg.vector_norm(z, 0)"),
    ("vector_norm_ties_inf", "t = torch.tensor([[1., -3., 3.], [2., 0., -2.]], requires_grad=True)\n"
                             "out = (torch.linalg.vector_norm(t, float('inf')), torch.linalg.vector_norm(t, "
                             "float('inf'), 1), torch.linalg.vector_norm(t, -float('inf'), 1))"),
    ("vector_norm_scalar_and_empty", "s = torch.tensor(-3., requires_grad=True)\nout = (torch.linalg.vector_norm(s), "
                                     "torch.linalg.vector_norm(s, dim=0), torch.linalg.vector_norm(s, keepdim=True), "
                                     "torch.linalg.vector_norm(torch.zeros(0)), torch.linalg.vector_norm(torch.zeros(0, "
                                     "3), float('inf'), dim=1), torch.linalg.vector_norm(torch.zeros(0, 3), 1, 0))"),
    ("vector_norm_nan", "out = (torch.linalg.vector_norm(torch.tensor([1., float('nan')])), torch.linalg.vector_norm("
                        "torch.tensor([1., float('nan')]), float('inf')), torch.linalg.vector_norm(torch.ones(3), "
                        "float('nan')), torch.linalg.vector_norm(torch.ones(3), True))"),
    ("vector_norm_float64", "t = torch.tensor([[1e-3, 2.5], [-7.25, 1e3]], dtype=torch.float64, requires_grad=True)\n"
                            "out = (torch.linalg.vector_norm(t), torch.linalg.vector_norm(t, 4, 1))"),
    # the orders 2, 1, 0, inf and -inf are 1.13's CPU kernel bit for bit: sizes around its 8 lanes and 4-element
    # epilogue, last-dim and strided reductions, transposed inputs, a float64 result of float32 input
    ("vector_norm_bitwise", SEED + "inf = float('inf')\nres = []\nfor n in (1, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 31, "
                            "100, 1000, 4099):\n    v = torch.randn(n) * 3\n    res += [torch.linalg.vector_norm(v, o) "
                            "for o in (2, 1, 0, inf, -inf)] + [v.norm(), v.double().norm()]\n"
                            "for shape in ((37, 53), (4, 5, 6), (2, 3, 4, 5), (9, 16)):\n    m = torch.randn(*shape)\n"
                            "    for t in (m, m.transpose(0, -1), m.permute(*reversed(range(m.dim())))):\n"
                            "        d = t.dim()\n        for dims in (None, (0,), (d - 1,), (0, d - 1), "
                            "tuple(range(1, d))):\n            res += [torch.linalg.vector_norm(t, o, dims) for o in "
                            "(2, 1, inf)]\n            res.append(torch.linalg.vector_norm(t, 2, dims, "
                            "dtype=torch.float64))\n            res.append(torch.norm(t, 2, dims if dims else None))\n"
                            "out = tuple(res)"),
    ("vector_norm_grad2", "t = torch.tensor([0.3, -0.7, 0.5], dtype=torch.float64, requires_grad=True)\n"
                          "y = torch.linalg.vector_norm(t) ** 3 + torch.linalg.vector_norm(t, 3) * 2 + "
                          "torch.linalg.vector_norm(t, 1.5)\nout = torch.autograd.grad(y, t, create_graph=True)[0]"),
    ("vector_norm_grad_norm_of_grads", SEED + "w = torch.randn(4, 3, requires_grad=True)\nb = torch.randn(3, "
                                       "requires_grad=True)\nloss = ((torch.randn(5, 4) @ w + b) ** 2).mean()\n"
                                       "loss.backward()\nnorms = torch.stack([torch.linalg.norm(p.grad) for p in "
                                       "(w, b)])\nout = (torch.linalg.norm(norms), torch.linalg.vector_norm(torch.cat(["
                                       "w.grad.flatten(), b.grad]), float('inf')), torch.norm(torch.stack(["
                                       "torch.norm(p.grad.detach(), 2.0) for p in (w, b)]), 2.0))"),
    # ---- matrix_norm and linalg.norm ----
    ("matrix_norm_orders", X + INF + "out = (torch.linalg.matrix_norm(x), torch.linalg.matrix_norm(x, 'fro'), "
                                     "torch.linalg.matrix_norm(x, 1), torch.linalg.matrix_norm(x, -1), "
                                     "torch.linalg.matrix_norm(x, inf), torch.linalg.matrix_norm(x, -inf))"),
    ("matrix_norm_batched", SEED + "t = torch.randn(2, 3, 4, requires_grad=True)\nout = (torch.linalg.matrix_norm(t), "
                                   "torch.linalg.matrix_norm(t, 1, keepdim=True), torch.linalg.matrix_norm(t, "
                                   "float('inf'), dim=(0, 2)), torch.linalg.matrix_norm(t, -1, dim=(2, 1)), "
                                   "torch.linalg.matrix_norm(t, dtype=torch.float64), torch.linalg.matrix_norm(t, "
                                   "'fro', (0, -1), True))"),
    ("matrix_norm_ties", "t = torch.ones(2, 2, requires_grad=True)\nout = (torch.linalg.matrix_norm(t, 1), "
                         "torch.linalg.matrix_norm(t, -float('inf')))"),
    ("linalg_norm_forms", X + "v = torch.tensor([3., 4.], requires_grad=True)\nout = (torch.linalg.norm(x), "
                              "torch.linalg.norm(v), torch.linalg.norm(x, 1), torch.linalg.norm(x, 'fro'), "
                              "torch.linalg.norm(x, dim=1), torch.linalg.norm(x, 2, dim=0), torch.linalg.norm(x, "
                              "float('inf'), dim=(0, 1)), torch.linalg.norm(v, 1), torch.linalg.norm(v, -1), "
                              "torch.linalg.norm(x, keepdim=True), torch.linalg.norm(torch.ones(2, 2, 2)), "
                              "torch.linalg.norm(x, dim=-1, keepdim=True))"),
    # ---- torch.norm and Tensor.norm (1.13's torch/functional.py) ----
    ("torch_norm_forms", X + INF + "out = (torch.norm(x), x.norm(), x.norm(1), x.norm(dim=1), torch.norm(x, inf), "
                                  "x.norm(p=2, dim=0), torch.norm(x, 'fro', dim=1), torch.norm(x, dim=(0, 1)), "
                                  "x.norm('fro', (0, 1), True), torch.norm(x, 3), x.norm(0.5, 1, True), "
                                  "torch.norm(x, p=None), x.norm(2, dtype=torch.float64), torch.norm(x, 1, -1, "
                                  "dtype=torch.float64), torch.norm(x, -inf))"),
    ("torch_norm_zero_grad", Z + "out = (torch.norm(z), z.norm(dim=1), z.norm(1))"),
    ("torch_norm_fro_two_dims_zero", Z + "out = torch.norm(z, dim=(0, 1))"),
    ("torch_norm_empty_inf", "out = (torch.norm(torch.zeros(0), float('inf')), torch.norm(torch.zeros(0)))"),
    # ---- amax / amin: ties share the gradient ----
    ("amax_amin", "t = torch.tensor([[1., 3., 3.], [2., 2., 0.]], requires_grad=True)\nout = (torch.amax(t, 1), "
                  "torch.amin(t), t.amax(dim=(0, 1), keepdim=True), t.amin(0), torch.amax(t), t.amax(-1, True))"),
    ("amax_amin_dtypes", "out = (torch.amax(torch.tensor([True, False])), torch.amin(torch.tensor([True, False])), "
                         "torch.amax(torch.tensor([[1, 5], [7, -2]]), 0), torch.amin(torch.tensor([[1, 5], [7, -2]])), "
                         "torch.amax(torch.tensor(3.), 0), torch.amax(torch.tensor([1., float('nan'), 2.])), "
                         "torch.amin(torch.tensor([1., float('nan')])), torch.amax(torch.zeros(2, 0, 3), (0, 2)))"),
    ("amax_grad2", "t = torch.tensor([[0.5, -1.5], [2.0, 2.0]], dtype=torch.float64, requires_grad=True)\n"
                   "y = (torch.amax(t * t, 1) * torch.amin(t, 0)).sum()\nout = torch.autograd.grad(y, t, "
                   "create_graph=True)[0]"),
    ("logsumexp_after_amax", X + "out = (torch.logsumexp(x, 1), x.logsumexp(0, keepdim=True))"),
    # ---- errors ----
    ("err_vector_norm_int", "out = torch.linalg.vector_norm(torch.tensor([1, 2]))"),
    ("err_vector_norm_bool", "out = torch.linalg.vector_norm(torch.tensor([True]))"),
    ("err_vector_norm_empty_inf", "out = torch.linalg.vector_norm(torch.zeros(0), float('inf'))"),
    ("err_vector_norm_empty_negative", "out = torch.linalg.vector_norm(torch.zeros(0), -1)"),
    ("err_vector_norm_empty_dim", "out = torch.linalg.vector_norm(torch.zeros(0, 3), float('inf'), dim=0)"),
    ("err_vector_norm_dup_dims", "out = torch.linalg.vector_norm(torch.ones(2, 3), dim=(0, 0))"),
    ("err_vector_norm_dim_range", "out = torch.linalg.vector_norm(torch.ones(2, 3), dim=3)"),
    ("err_vector_norm_str_ord", "out = torch.linalg.vector_norm(torch.ones(2, 3), ord='fro')"),
    ("err_vector_norm_float_dim", "out = torch.linalg.vector_norm(torch.ones(2, 3), dim=1.0)"),
    ("err_vector_norm_narrowing", "out = torch.linalg.vector_norm(torch.ones(2, 3, dtype=torch.float64), "
                                  "dtype=torch.float32)"),
    ("err_vector_norm_int_dtype", "out = torch.linalg.vector_norm(torch.ones(2, 3), dtype=torch.int64)"),
    ("err_matrix_norm_1d", "out = torch.linalg.matrix_norm(torch.ones(3))"),
    ("err_matrix_norm_order", "out = torch.linalg.matrix_norm(torch.ones(3, 3), 3)"),
    ("err_matrix_norm_str_order", "out = torch.linalg.matrix_norm(torch.ones(3, 3), 'abc')"),
    ("err_matrix_norm_one_dim", "out = torch.linalg.matrix_norm(torch.ones(3, 3), dim=(0,))"),
    ("err_matrix_norm_three_dims", "out = torch.linalg.matrix_norm(torch.ones(3, 3), dim=(0, 1, 2))"),
    ("err_matrix_norm_same_dims", "out = torch.linalg.matrix_norm(torch.ones(3, 3), dim=(1, -1))"),
    ("err_matrix_norm_int", "out = torch.linalg.matrix_norm(torch.tensor([[1, 2], [3, 4]]))"),
    ("err_matrix_norm_narrowing", "out = torch.linalg.matrix_norm(torch.ones(2, 2, dtype=torch.float64), "
                                  "dtype=torch.float32)"),
    ("err_linalg_norm_3d_ord", "out = torch.linalg.norm(torch.ones(2, 2, 2), 2)"),
    ("err_linalg_norm_3d_str", "out = torch.linalg.norm(torch.ones(2, 2, 2), 'fro')"),
    ("err_linalg_norm_dims", "out = torch.linalg.norm(torch.ones(2, 2, 2), dim=(0, 1, 2))"),
    ("err_linalg_norm_str_dims", "out = torch.linalg.norm(torch.ones(2, 2, 2), 'fro', dim=(0, 1, 2))"),
    ("err_linalg_norm_order", "out = torch.linalg.norm(torch.ones(2, 2), 3)"),
    ("err_linalg_norm_fro_1d", "out = torch.linalg.norm(torch.ones(3), 'fro')"),
    ("err_linalg_norm_fro_int_dim", "out = torch.linalg.norm(torch.ones(3, 3), 'fro', dim=0)"),
    ("err_linalg_norm_same_dims", "out = torch.linalg.norm(torch.ones(3, 3), dim=(1, -1))"),
    ("err_torch_norm_fro_three_dims", "out = torch.norm(torch.ones(2, 2, 2), 'fro', dim=(0, 1, 2))"),
    ("err_torch_norm_string", "out = torch.norm(torch.ones(2, 2), 'abc')"),
    ("err_torch_norm_int", "out = torch.norm(torch.tensor([1, 2]))"),
    ("err_torch_norm_int_p1", "out = torch.norm(torch.tensor([1, 2]), 1)"),
    ("err_torch_norm_int_dtype", "out = torch.norm(torch.ones(2), 2, dim=0, dtype=torch.int64)"),
    ("err_torch_norm_fro_dtype", "out = torch.norm(torch.ones(2), 'fro', dtype=torch.float64)"),
    ("err_torch_norm_dup_dims", "out = torch.norm(torch.ones(2, 3), 2, dim=(0, 0))"),
    ("err_torch_norm_fro_same_dims", "out = torch.norm(torch.ones(2, 3), dim=(0, 0))"),
    ("err_amax_empty", "out = torch.amax(torch.zeros(0))"),
    ("err_amin_empty", "out = torch.amin(torch.zeros(0))"),
    ("err_amax_dup_dims", "out = torch.amax(torch.ones(2, 3), (0, 0))"),
    ("err_amax_dim_range", "out = torch.amax(torch.ones(2, 3), 2)"),
    # ---- inference_mode ----
    ("inference_mode_state", "with torch.inference_mode():\n    x = torch.ones(2, 3)\n    a = (x.is_inference(), "
                             "torch.is_grad_enabled(), torch.is_inference_mode_enabled())\n"
                             "    y = torch.ones(2, requires_grad=True)\n    z = y * 2\n"
                             "out = (a, x, y.requires_grad, y.is_inference(), z, torch.is_inference(x), "
                             "torch.is_grad_enabled(), torch.is_inference_mode_enabled())"),
    ("inference_tensor_errors", "with torch.inference_mode():\n    x = torch.ones(2, 3)\n"
                                + err("x.add_(1)") + "e1 = e\n" + err("x[0] = 5") + "e2 = e\n" + err("x.zero_()")
                                + "e3 = e\n" + err("x.requires_grad_()") + "e4 = e\n"
                                + err("x.requires_grad = True") + "e5 = e\n" + err("x._version") + "e6 = e\n"
                                + err("x.mul_(2.0)") + "e7 = e\n" + err("x.copy_(torch.ones(2, 3))")
                                + "e8 = e\nout = (e1, e2, e3, e4, e5, e6, e7, e8, x)"),
    ("inference_tensor_use_outside", "w = torch.ones(3, requires_grad=True)\nwith torch.inference_mode():\n"
                                     "    x = torch.ones(2, 3)\ns = (x + w).sum()\ns.backward()\n"
                                     "out = (s, w.grad, torch.cat([x, torch.ones(2, 3)]), x.view(3, 2), x.detach(), "
                                     "x.clone(), x * 2, x.requires_grad_(False), x.t(), x[0], x.numpy().tolist())"),
    ("inference_mode_inplace_inside", "torch.manual_seed(0)\nm = torch.nn.Linear(3, 2)\nwith torch.inference_mode():\n"
                                      "    x = torch.ones(2, 3)\n    x.add_(1)\n    v0 = m.weight._version\n"
                                      "    m.weight.add_(0)\n    o = m(x)\nout = (x, o, m.weight._version - v0, "
                                      "o.requires_grad, o.is_inference())"),
    ("inference_mode_decorator", "w = torch.ones(3, requires_grad=True)\n@torch.inference_mode()\ndef f(a):\n"
                                 "    return a * 2, torch.is_grad_enabled()\nr, g = f(w)\n@torch.inference_mode(mode=False)"
                                 "\ndef h(a):\n    return a * 2\nout = (r, g, h(w), torch.is_inference_mode_enabled(), "
                                 "type(torch.inference_mode()).__name__)"),
    ("inference_mode_false_nested", "with torch.inference_mode(False):\n    q = torch.ones(1)\n"
                                    "    a = (q.is_inference(), torch.is_grad_enabled())\n"
                                    "with torch.inference_mode():\n    with torch.inference_mode(False):\n"
                                    "        q2 = torch.ones(1)\n        b = (q2.is_inference(), torch.is_grad_enabled(), "
                                    "torch.is_inference_mode_enabled())\n    c = torch.is_grad_enabled()\n"
                                    "    with torch.no_grad():\n        d = torch.is_inference_mode_enabled()\n"
                                    "with torch.no_grad():\n    with torch.inference_mode(False):\n"
                                    "        f = torch.is_grad_enabled()\n    g = torch.is_grad_enabled()\n"
                                    "with torch.no_grad():\n    n = torch.ones(1).is_inference()\n"
                                    "out = (a, b, c, d, f, g, n)"),
    ("inference_mode_exception_restores", "try:\n    with torch.inference_mode():\n        raise ValueError('x')\n"
                                          "except ValueError:\n    pass\nout = (torch.is_grad_enabled(), "
                                          "torch.is_inference_mode_enabled(), torch.ones(1).is_inference())"),
    ("inference_mode_eval_loop", "torch.manual_seed(0)\nmodel = torch.nn.Sequential(torch.nn.Linear(4, 8), "
                                 "torch.nn.ReLU(), torch.nn.Linear(8, 3))\nx = torch.randn(5, 4)\n"
                                 "y = torch.tensor([0, 2, 1, 1, 0])\nmodel.eval()\nwith torch.inference_mode():\n"
                                 "    logits = model(x)\n    loss = torch.nn.functional.cross_entropy(logits, y)\n"
                                 "    pred = logits.argmax(1)\n    acc = (pred == y).float().mean()\n"
                                 "out = (logits, loss, pred, acc, acc.item(), (pred == y).sum().item())"),
    ("inference_tensor_to_training", "torch.manual_seed(0)\nwith torch.inference_mode():\n    x = torch.randn(4, 3)\n"
                                     "m = torch.nn.Linear(3, 1)\nloss = m(x.clone()).sum()\nloss.backward()\n"
                                     "out = (loss.detach(), m.weight.grad, x.clone().is_inference())"),
    # ---- autocast and GradScaler without CUDA ----
    ("autocast_cuda_disabled", "a = torch.autocast('cuda')\nwith a:\n    s = (torch.is_autocast_enabled(), "
                               "torch.get_autocast_gpu_dtype())\n    t = torch.ones(2) * 2\n"
                               "out = (s, t, a._enabled, a.fast_dtype, a.device, torch.is_autocast_enabled())"),
    ("cuda_amp_autocast", "with torch.cuda.amp.autocast() as a:\n    s = torch.is_autocast_enabled()\n"
                          "with torch.cuda.amp.autocast(enabled=False):\n    u = torch.is_autocast_enabled()\n"
                          "with torch.cuda.amp.autocast(dtype=torch.float32):\n    v = torch.get_autocast_gpu_dtype()\n"
                          "out = (a, s, u, v, torch.get_autocast_gpu_dtype())"),
    ("cpu_autocast_disabled", "with torch.autocast('cpu', enabled=False) as a:\n    s = (torch.is_autocast_cpu_enabled()"
                              ", torch.get_autocast_cpu_dtype())\nwith torch.cpu.amp.autocast(enabled=False):\n"
                              "    t = torch.is_autocast_cpu_enabled()\nout = (a, s, t, torch.is_autocast_cpu_enabled())"),
    ("autocast_decorator", "@torch.autocast('cuda')\ndef f(x):\n    return x + 1, torch.is_autocast_enabled()\n"
                           "@torch.cuda.amp.autocast(enabled=False)\ndef g(x):\n    return x * 3\n"
                           "out = (f(torch.ones(2)), g(torch.ones(2)), f.__name__, g.__name__)"),
    ("autocast_state_defaults", "out = (torch.is_autocast_enabled(), torch.is_autocast_cpu_enabled(), "
                                "torch.get_autocast_gpu_dtype(), torch.get_autocast_cpu_dtype(), "
                                "torch.is_autocast_cache_enabled())"),
    ("err_autocast_cpu_float16", "with torch.autocast('cpu', dtype=torch.float16):\n    out = 1"),
    ("err_cpu_amp_autocast_float32", "with torch.cpu.amp.autocast(dtype=torch.float32):\n    out = 1"),
    ("err_autocast_mps", "out = torch.autocast('mps')"),
    ("err_autocast_cuda_bfloat16", "out = torch.autocast('cuda', dtype=torch.bfloat16)"),
    ("grad_scaler_disabled", "s = torch.cuda.amp.GradScaler()\ntorch.manual_seed(0)\nm = torch.nn.Linear(2, 1)\n"
                             "opt = torch.optim.SGD(m.parameters(), lr=0.1)\nloss = m(torch.ones(3, 2)).sum()\n"
                             "scaled = s.scale(loss)\nscaled.backward()\ns.unscale_(opt)\nr = s.step(opt)\n"
                             "u = s.update()\nu2 = s.update(2.0)\nout = (scaled is loss, r, u, u2, s.is_enabled(), "
                             "s.get_scale(), s.state_dict(), s._get_growth_tracker(), m.weight.detach(), "
                             "s.scale([loss, (loss, loss)])[1][0] is loss, s.load_state_dict({}), "
                             "s.load_state_dict({'scale': 2.0}), s.state_dict())"),
    ("grad_scaler_disabled_explicit", "s = torch.cuda.amp.GradScaler(enabled=False, init_scale=1024.)\n"
                                      "out = (s.is_enabled(), s.get_scale(), s.state_dict(), type(s).__name__)"),
    ("grad_scaler_step_closure", "torch.manual_seed(0)\nm = torch.nn.Linear(2, 1)\nopt = torch.optim.SGD("
                                 "m.parameters(), lr=0.1)\ns = torch.cuda.amp.GradScaler(enabled=False)\n"
                                 "def closure():\n    opt.zero_grad()\n    l = m(torch.ones(1, 2)).sum()\n"
                                 "    l.backward()\n    return l\nout = (s.step(opt, closure), m.weight)"),
    ("err_grad_scaler_growth_factor", "s = torch.cuda.amp.GradScaler()\nout = s.get_growth_factor()"),
    ("err_grad_scaler_backoff", "s = torch.cuda.amp.GradScaler(enabled=False)\nout = s.get_backoff_factor()"),
    ("grad_scaler_set_then_get", "s = torch.cuda.amp.GradScaler(enabled=False)\ns.set_growth_interval(5)\n"
                                 "s.set_growth_factor(3.0)\nout = (s.get_growth_interval(), s.get_growth_factor())"),
    ("custom_fwd_bwd", "class F(torch.autograd.Function):\n    @staticmethod\n    @torch.cuda.amp.custom_fwd\n"
                       "    def forward(ctx, x):\n        ctx.save_for_backward(x)\n        return x * 3\n"
                       "    @staticmethod\n    @torch.cuda.amp.custom_bwd\n    def backward(ctx, g):\n"
                       "        return g * 3\nclass G(torch.autograd.Function):\n    @staticmethod\n"
                       "    @torch.cuda.amp.custom_fwd(cast_inputs=torch.float16)\n    def forward(ctx, x):\n"
                       "        return x + 1\n    @staticmethod\n    def backward(ctx, g):\n        return g\n"
                       "x = torch.tensor([1., 2.], requires_grad=True)\nout = (F.apply(x), G.apply(x))"),
    # ---- dtypes, finfo, iinfo ----
    ("dtype_objects", "ds = [torch.float16, torch.bfloat16, torch.uint8, torch.int8, torch.int16, torch.int32, "
                      "torch.int64, torch.bool, torch.complex64, torch.complex128, torch.float32, torch.float64]\n"
                      "out = ([str(d) for d in ds], [d.is_floating_point for d in ds], [d.is_complex for d in ds], "
                      "[d.is_signed for d in ds], [repr(d) for d in (torch.half, torch.int, torch.short, "
                      "torch.cfloat, torch.cdouble, torch.chalf, torch.long, torch.double, torch.float)], "
                      "torch.float32 == torch.float, torch.float16 is torch.half, torch.int32 == torch.int64, "
                      "hash(torch.int32) == hash(torch.int), type(torch.float16).__name__)"),
    ("finfo_iinfo", "fs = [torch.finfo(d) for d in (torch.float16, torch.bfloat16, torch.float32, torch.float64)]\n"
                    "its = [torch.iinfo(d) for d in (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)]\n"
                    "out = ([repr(f) for f in fs], [str(f) for f in fs], [f.bits for f in fs], [f.eps for f in fs], "
                    "[f.max for f in fs], [f.min for f in fs], [f.tiny for f in fs], [f.smallest_normal for f in fs], "
                    "[f.resolution for f in fs], [f.dtype for f in fs], [repr(i) for i in its], [i.bits for i in its], "
                    "[i.max for i in its], [i.min for i in its], [i.dtype for i in its], repr(torch.finfo()), "
                    "torch.finfo(torch.float32) == torch.finfo(), torch.finfo(torch.float32).eps * 2)"),
    ("err_finfo_int", "out = torch.finfo(torch.int64)"),
    ("err_iinfo_float", "out = torch.iinfo(torch.float32)"),
    ("err_iinfo_bool", "out = torch.iinfo(torch.bool)"),
    ("default_dtype", "torch.set_default_dtype(torch.float32)\nout = (torch.get_default_dtype(), "
                      "torch.tensor([1.5]).dtype)"),
    ("err_default_dtype_int", "out = torch.set_default_dtype(torch.int64)"),
    ("err_default_dtype_str", "out = torch.set_default_dtype('float')"),
    ("int_half_conversions_exist", "t = torch.tensor([1.5, -2.5])\nout = (t.int().tolist(), t.long(), t.float(), "
                                   "t.double(), hasattr(t, 'half'), hasattr(t, 'bfloat16'), hasattr(t, 'byte'), "
                                   "hasattr(t, 'char'), hasattr(t, 'short'))"),
    # ---- version, backends, threads, determinism ----
    ("version", "v = torch.__version__\nout = (v, str(v), v >= '1.10', v >= '1.9', v < '2.0', v < (2, 0), v > (1, 12, 1), "
                "v == '1.13.0a0', v.split('.')[:2], type(v).__name__, torch.version.cuda, torch.version.hip, "
                "torch.version.debug, torch.version.git_version, v >= 'parrot')"),
    ("backends_flags", "b = torch.backends\nd0 = (b.cudnn.enabled, b.cudnn.benchmark, b.cudnn.deterministic, "
                       "b.cudnn.allow_tf32, b.cudnn.is_available(), b.cudnn.version(), b.cudnn.benchmark_limit, "
                       "b.mps.is_available(), b.mps.is_built(), b.cuda.is_built(), b.cuda.matmul.allow_tf32, "
                       "b.cuda.matmul.allow_fp16_reduced_precision_reduction)\nb.cudnn.deterministic = True\n"
                       "b.cudnn.benchmark = True\nb.cudnn.enabled = False\nb.cuda.matmul.allow_tf32 = True\n"
                       "d1 = (b.cudnn.deterministic, b.cudnn.benchmark, b.cudnn.enabled, b.cuda.matmul.allow_tf32)\n"
                       "with b.cudnn.flags(enabled=True, deterministic=False):\n    d2 = (b.cudnn.enabled, "
                       "b.cudnn.deterministic, b.cudnn.benchmark)\nd3 = (b.cudnn.enabled, b.cudnn.deterministic)\n"
                       "b.cudnn.deterministic = False\nb.cudnn.benchmark = False\nb.cudnn.enabled = True\n"
                       "b.cuda.matmul.allow_tf32 = False\nout = (d0, d1, d2, d3)"),
    ("err_cudnn_deterministic_int", "torch.backends.cudnn.deterministic = 1\nout = 1"),
    ("err_cudnn_benchmark_str", "torch.backends.cudnn.benchmark = 'yes'\nout = 1"),
    ("err_cudnn_enabled_none", "torch.backends.cudnn.enabled = None\nout = 1"),
    ("err_cudnn_allow_tf32", "torch.backends.cudnn.allow_tf32 = 0\nout = 1"),
    ("err_cuda_matmul_flag", "torch.backends.cuda.matmul.allow_tf32 = 1\nout = 1"),
    ("err_cuda_matmul_fp16_flag", "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = 1\nout = 1"),
    ("err_cuda_matmul_unknown", "out = torch.backends.cuda.matmul.foo"),
    ("threads", "n = torch.get_num_threads()\ntorch.set_num_threads(3)\na = torch.get_num_threads()\n"
                "torch.set_num_threads(n)\nout = (a, torch.get_num_threads() == n, torch.get_num_interop_threads() >= 1)"),
    ("err_threads_zero", "out = torch.set_num_threads(0)"),
    ("err_threads_float", "out = torch.set_num_threads(2.5)"),
    ("err_threads_bool", "out = torch.set_num_threads(True)"),
    ("err_interop_threads_zero", "out = torch.set_num_interop_threads(0)"),
    ("err_interop_threads_float", "out = torch.set_num_interop_threads(2.0)"),
    ("deterministic", "a = torch.are_deterministic_algorithms_enabled()\ntorch.use_deterministic_algorithms(True)\n"
                      "b = (torch.are_deterministic_algorithms_enabled(), "
                      "torch.is_deterministic_algorithms_warn_only_enabled(), torch.get_deterministic_debug_mode())\n"
                      "torch.use_deterministic_algorithms(True, warn_only=True)\n"
                      "c = (torch.is_deterministic_algorithms_warn_only_enabled(), torch.get_deterministic_debug_mode())"
                      "\ntorch.set_deterministic_debug_mode('error')\nd = torch.get_deterministic_debug_mode()\n"
                      "torch.set_deterministic_debug_mode(0)\ne = (torch.are_deterministic_algorithms_enabled(), "
                      "torch.get_deterministic_debug_mode())\ntorch.set_deterministic_debug_mode(True)\n"
                      "f = torch.get_deterministic_debug_mode()\ntorch.use_deterministic_algorithms(False)\n"
                      "out = (a, b, c, d, e, f, torch.are_deterministic_algorithms_enabled())"),
    ("err_deterministic_str", "out = torch.use_deterministic_algorithms('x')"),
    ("err_deterministic_int", "out = torch.use_deterministic_algorithms(1)"),
    ("err_deterministic_none", "out = torch.use_deterministic_algorithms(mode=None)"),
    ("err_deterministic_warn_only", "out = torch.use_deterministic_algorithms(True, warn_only=1)"),
    ("err_debug_mode_str", "out = torch.set_deterministic_debug_mode('bad')"),
    ("err_debug_mode_int", "out = torch.set_deterministic_debug_mode(5)"),
    ("err_debug_mode_float", "out = torch.set_deterministic_debug_mode(1.0)"),
    # ---- torch.cuda without CUDA ----
    ("cuda_without_cuda", "c = torch.cuda\nout = (c.is_available(), c.device_count(), c.is_initialized(), "
                          "c.manual_seed(0), c.manual_seed_all(1), c.seed(), c.seed_all(), c.empty_cache(), "
                          "c.memory_allocated(), c.max_memory_allocated(), c.memory_reserved(), "
                          "c.max_memory_reserved(), c.get_arch_list(), c.get_rng_state_all(), "
                          "c.set_rng_state_all([]), c.memory_cached(), c.max_memory_cached())"),
    ("err_cuda_synchronize", "out = torch.cuda.synchronize()"),
    ("err_cuda_device_name", "out = torch.cuda.get_device_name(0)"),
    ("err_cuda_current_device", "out = torch.cuda.current_device()"),
    ("err_cuda_set_device", "out = torch.cuda.set_device(0)"),
    ("err_cuda_properties", "out = torch.cuda.get_device_properties(0)"),
    ("err_cuda_capability", "out = torch.cuda.get_device_capability()"),
    ("err_cuda_initial_seed", "out = torch.cuda.initial_seed()"),
    ("err_cuda_rng_state", "out = torch.cuda.get_rng_state()"),
    ("err_cuda_bf16", "out = torch.cuda.is_bf16_supported()"),
    ("err_cuda_init", "out = torch.cuda.init()"),
    # ---- bincount, isin, logspace ----
    ("bincount", "x = torch.tensor([0, 1, 1, 3])\nout = (torch.bincount(x), torch.bincount(x, minlength=6), "
                 "torch.bincount(x, weights=torch.tensor([0.5, 1., 2., 3.])), torch.bincount(x, "
                 "weights=torch.tensor([0.5, 1., 2., 3.], dtype=torch.float64)), torch.bincount(x, "
                 "weights=torch.tensor([1, 2, 3, 4])), x.bincount(), torch.bincount(torch.tensor([], "
                 "dtype=torch.int64)), torch.bincount(torch.tensor([], dtype=torch.int64), minlength=3), "
                 "torch.bincount(x, minlength=2))"),
    ("bincount_float32_order", SEED + "i = torch.randint(0, 3, (1000,))\nw = torch.rand(1000) * 1000\n"
                               "out = torch.bincount(i, w)"),
    ("bincount_labels", SEED + "labels = torch.randint(0, 10, (500,))\ncounts = torch.bincount(labels, "
                        "minlength=10)\nout = (counts, counts.sum(), (counts.float() / counts.sum()))"),
    ("err_bincount_negative", "out = torch.bincount(torch.tensor([-1, 2]))"),
    ("err_bincount_2d", "out = torch.bincount(torch.tensor([[1, 2]]))"),
    ("err_bincount_0d", "out = torch.bincount(torch.tensor(3))"),
    ("err_bincount_float", "out = torch.bincount(torch.tensor([1., 2.]))"),
    ("err_bincount_bool", "out = torch.bincount(torch.tensor([True, False]))"),
    ("err_bincount_minlength", "out = torch.bincount(torch.tensor([1]), minlength=-1)"),
    ("err_bincount_weights", "out = torch.bincount(torch.tensor([0, 1]), weights=torch.ones(3))"),
    ("isin", "out = (torch.isin(torch.tensor([1, 2, 3, 4]), torch.tensor([2, 4])), torch.isin(torch.tensor([[1., 2.], "
             "[3., 4.]]), torch.tensor([2, 4])), torch.isin(torch.tensor([1, 2, 3]), 2), torch.isin(2, "
             "torch.tensor([1, 2])), torch.isin(torch.tensor([1, 2, 3]), torch.tensor([2]), invert=True), "
             "torch.isin(torch.tensor([1, 2, 3]), torch.tensor([2]), assume_unique=True), torch.isin(torch.tensor("
             "[1., float('nan')]), torch.tensor([float('nan'), 1.])), torch.isin(torch.tensor(2), torch.tensor([2])), "
             "torch.isin(torch.tensor([1, 2]), torch.tensor([], dtype=torch.int64)), torch.isin(torch.tensor([0.5, "
             "1.]), torch.tensor([[1], [3]])))"),
    ("err_isin_bool", "out = torch.isin(torch.tensor([True, False]), torch.tensor([True]))"),
    ("err_isin_numbers", "out = torch.isin(2, 3)"),
    ("logspace", "out = (torch.logspace(0, 2, 5), torch.logspace(-1, 1, 4, base=2), torch.logspace(0, 3, 4, "
                 "dtype=torch.float64), torch.logspace(0, 3, 4, dtype=torch.int64), torch.logspace(0, 1, 1), "
                 "torch.logspace(0, 1, 0), torch.logspace(-3, 0, 7), torch.logspace(0.1, 2.7, 9, base=3.3), "
                 "torch.logspace(-10, 10, 21), torch.logspace(0, 1, 3, requires_grad=True), "
                 "torch.logspace(torch.tensor(0.), torch.tensor(1.), 3), torch.logspace(2, -2, 6, dtype=torch.float64), "
                 "torch.logspace(1, 2, steps=3, base=10.0, dtype=torch.float64))"),
    ("err_logspace_negative", "out = torch.logspace(0, 1, -1)"),
    # ---- detach_, Variable ----
    ("detach_", "x = torch.ones(2, 3, requires_grad=True)\ny = x * 2\nr = y.detach_()\nx2 = torch.ones(2, "
                "requires_grad=True)\nx2.detach_()\nout = (y, y.requires_grad, y.grad_fn, y.is_leaf, r is y, "
                "x2.requires_grad, x2.is_leaf)"),
    ("err_detach_view", "x = torch.ones(2, 3, requires_grad=True)\ny = (x * 2)[0]\nout = y.detach_()"),
    ("err_detach_view_transpose", "x = torch.ones(2, 3, requires_grad=True)\nout = (x * 2).t().detach_()"),
    ("variable", "x = torch.ones(2)\nv = torch.autograd.Variable(x, requires_grad=True)\ny = torch.ones(2, "
                 "requires_grad=True) * 2\nw = torch.autograd.Variable(y)\nout = (v, v.requires_grad, v is x, "
                 "isinstance(x, torch.autograd.Variable), isinstance(3, torch.autograd.Variable), "
                 "type(v).__name__, torch.autograd.Variable(), w, w.is_leaf, w.requires_grad, "
                 "torch.autograd.Variable(x, volatile=True))"),
    ("err_variable_list", "out = torch.autograd.Variable([1, 2])"),
    # ---- clip_grad_norm_ of other orders (1.13's composition of per-parameter norms) ----
    ("clip_grad_norm_orders", SEED + "m = torch.nn.Sequential(torch.nn.Linear(4, 5), torch.nn.Tanh(), "
                              "torch.nn.Linear(5, 2))\nx = torch.randn(6, 4)\nres = []\nfor nt in (1, 3.0, "
                              "float('inf'), 'inf', 0.5, 2):\n    for p in m.parameters():\n        p.grad = None\n"
                              "    (m(x) ** 2).sum().backward()\n    res.append(torch.nn.utils.clip_grad_norm_("
                              "m.parameters(), 0.5, norm_type=nt))\n    res += [p.grad.clone() for p in "
                              "m.parameters()]\nout = tuple(res)"),
    ("err_clip_grad_norm_nonfinite_1", "p = torch.nn.Parameter(torch.ones(2))\np.grad = torch.tensor([1., "
                                       "float('nan')])\nout = torch.nn.utils.clip_grad_norm_([p], 1.0, norm_type=1, "
                                       "error_if_nonfinite=True)"),
    # ---- take_along_dim, tensor_split, argwhere, randint_like, clamp_min/max, is_nonzero, typename ----
    ("take_along_dim", "x = torch.tensor([[10., 30., 20.], [60., 40., 50.]], requires_grad=True)\n"
                       "out = (torch.take_along_dim(x, torch.tensor([[0, 2], [1, 0]]), dim=1), torch.take_along_dim(x, "
                       "torch.argsort(x, dim=1), dim=1), torch.take_along_dim(x, torch.tensor([5, 0])), "
                       "x.take_along_dim(torch.tensor([[1], [2]]), 1), torch.take_along_dim(x, torch.tensor([[1, 0, "
                       "2]]), 1), torch.take_along_dim(x, x.argmax(dim=0, keepdim=True), dim=0))"),
    ("tensor_split", "t = torch.arange(12.).reshape(3, 4).requires_grad_()\nout = (torch.tensor_split(torch.arange(7), "
                     "3), torch.tensor_split(torch.arange(7), [1, 5]), t.tensor_split(2, dim=1), "
                     "torch.tensor_split(torch.arange(7), torch.tensor([2])), torch.tensor_split(torch.arange(7), [5, "
                     "2, -1]), torch.tensor_split(torch.arange(5), 7), torch.tensor_split(t, 3), "
                     "torch.tensor_split(torch.arange(7), torch.tensor(2)))"),
    ("err_tensor_split_sections", "out = torch.tensor_split(torch.arange(7), 0)"),
    ("misc_functions", "x = torch.tensor([-1.5, 0., 2.5])\nout = (torch.argwhere(torch.tensor([[0, 1], [2, 0]])), "
                       "torch.clamp_min(x, 0), torch.clamp_max(x, 0), torch.is_nonzero(torch.tensor([1.])), "
                       "torch.is_nonzero(torch.tensor([0])), torch.is_complex(x), torch.typename(x), "
                       "torch.typename(torch.tensor([1])), torch.typename(3), torch.typename(math.sqrt), "
                       "torch.ones(2).is_pinned(), torch.ones(1).is_shared(), torch.ones(1).share_memory_().is_shared()"
                       ", x.argwhere())"),
    ("randint_like", SEED + "out = (torch.randint_like(torch.ones(2, 3), 10), torch.randint_like(torch.ones(4, "
                     "dtype=torch.int64), 5, 9), torch.randint_like(torch.ones(2), 3, dtype=torch.float64))"),
    ("err_is_nonzero_many", "out = torch.is_nonzero(torch.tensor([1., 2.]))"),
    ("err_is_nonzero_empty", "out = torch.is_nonzero(torch.tensor([]))"),
    ("default_generator", "torch.manual_seed(3)\na = torch.rand(2)\ntorch.default_generator.manual_seed(3)\n"
                          "out = (torch.equal(a, torch.rand(2)), torch.default_generator.initial_seed(), "
                          "torch.initial_seed())"),
    ("multiprocessing_module", "import torch.multiprocessing as mp\ns0 = mp.get_sharing_strategy()\n"
                               "mp.set_sharing_strategy('file_system')\ns1 = mp.get_sharing_strategy()\n"
                               "mp.set_sharing_strategy(s0)\nout = (s0, s1, sorted(mp.get_all_sharing_strategies()), "
                               "mp.cpu_count() >= 1, callable(mp.set_start_method), mp.get_start_method(allow_none=True),"
                               " callable(mp.spawn), mp.Process.__name__)"),
    ("err_sharing_strategy", "import torch.multiprocessing as mp\nout = mp.set_sharing_strategy('shm')"),
    ("err_tensorboard", "from torch.utils.tensorboard import SummaryWriter\nout = 1"),
    # ---- deprecated spellings old scripts use: their warnings ----
    ("deprecated_functional", "x = torch.tensor([-1., 0.5, 2.])\nF = torch.nn.functional\nout = (F.sigmoid(x), "
                              "F.tanh(x), torch.nn.Sigmoid()(x), torch.nn.Tanh()(x), F.upsample(torch.ones(1, 1, 2, 2), "
                              "scale_factor=2).shape)"),
    ("deprecated_clip_grad_norm", "p = torch.nn.Parameter(torch.ones(3))\np.grad = torch.tensor([3., 4., 0.])\n"
                                  "out = (torch.nn.utils.clip_grad_norm(p, 1.0), p.grad)"),
    ("deprecated_range", "out = (torch.range(0, 3), torch.range(1, 2, 0.25), torch.range(0, 1, 0.1), "
                         "torch.range(5, 1, -2), torch.range(0, 3, dtype=torch.int64), torch.range(2.5, 4), "
                         "torch.range(0, 3, requires_grad=True), torch.range(0, 1, 0.3, dtype=torch.float64))"),
    ("err_range_step", "out = torch.range(0, 3, 0)"),
    ("err_range_sign", "out = torch.range(0, 3, -1)"),
    ("numpy_scalars", "import numpy as np\nout = tuple(torch.tensor(v) for v in (np.float32(2.5), np.float64(2.5), "
                      "np.int64(3), [np.float32(2.5)], [np.float64(1.5), 2], [np.int64(1), "
                      "np.int64(2)], [[np.int64(1)], [2]], [np.float32(1), 2.5], [np.int64(1), True], np.array(3.5)))"
                      " + (torch.tensor(np.float32(1.5), dtype=torch.float64), torch.as_tensor(np.float64(2.5)))"),
    ("tensor_new", "x = torch.ones(2)\ni = torch.ones(2, dtype=torch.int64)\nout = (x.new(2, 3).shape, x.new([1, 2]), "
                   "x.new(), x.new(torch.Size([2])).shape, i.new([1.7]), i.new(2).dtype, x.new((3, 4)))"),
    ("data_parallel", SEED + "m = torch.nn.Linear(3, 2)\ndp = torch.nn.DataParallel(m)\nx = torch.randn(4, 3)\n"
                      "out = (repr(dp), dp.device_ids, list(dp.state_dict()), dp(x), dp.module is m, "
                      "torch.nn.parallel.DataParallel is torch.nn.DataParallel, "
                      "repr(torch.nn.DataParallel(m, device_ids=[0, 1])))"),
]


def main():
    cases = []
    for id_, code in CASES:
        try:
            outs, grads, caught = run(torch, code)
            grads = {name: {"shape": list(g.shape), "values": g.reshape(-1).tolist()} for name, g in grads.items()}
        except Exception as e:  # the case's expected error
            cases.append({"id": id_, "code": code, "error": {"type": type(e).__name__, "message": str(e)}})
            continue
        cases.append({"id": id_, "code": code, "outs": [encode(torch, o) for o in outs], "grads": grads,
                      "warnings": caught})
    write_json({"torch_version": torch.__version__, "cases": cases}, here("api_more.json"))


if __name__ == "__main__":
    main()
