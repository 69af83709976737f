"""Advanced indexing under real PyTorch 1.13: Tensor.__getitem__ and __setitem__ with tensors, lists, NumPy arrays,
masks and Python bools among integers, slices, None and Ellipsis; index_put / index_put_. For each case: its results
(shape, dtype, values, requires_grad, grad_fn name), the gradients of its leaves (second derivatives where the case's
result is a first gradient taken with create_graph), its warnings, or its error's type and message.

Run by hand from anywhere: /usr/bin/python3 tests/golden/gen_advanced_indexing.py
Writes advanced_indexing.json next to this script (deterministic; a second).

The snippets run through advanced_indexing_cases.run, which tests/python/test_advanced_indexing.py runs with tinyddp.
Layout: {"torch_version", "cases": [{"id", "code", "outs": [{"shape", "dtype", "values", "requires_grad", "grad_fn"}
or {"py": value}], "grads": {name: {"shape", "values"}}, "warnings": [text]} or {"id", "code", "error": {"type",
"message"}}]}.
"""
import sys

import torch

sys.dont_write_bytecode = True  # keep __pycache__ out of tests/golden
from advanced_indexing_cases import run
from gen_tdp_params import here, write_json

X = "x = torch.arange(24.).reshape(2, 3, 4).requires_grad_()\n"                       # (2, 3, 4), float32
M = "m = torch.tensor([[True, False, True], [False, True, True]])\n"                   # a (2, 3) mask
Z = "z = torch.zeros(3, 4)\n"
V = "v = torch.tensor([1.5, -2.0], requires_grad=True)\n"
LOGITS = "torch.manual_seed(0)\nlogits = torch.randn(4, 5, requires_grad=True)\nt = torch.tensor([1, 0, 4, 4])\n"

CASES = [
    # ---- getitem: several advanced indices, broadcast, placed as NumPy places them ----
    ("two_lists", X + "out = x[[0, 1], [1, 2]]"),
    ("two_tensors_repeated", X + "out = x[torch.tensor([1, 0, 1]), torch.tensor([2, 2, 0])]"),
    ("three_indices", X + "out = x[[1, 0, 1], [2, 2, 0], [3, 0, 3]]"),
    ("broadcast_column_row", X + "out = x[[[0], [1]], [0, 2]]"),
    ("broadcast_scalar_tensor", X + "out = x[torch.tensor(1), [0, 2]]"),
    ("two_d_index_tensor", X + "out = x[torch.tensor([[0, 1], [1, 0]])]"),
    ("adjacent_after_slice", X + "out = x[:, [0, 2], [1, 3]]"),
    ("adjacent_after_int", X + "out = x[0, [1, 0], [1, 2]]"),
    ("adjacent_around_int", X + "out = x[[1, 0], 0, [1, 2]]"),
    ("apart_by_slice", X + "out = x[[0, 1], :, [1, 3]]"),
    ("apart_by_none", X + "out = x[[1, 0], None, [1, 2]]"),
    ("apart_by_ellipsis", X + "out = x[[1, 0], ..., [1, 2]]"),
    ("none_before", X + "out = x[None, [1, 0], [1, 2]]"),
    ("ellipsis_before", X + "out = x[..., [1, 2], 0]"),
    ("apart_broadcast", X + "out = x[:, [[1], [0]], [1, 2]]"),
    ("apart_two_d", X + "out = x[[[0]], :, [[1, 2]]]"),
    ("apart_with_sliced_dim", X + "out = x[[1], 1:, [0, 3]]"),
    ("step_slices_and_index", X + "out = (x[1:, [1, 0], ::2], x[::2, [0, 2]], x[:, ::2, [3]])"),
    ("negative_indices", X + "out = x[[-1, 0], [-3, 2]]"),
    ("chained", X + "i = torch.tensor([1, 0])\nout = (x[i][:, None], x[[0, 1]][:, [2, 0]], x[i, 1][0], x[0][i])"),
    ("transposed_input", X + "out = x.transpose(0, 2)[[1, 0], [2, 2]]"),
    ("float64_repeated", "w = torch.tensor([[1., 2.], [3., 4.], [5., 6.]], dtype=torch.float64, requires_grad=True)\n"
                         "out = w[[0, 0, 2, 0], [1, 1, 0, 1]]"),
    # ---- masks and bools ----
    ("mask_full", X + "out = x[x > 10]"),
    ("mask_2d_leading", X + M + "out = x[m]"),
    ("mask_later_dim", X + "out = x[:, torch.tensor([True, False, True])]"),
    ("mask_and_index", X + "out = x[torch.tensor([True, False]), :, [0, 3]]"),
    ("mask_and_broadcast_index", X + "out = x[torch.tensor([False, True]), [1, 2]]"),
    ("mask_all_false", X + "out = x[torch.zeros(2, 3, dtype=torch.bool)]"),
    ("mask_after_ellipsis", X + "out = x[..., torch.tensor([[True, False, True, False]] * 3)]"),
    ("bool_list", X + "out = (x[[True, False]], x[[True, 1]])"),
    ("python_bools", X + "out = (x[True], x[False], x[None, True], x[0, True], x[True, 0, False])"),
    ("zero_dim_tensors", X + "out = (x[torch.tensor(True)], x[torch.tensor(False), 0], x[torch.tensor(1)], "
                             "x[torch.tensor(1), [0, 2]])"),
    # ---- what counts as an index ----
    ("nested_list_is_tuple", X + "out = (x[[[0, 1], [1, 2]]], x[[0, slice(None)]], x[[torch.tensor(0), 1]])"),
    ("numpy_arrays", X + "out = (x[np.array([1, 0])], x[np.array([[0, 1], [1, 2]])], "
                         "x[np.array([0, 1], dtype=np.int32)], x[np.array([True, False])], x[np.array([0.5, 1.7])])"),
    ("numpy_zero_dim_arrays", X + "out = (x[np.array(1)], x[np.array(1), [0, 2]], x[np.array(True)])"),
    ("numpy_uint8_mask", X + "out = x[np.array([1, 0], dtype=np.uint8)]"),
    ("numpy_int_scalars", X + "out = (x[np.int64(1), [0]], x[[np.int64(1), 0]])"),
    ("float_list_truncates", X + "out = x[[0.7, 1.2]]"),
    ("empty_indices", X + "out = (x[[]], x[torch.tensor([], dtype=torch.long)], x[:, []], x[[], [0, 1][:0]])"),
    ("empty_dims", "out = (torch.zeros(0, 3)[[]], torch.zeros(3, 0)[[5]], torch.arange(24.).reshape(2, 3, 4)[[5], :0])"),
    ("int64_tensor", "xi = torch.arange(12).reshape(3, 4)\nout = (xi[[0, 2], [1, 3]], xi[xi > 5], xi[:, [-1]])"),
    ("bool_tensor", "xb = torch.arange(12).reshape(3, 4) > 5\nout = (xb[[0, 2], [1, 3]], xb[xb], xb[[2]])"),
    # ---- user code ----
    ("pick_by_label", LOGITS + "out = (logits[range(4), t], logits[torch.arange(4), t])"),
    ("nll_by_indexing", LOGITS + "lp = torch.log_softmax(logits, dim=1)\nnll = -lp[range(4), t].mean()\n"
                                 "ce = torch.nn.functional.cross_entropy(logits, t)\n"
                                 "out = (nll, (nll - ce).abs().item() < 1e-6)"),
    ("gather_rows_then_cols", LOGITS + "rows = torch.tensor([3, 3, 0])\nout = logits[rows][:, [4, 0]]"),
    ("masked_mean", LOGITS + "keep = t > 0\nout = (logits[keep].mean(0), logits[keep, 0], logits[~keep][:, t[:1]])"),
    ("script_scatter_updates",
     "torch.manual_seed(0)\nemb = torch.randn(6, 3, requires_grad=True)\nids = torch.tensor([[0, 2, 2], [5, 1, 0]])\n"
     "picked = emb[ids]\npooled = picked.sum(1)\nmemory = torch.zeros(6, 3)\n"
     "memory[ids[:, 0]] = pooled\nmemory[ids[1], 1] = memory[ids[1], 1] * 2 + 1.0\n"
     "out = (picked.shape, pooled, memory, memory._version)"),
    ("script_counts_with_duplicates",   # += reads, adds and writes back: a repeated id counts once (the usual surprise)
     "counts = torch.zeros(4, dtype=torch.long)\nids = torch.tensor([1, 3, 1, 1])\ncounts[ids] += 1\n"
     "hist = torch.zeros(4).index_put_((ids,), torch.ones(4), accumulate=True)\nout = (counts, hist)"),
    # ---- second derivatives: out is a first gradient (create_graph), so the recorded .grad is a second one ----
    ("grad2_index", "x = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], dtype=torch.float64, requires_grad=True)\n"
                    "y = (x[[0, 1, 1], [2, 0, 0]] ** 3).sum()\n"
                    "out = torch.autograd.grad(y, x, create_graph=True)[0]"),
    ("grad2_setitem", "x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)\n"
                      "z = torch.zeros(2, 3, dtype=torch.float64)\nz[[0, 1, 1], [2, 0, 0]] = x ** 2\n"
                      "z[1, [1]] = x[:1] * x[2]\ny = (z ** 2).sum()\n"
                      "out = torch.autograd.grad(y, x, create_graph=True)[0]"),
    ("grad2_index_put_accumulate", "x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)\n"
                                   "z = torch.zeros(2, dtype=torch.float64).index_put((torch.tensor([1, 0, 1]),), "
                                   "x ** 2, accumulate=True)\ny = (z ** 3).sum()\n"
                                   "out = torch.autograd.grad(y, x, create_graph=True)[0]"),
    # ---- setitem ----
    ("set_scalar", Z + "z[[0, 2], [1, 3]] = 5.0\nout = (z, z._version)"),
    ("set_row_broadcast", Z + "z[[0, 2]] = torch.tensor([1., 2., 3., 4.])\nout = z"),
    ("set_column_value", Z + "z[[0, 2]] = torch.tensor([[1.], [2.]])\nout = z"),
    ("set_value_leading_ones", Z + "z[[0, 2]] = torch.tensor([[[1.], [2.]]])\nz[[1], [0]] = torch.ones(1, 1, 1) * 7\n"
                               "out = z"),
    ("set_duplicates_last_wins", Z + "z[[0, 0, 0, 0], [1, 1, 1, 1]] = torch.tensor([1., 2., 3., 4.])\n"
                                 "z[[2, 1, 2], [0, 0, 0]] = torch.tensor([5., 6., 7.])\nout = z"),
    ("set_mask", "z = torch.arange(12.).reshape(3, 4)\nz[z > 8] = -1.0\nz[torch.tensor([True, False, True])] = "
                 "torch.tensor([10., 20., 30., 40.])\nout = (z, z._version)"),
    ("set_mask_value_dtype", Z + "z[torch.tensor([True, False, True])] = torch.tensor(5.0, dtype=torch.float64)\n"
                             "z[torch.tensor([False, True, False])] = torch.tensor([2])\nout = z"),
    ("set_mixed_basic", Z + "z[0, [1, 3]] = 7.0\nz[:, [0, 2]] = torch.tensor([[1.], [2.], [3.]])\n"
                        "z[[1, 2], 1:3] = 9.0\nz[..., [3]] = -1.0\nz[None, [2], 1] = 4.0\nout = (z, z._version)"),
    ("set_apart_indices", "z = torch.zeros(2, 3, 4)\nz[[0, 1], :, [1, 3]] = torch.tensor([[1.], [2.]])\nout = z"),
    ("set_int64", "zi = torch.zeros(3, 4, dtype=torch.long)\nzi[[0, 1], [1, 1]] = 2.7\nzi[[2], 0] = True\nout = zi"),
    ("set_bool", "zb = torch.zeros(3, 4, dtype=torch.bool)\nzb[[0, 2]] = True\nzb[0, [1, 2]] = 0\nout = zb"),
    ("set_empty", Z + "z[[]] = 1.0\nz[torch.zeros(3, dtype=torch.bool)] = 2.0\nz[False] = 3.0\n"
                  "out = (z, z._version)"),
    ("set_python_bools", Z + "z[True] = torch.ones(4)\nz[0, True, [2]] = 5.0\nout = (z, z._version)"),
    ("set_value_from_other_rows", "z = torch.arange(12.).reshape(3, 4)\nz[0, [1, 2]] = z[1, :2]\n"
                                  "i = torch.tensor([0, 1])\nz[i] = z[i] * 2\nout = z"),
    ("set_expanded_warns", "z = torch.zeros(4).expand(3, 4)\nz[[0]] = 1.0\nout = z"),
    # ---- setitem with autograd ----
    ("set_nonleaf", X + "y = x * 2\ny[[0, 1], [1, 2]] = 0.0\nout = (y, y._version)"),
    ("set_value_grad", Z + V + "z[[0, 2], [1, 1]] = v\nout = z"),
    ("set_value_broadcast_grad", Z + V + "z[[0, 1]] = v.repeat(2)\nz[[2]] = v[0]\nout = z"),
    ("set_value_duplicates_grad", Z + V + "z[[0, 0], [3, 3]] = v\nout = z"),
    ("set_through_view_grad", Z + V + "z[0, [1, 3]] = v\nz[:, [0, 2]] = v[1]\nout = (z, z._version)"),
    ("set_ellipsis_no_view_grad", Z + V + "z[..., [0, 1]] = v\nout = z"),
    ("set_exact_slice_no_view_grad", Z + V + "z[0:3, [0, 1]] = v\nw = torch.zeros(3, 4)\nw[:, [0, 1]] = v\n"
                                     "out = (z, w)"),
    ("set_masked_fill_grad", X + "y = x * 1\ny[y > 20] = 0.0\nout = y"),
    ("set_mask_value_grad", X + "y = x + 1\ny[torch.tensor([True, False]), 1] = -x[0, 0, :4]\nout = y"),
    ("set_nonleaf_with_view", X + "y = x * 1\ny[1, [0, 2], 1:3] = y[0, :2, :2] * 10\nout = y"),
    ("set_basic_grad", Z + V + "z[0] = v.sum()\nz[:, 1] = v[0] * 2\nz[1:, 2:] = v\nout = (z, z._version)"),
    ("set_float64_value_into_float32_grad",
     Z + "d = torch.tensor(2.0, dtype=torch.float64, requires_grad=True)\nz[torch.tensor([True, False, True])] = d\n"
         "out = z"),
    # ---- index_put / index_put_ ----
    ("index_put_accumulate", "t = torch.zeros(5)\nt.index_put_((torch.tensor([1, 1, 3, 1]),), "
                             "torch.tensor([1., 2., 3., 4.]), accumulate=True)\nout = (t, t._version)"),
    ("index_put_two_indices", "t = torch.zeros(3, 3)\nout = (t.index_put((torch.tensor([0, 2]), torch.tensor([1])), "
                              "torch.tensor([5., 6.])), t)"),
    ("index_put_grad", X + V + "out = x.index_put((torch.tensor([0, 1]), torch.tensor([2, 0]), torch.tensor([3, 3])), "
                           "v)"),
    ("index_put_accumulate_grad", X + V + "out = torch.index_put(x, [torch.tensor([1, 1]), torch.tensor([0, 0])], "
                                      "v[:, None], True)"),
    ("index_put_mask", "t = torch.zeros(2, 3)\nt.index_put_((torch.tensor([[True, False, True], [False, False, True]]),),"
                       " torch.tensor([1., 2., 3.]))\nout = t"),
    ("index_put_inplace_nonleaf_grad", X + V + "y = x * 1\ny.index_put_([torch.tensor([0, 0]), torch.tensor([1, 1])], "
                                           "v[:, None] * torch.ones(4), accumulate=True)\nout = (y, y._version)"),
    ("index_put_int64", "t = torch.zeros(4, dtype=torch.long)\nt.index_put_((torch.tensor([0, 0, 3]),), "
                        "torch.tensor([2, 3, 4]), accumulate=True)\nout = t"),
    # ---- errors ----
    ("err_out_of_range", X + "out = x[[0, 5]]"),
    ("err_out_of_range_second", X + "out = x[[0, 5], [7, 1]]"),
    ("err_out_of_range_after_slice", X + "out = x[:, :, [1, 7]]"),
    ("err_out_of_range_after_int", X + "out = x[0, [5]]"),
    ("err_negative_out_of_range", X + "out = x[:, [-4]]"),
    ("err_broadcast", X + "out = x[[0, 1], [1, 2, 0]]"),
    ("err_broadcast_apart", X + "out = x[[0, 1], :, [1, 2, 0]]"),
    ("err_broadcast_mask", X + M + "out = x[m, [0, 1]]"),
    ("err_mask_shape", X + "out = x[torch.tensor([True, False, True])]"),
    ("err_mask_shape_later_dim", X + "out = x[:, torch.tensor([True, False])]"),
    ("err_mask_then_int", X + M + "out = x[m, 0]"),
    ("err_float_index_tensor", X + "out = x[torch.tensor([0., 1.])]"),
    ("err_too_many", X + "out = x[[0], [0], [0], [0]]"),
    ("err_too_many_with_int", X + "out = x[0, 0, 0, [0]]"),
    ("err_size_zero_dim", "out = torch.zeros(3, 0)[:, [5]]"),
    ("err_invalid_index", X + "out = x[0, 1.5]"),
    ("err_invalid_str", X + "out = x['a']"),
    ("err_negative_step", X + "out = x[::-1, [0]]"),
    ("err_set_out_of_range", Z + "z[[5]] = 1.0"),
    ("err_set_out_of_range_second", Z + "z[[0], [5]] = 1.0"),
    ("err_set_value_shape", Z + "z[[0, 2]] = torch.tensor([1., 2., 3.])"),
    ("err_set_value_shape_after_int", Z + "z[[0, 2], 0] = torch.tensor([1., 2., 3.])"),
    ("err_set_value_dtype", Z + "z[[0, 2]] = torch.tensor([1, 2, 3, 4])"),
    ("err_set_value_dtype_float64", Z + "z[[0, 2], [1, 1]] = torch.tensor([1., 2.], dtype=torch.float64)"),
    ("err_set_mask_shape", Z + "z[torch.tensor([True, False])] = 1.0"),
    ("err_set_value_overlaps", "z = torch.arange(12.).reshape(3, 4)\nz[[1, 2]] = z[0]"),
    ("err_set_index_overlaps", "z = torch.arange(4)\nz[z[:2]] = torch.tensor([1, 2])"),
    ("err_index_put_value_overlaps", "z = torch.arange(12.).reshape(3, 4)\nz.index_put_((torch.tensor([1]),), z[0])"),
    ("err_set_leaf", X + "x[[0]] = 1.0"),
    ("err_set_view_of_leaf", X + "x[0, [0]] = 1.0"),
    ("err_set_true_leaf", "w = torch.zeros(3, 2, requires_grad=True)\nw[[0]] = 1.0"),
    ("err_set_view_of_true_leaf", "w = torch.zeros(3, 2, requires_grad=True)\nw[:, [0]] = 1.0"),
    ("err_index_put_leaf", "w = torch.zeros(3, 2, requires_grad=True)\nw.index_put_((torch.tensor([0]),), "
                           "torch.tensor(1.))"),
    ("err_set_list_value", Z + "z[[0]] = [1.0]"),
    ("err_set_numpy_value", Z + "z[[0]] = np.array([1.0])"),
    ("err_set_numpy_float32_value", Z + "z[[0]] = np.float32(2.0)"),
    ("set_numpy_number_values", Z + "z[[0]] = np.int32(3)\nz[[1]] = np.float64(2.5)\nz[[2], [1]] = True\nout = z"),
    ("err_index_put_not_tuple", Z + "z.index_put_(torch.tensor([0]), torch.tensor(1.))"),
    ("err_index_put_values_number", Z + "z.index_put_((torch.tensor([0]),), 1.0)"),
    ("err_index_put_function_values", Z + "torch.index_put(z, [torch.tensor([0])], 1.0)"),
    ("err_index_put_none", Z + "z.index_put_((torch.tensor([0]), None), torch.tensor(1.))"),
    ("err_index_put_too_many", Z + "i = torch.tensor([0])\nz.index_put_((i, i, i), torch.tensor(1.))"),
    ("err_index_put_accumulate_int", Z + "z.index_put((torch.tensor([0]),), torch.tensor(1.), 1)"),
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
    write_json({"torch_version": torch.__version__, "cases": cases}, here("advanced_indexing.json"))


if __name__ == "__main__":
    main()
