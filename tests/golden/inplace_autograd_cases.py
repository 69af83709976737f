"""How an inplace_autograd case runs, shared by gen_inplace_autograd.py (with torch) and
tests/python/test_inplace_autograd.py (with tinyddp), so both sides do exactly the same thing with a snippet.

A snippet builds its inputs with the helpers below (written-out float32 values: no RNG unless it seeds one), writes
in place, runs its own backward where it wants one, and binds `out` (a tensor, a node, a Python value, or a tuple
of them). What is recorded, in order: per result a description (a tensor's shape, dtype, values, requires_grad,
is_leaf, _version, grad_fn with its next_functions two levels deep, and .grad where it is a leaf or retains it; a
node's name and next_functions; a Python value as is), the .grad of every leaf tensor the snippet's scope names,
the warnings it raised (category and text), and the error it raised (type and text), with whatever `out` it bound
before the error.

Helpers in a snippet's scope: torch, F (torch.nn.functional), nn (torch.nn), Function (torch.autograd.Function),
checkpoint (torch.utils.checkpoint.checkpoint),
L(*shape) (a float32 leaf that requires grad, values distinct and away from 0), P(*shape) (the same, positive),
N(*shape) (the values of L, not requiring grad), C(t) (fixed coefficients of t's shape: c_k = ((k % 7) - 3) / 2 +
0.25) and bw(t) ((t * C(t)).sum().backward(), so every element's gradient differs).
"""
import importlib
import warnings


def values(n):
    return [((k * 7) % 13 - 6) / 4 + 0.01 * k + 0.1 for k in range(n)]


def positive(n):
    return [0.5 + ((k * 7) % 13) / 8 + 0.01 * k for k in range(n)]


def coefficient(n):
    return [((k % 7) - 3) / 2 + 0.25 for k in range(n)]


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def _nest(flat, shape):
    if not shape:
        return flat[0]
    step = _numel(shape[1:])
    return [_nest(flat[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]


def scope_for(torch):
    def made(fn, shape, requires_grad):   # from nested lists: a leaf that is not a view
        return torch.tensor(_nest(fn(_numel(shape)), list(shape)), dtype=torch.float32, requires_grad=requires_grad)

    def C(t):
        return torch.tensor(coefficient(t.numel()), dtype=t.dtype).reshape(list(t.shape))

    def bw(t, **kwargs):
        (t * C(t)).sum().backward(**kwargs)

    return {"torch": torch, "F": torch.nn.functional, "nn": torch.nn, "Function": torch.autograd.Function,
            "L": lambda *shape: made(values, shape, True), "P": lambda *shape: made(positive, shape, True),
            "N": lambda *shape: made(values, shape, False), "C": C, "bw": bw,
            # torch.utils.checkpoint is no attribute of 1.13's torch until imported; an import statement in a
            # snippet would find torch's module by name on both sides
            "checkpoint": importlib.import_module(torch.__name__ + ".utils.checkpoint").checkpoint}


def node_name(fn):
    """A node's name as 1.13 prints it (tinyddp's AccumulateGrad carries its namespace)."""
    if fn is None:
        return None
    return fn.name().replace("torch::autograd::", "")


def describe_node(fn, depth=2):
    if fn is None:
        return None
    out = {"name": node_name(fn)}
    if depth > 0:
        out["next"] = [[node_name(n), nr] + ([describe_node(n, depth - 1)["next"]] if n is not None and depth > 1
                                             else []) for n, nr in fn.next_functions]
    return out


def describe(torch, value):
    if isinstance(value, torch.Tensor):
        d = {"shape": list(value.shape), "dtype": str(value.dtype), "values": value.detach().reshape(-1).tolist(),
             "requires_grad": value.requires_grad, "is_leaf": value.is_leaf, "version": value._version,
             "grad_fn": describe_node(value.grad_fn)}
        if value.is_leaf or value.retains_grad:
            d["grad"] = None if value.grad is None else value.grad.reshape(-1).tolist()
        return d
    if hasattr(value, "next_functions"):
        return {"node": describe_node(value)}
    if isinstance(value, (list, tuple)) and not isinstance(value, torch.Size):
        return {"seq": [describe(torch, v) for v in value]}
    if isinstance(value, torch.Size):
        value = list(value)
    return {"py": value}


def _has_grad(torch, v):
    """Whether v is a leaf tensor with a .grad (is_leaf reads grad_fn, which raises for some views of a base
    written in place: those are no leaves)."""
    if not isinstance(v, torch.Tensor):
        return False
    try:
        return v.is_leaf and v.grad is not None
    except RuntimeError:
        return False


def run(torch, code):
    """Runs a case's snippet with `torch` as torch: a dict of what it recorded (see the module's docstring)."""
    scope = scope_for(torch)
    helpers = set(scope)
    record = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            exec(code, scope)
        except Exception as e:  # the case's expected error
            record["error"] = {"type": type(e).__name__, "message": str(e)}
        out = scope.get("out", ())
        outs = list(out) if isinstance(out, tuple) else [out]
        record["outs"] = []
        for o in outs:
            try:
                record["outs"].append(describe(torch, o))
            except Exception as e:  # reading a view's grad_fn may raise 1.13's view errors
                record["outs"].append({"error": {"type": type(e).__name__, "message": str(e)}})
        record["grads"] = {name: v.grad.reshape(-1).tolist() for name, v in sorted(scope.items())
                           if name not in helpers and _has_grad(torch, v)}
    record["warnings"] = [[w.category.__name__, str(w.message)] for w in caught]
    return record


# (id, snippet). A case that raises records the error and what `out` held then.
CASES = [
    # ---- the in-place methods on a tensor with history: the op's node becomes its history ----
    ("add_tensor", "a = L(2, 3); b = L(3); y = a * 2; y.add_(b); bw(y); out = y"),
    ("add_scalar", "a = L(2, 3); y = a * 2; y.add_(1.5); bw(y); out = y"),
    ("add_alpha", "a = L(2, 3); b = L(2, 3); y = a * 2; y.add_(b, alpha=-0.5); bw(y); out = y"),
    ("sub_tensor", "a = L(2, 3); b = L(2, 3); y = a * 2; y.sub_(b); bw(y); out = y"),
    ("sub_alpha", "a = L(2, 3); b = L(3); y = a * 2; y.sub_(b, alpha=3); bw(y); out = y"),
    ("sub_scalar", "a = L(2, 3); y = a * 2; y.sub_(2); bw(y); out = y"),
    ("mul_tensor", "a = L(2, 3); b = L(2, 3); y = a + 1; y.mul_(b); bw(y); out = y"),
    ("mul_scalar", "a = L(2, 3); y = a + 1; y.mul_(3); bw(y); out = y"),
    ("div_tensor", "a = L(2, 3); b = P(2, 3); y = a + 1; y.div_(b); bw(y); out = y"),
    ("div_scalar", "a = L(2, 3); y = a + 1; y.div_(4); bw(y); out = y"),
    ("pow_scalar", "a = L(2, 3); y = a + 1; y.pow_(2); bw(y); out = y"),
    ("pow_tensor", "a = P(2, 3); e = L(2, 3); y = a * 1; y.pow_(e); bw(y); out = y"),
    ("exp_", "a = L(2, 3); y = a * 0.5; y.exp_(); bw(y); out = y"),
    ("log_", "a = P(2, 3); y = a * 2; y.log_(); bw(y); out = y"),
    ("sqrt_", "a = P(2, 3); y = a * 2; y.sqrt_(); bw(y); out = y"),
    ("sigmoid_", "a = L(2, 3); y = a * 2; y.sigmoid_(); bw(y); out = y"),
    ("tanh_", "a = L(2, 3); y = a * 2; y.tanh_(); bw(y); out = y"),
    ("relu_", "a = L(2, 3); y = a * 2; y.relu_(); bw(y); out = y"),
    ("clamp_both", "a = L(2, 3); y = a * 2; y.clamp_(-1, 1); bw(y); out = y"),
    ("clamp_min_kw", "a = L(2, 3); y = a * 2; y.clamp_(min=0); bw(y); out = y"),
    ("clamp_max_kw", "a = L(2, 3); y = a * 2; y.clamp_(max=0.5); bw(y); out = y"),
    ("clamp_min_", "a = L(2, 3); y = a * 2; y.clamp_min_(0.25); bw(y); out = y"),
    ("clamp_max_", "a = L(2, 3); y = a * 2; y.clamp_max_(0.25); bw(y); out = y"),
    ("abs_", "a = L(2, 3); y = a * 2; y.abs_(); bw(y); out = y"),
    ("neg_", "a = L(2, 3); y = a * 2; y.neg_(); bw(y); out = y"),
    ("fill_number", "a = L(2, 3); y = a * 2; y.fill_(3); bw(y); out = y"),
    ("fill_tensor_value", "a = L(2, 3); s = L(1)[0] * 1; y = a * 2; y.fill_(s); bw(y); out = y"),
    ("zero_", "a = L(2, 3); y = a * 2; y.zero_(); bw(y); out = y"),
    ("copy_", "a = L(2, 3); b = L(3); y = a * 2; y.copy_(b); bw(y); out = y"),
    ("copy_from_float64", "a = L(2, 3); b = L(2, 3).double(); y = a * 2; y.copy_(b); bw(y); out = y"),
    ("masked_fill_number", "a = L(2, 3); m = torch.tensor([[True, False, True], [False, False, True]]); "
                           "y = a * 2; y.masked_fill_(m, 0.5); bw(y); out = y"),
    ("masked_fill_tensor_value", "a = L(2, 3); v = L(1); m = torch.tensor([True, False, True]); y = a * 2; "
                                 "y.masked_fill_(m, v[0]); bw(y); out = y"),
    ("masked_fill_neg_inf", "a = L(2, 3); m = torch.tensor([[False, True, True], [False, False, True]]); "
                            "y = a * 2; y.masked_fill_(m, float('-inf')); p = y.softmax(-1); bw(p); out = (y, p)"),
    ("index_put_", "a = L(2, 3); v = L(2); y = a * 2; y.index_put_((torch.tensor([0, 1]), torch.tensor([2, 0])), v); "
                   "bw(y); out = y"),
    ("index_put_accumulate", "a = L(2, 3); v = L(3); y = a * 2; "
                             "y.index_put_((torch.tensor([1, 1, 0]),), v[:, None] * 1, accumulate=True); "
                             "bw(y); out = y"),
    ("index_add_", "a = L(3, 2); s = L(2, 2); y = a * 2; y.index_add_(0, torch.tensor([2, 0]), s); bw(y); out = y"),
    ("index_add_alpha", "a = L(3, 2); s = L(2, 2); y = a * 2; y.index_add_(0, torch.tensor([2, 2]), s, alpha=2); "
                        "bw(y); out = y"),
    ("scatter_src", "a = L(2, 3); s = L(2, 3); y = a * 2; y.scatter_(1, torch.tensor([[2, 0, 1], [0, 1, 2]]), s); "
                    "bw(y); out = y"),
    ("scatter_value", "a = L(2, 3); y = a * 2; y.scatter_(1, torch.tensor([[2], [0]]), 7.0); bw(y); out = y"),
    ("scatter_add_", "a = L(2, 3); s = L(2, 2); y = a * 2; y.scatter_add_(1, torch.tensor([[2, 2], [0, 1]]), s); "
                     "bw(y); out = y"),
    ("addcmul_", "a = L(2, 3); t1 = L(2, 3); t2 = P(3); y = a * 2; y.addcmul_(t1, t2, value=0.5); bw(y); out = y"),
    ("addcdiv_", "a = L(2, 3); t1 = L(2, 3); t2 = P(3); y = a * 2; y.addcdiv_(t1, t2, value=2); bw(y); out = y"),
    ("lerp_scalar", "a = L(2, 3); e = L(2, 3); y = a * 2; y.lerp_(e, 0.25); bw(y); out = y"),
    ("lerp_tensor", "a = L(2, 3); e = L(2, 3); w = P(3); y = a * 2; y.lerp_(e, w * 0.1); bw(y); out = y"),
    ("torch_relu_", "a = L(2, 3); y = a * 2; r = torch.relu_(y); bw(y); out = (y, r is y)"),
    ("torch_sigmoid_exp_", "a = L(2, 3); y = a * 2; torch.sigmoid_(y); torch.exp_(y); bw(y); out = y"),
    ("F_relu_", "a = L(2, 3); y = a * 2; r = F.relu_(y); bw(y); out = (y, r is y)"),
    ("chain_of_three", "a = L(2, 3); y = a * 2; y.add_(1).mul_(a).exp_(); bw(y); out = y"),
    ("returns_self", "a = L(2, 3); y = a * 2; out = (y.add_(1) is y, y.mul_(2) is y, y.clamp_(0, 1) is y, "
                     "y.masked_fill_(y > 0.5, 0) is y, y.zero_() is y, y.copy_(a) is y, y.fill_(1) is y)"),
    # ---- Python's augmented assignment ----
    ("iadd_tensor", "a = L(2, 3); b = L(2, 3); y = a * 2; z = y; y += b; bw(y); out = (y, z is y)"),
    ("iadd_scalar", "a = L(2, 3); y = a * 2; y += 1; bw(y); out = y"),
    ("isub_tensor", "a = L(2, 3); b = L(3); y = a * 2; y -= b; bw(y); out = y"),
    ("isub_scalar", "a = L(2, 3); y = a * 2; y -= 1.5; bw(y); out = y"),
    ("imul_tensor", "a = L(2, 3); b = L(2, 3); y = a * 2; y *= b; bw(y); out = y"),
    ("imul_float", "a = L(2, 3); y = a * 2; y *= 0.5; bw(y); out = y"),
    ("imul_int", "a = L(2, 3); y = a * 2; y *= 3; bw(y); out = y"),
    ("idiv_tensor", "a = L(2, 3); b = P(2, 3); y = a * 2; y /= b; bw(y); out = y"),
    ("idiv_scalar", "a = L(2, 3); y = a * 2; y /= 4; bw(y); out = y"),
    ("iadd_into_no_grad_tensor", "a = L(2, 3); z = torch.zeros(2, 3); z += a; bw(z); out = z"),
    ("imul_no_grad_tensor_by_grad", "a = L(3); z = torch.ones(3); z *= a; z *= a; bw(z); out = z"),
    ("iadd_leaf_error", "a = L(3); out = a; a += 1"),
    ("imul_leaf_error", "a = L(3); out = a; a *= 2"),
    ("iadd_int_float_error", "y = torch.tensor([1, 2]); y += 0.5"),
    # ---- leaves ----
    ("leaf_add_error", "a = L(3); a.add_(1)"),
    ("leaf_exp_error", "a = L(3); a.exp_()"),
    ("leaf_zero_error", "a = L(3); a.zero_()"),
    ("leaf_setitem_error", "a = L(3); a[0] = 1"),
    ("leaf_masked_fill_error", "a = L(3); a.masked_fill_(torch.tensor([True, False, False]), 0)"),
    ("leaf_clamp_error", "a = L(3); a.clamp_(0, 1)"),
    ("leaf_relu_module_error", "a = L(3); nn.ReLU(inplace=True)(a)"),
    ("leaf_no_grad_ok", "a = L(3); y = a * 3\nwith torch.no_grad():\n    a.mul_(2)\n    a[0] = 5\nbw(y); "
                        "out = (a, y)"),
    ("leaf_no_grad_saved_error", "a = L(3); y = a * a\nwith torch.no_grad():\n    a.add_(1)\nout = a\nbw(y)"),
    ("leaf_no_requires_grad_receives", "z = torch.zeros(3); a = L(3); z.add_(a); z.mul_(a); bw(z); out = z"),
    ("leaf_no_requires_grad_copy_", "z = torch.zeros(2, 3); a = L(3); z.copy_(a); bw(z); out = z"),
    ("leaf_no_requires_grad_plain", "z = torch.zeros(3); z.add_(1); z.mul_(torch.ones(3)); out = z"),
    ("sgd_update_no_grad", "w = L(3); (w * w).sum().backward()\nwith torch.no_grad():\n    w -= 0.1 * w.grad\n"
                           "    w.grad.zero_()\nout = w"),
    ("requires_grad_then_inplace", "z = N(3).requires_grad_(); y = z * 2; y.add_(1); bw(y); out = (z, y)"),
    ("requires_grad_false_non_leaf_error", "a = L(3); y = a * 2; y.requires_grad_(False)"),
    # ---- views of a tensor with history: CopySlices on the base, AsStridedBackward0 on the views ----
    ("view_select", "a = L(2, 3); y = a * 2; v = y[1]; v.mul_(3); bw(y); out = (y, v)"),
    ("view_slice", "a = L(4, 3); y = a * 2; v = y[1:3]; v.add_(L(2, 3)); bw(y); out = (y, v)"),
    ("view_step_slice", "a = L(6); y = a * 2; v = y[::2]; v.exp_(); bw(y); out = (y, v)"),
    ("view_view", "a = L(2, 3); y = a * 2; v = y.view(3, 2); v.mul_(L(3, 2)); bw(y); out = (y, v)"),
    ("view_transpose", "a = L(2, 3); y = a * 2; v = y.t(); v.sigmoid_(); bw(y); out = (y, v)"),
    ("view_permute", "a = L(2, 3, 2); y = a * 2; v = y.permute(2, 0, 1); v[0].zero_(); bw(y); out = (y, v)"),
    ("view_diagonal", "a = L(3, 3); y = a * 1; d = y.diagonal(); d.fill_(1); bw(y); out = (y, d)"),
    ("view_narrow", "a = L(2, 4); y = a * 1; v = y.narrow(1, 1, 2); v.relu_(); bw(y); out = (y, v)"),
    ("view_unsqueeze", "a = L(3); y = a * 1; v = y.unsqueeze(0); v.mul_(2); bw(y); out = (y, v)"),
    ("view_reshape", "a = L(2, 3); y = a * 1; v = y.reshape(6); v.add_(1); bw(y); out = (y, v)"),
    ("view_flatten", "a = L(2, 3); y = a * 1; v = y.flatten(); v.tanh_(); bw(v); out = (y, v)"),
    ("view_expand_error", "a = L(3); y = a * 1; v = y.expand(2, 3); v.add_(1)"),
    ("view_expand_no_grad_error", "y = torch.zeros(3); v = y.expand(2, 3); v.add_(1)"),
    ("view_of_view", "a = L(2, 3, 2); y = a * 2; v = y[1]; w = v[:, 0]; w.mul_(5); bw(y); out = (y, v, w)"),
    ("view_of_view_rebuilt", "a = L(2, 3); y = a * 2; v = y[0]; w = v[1:]; y.mul_(2); out = (w, v, y)"),
    ("view_base_modified_then_view_used", "a = L(2, 3); y = a * 2; v = y[0]; y.add_(1); z = v * v; bw(z); "
                                          "out = (z, v)"),
    ("view_two_views_written", "a = L(2, 3); y = a * 2; v0 = y[0]; v1 = y[1]; v0.mul_(v1); bw(y); "
                               "out = (y, v0, v1)"),
    ("view_write_other_view_saved", "a = L(2, 3); y = a * 2; v0 = y[0]; s = v0 * v0; y[0, 1] = 0; out = y; "
                                    "bw(s)"),
    ("view_of_leaf_error", "a = L(2, 3); v = a[0]; v.mul_(2)"),
    ("view_of_leaf_setitem_error", "a = L(2, 3); a[0][1] = 2"),
    ("view_of_leaf_no_grad", "a = L(2, 3); v = a[0]\nwith torch.no_grad():\n    v.mul_(2)\nbw(a * 1); "
                             "out = (a, v)"),
    ("view_made_no_grad_error", "a = L(2, 3); y = a * 2\nwith torch.no_grad():\n    v = y[0]\nout = v\nv.mul_(2)"),
    ("view_made_no_grad_base_write_error", "a = L(2, 3); y = a * 2\nwith torch.no_grad():\n    v = y[0]\n"
                                           "y.mul_(2); out = y\nv.grad_fn"),
    ("view_made_no_grad_written_no_grad", "a = L(2, 3); y = a * 2\nwith torch.no_grad():\n    v = y[0]\n"
                                          "    v.mul_(2)\nbw(y); out = (y, v)"),
    ("view_made_no_grad_of_leaf", "a = L(2, 3)\nwith torch.no_grad():\n    v = a[0]\nout = v\nv.mul_(2)"),
    ("view_split_error", "a = L(4, 3); y = a * 2; p, q = y.split(2); p.mul_(2)"),
    ("view_chunk_error", "a = L(4, 3); y = a * 2; p, q = y.chunk(2); q.add_(1)"),
    ("view_unbind_error", "a = L(2, 3); y = a * 2; r0, r1 = y.unbind(); r0.zero_()"),
    ("view_unbind_base_write_error", "a = L(2, 3); y = a * 2; r0, r1 = y.unbind(); y.add_(1); r0.grad_fn"),
    ("view_split_no_grad_ok", "a = L(4, 3); y = a * 2; p, q = y.split(2)\nwith torch.no_grad():\n    p.mul_(2)\n"
                              "out = y"),
    ("view_no_grad_tensor_receives", "z = torch.zeros(2, 3); a = L(3); z[1].add_(a); bw(z); out = z"),
    ("view_detach_write_saved_error", "a = L(3); y = a.sigmoid(); d = y.detach(); d.zero_(); out = (y, d); bw(y)"),
    ("view_data_write_no_error", "a = L(3); y = a.sigmoid(); y.data.zero_(); bw(y); out = y"),
    ("leaf_data_write", "a = L(3); a.data.mul_(2); a.data[0] = 7; y = a * a; bw(y); out = a"),
    ("detach_shares_version", "a = L(3); y = a * 2; d = y.detach(); d.add_(1); out = (y._version, d._version, y)"),
    # ---- setitem: every index kind, on tensors with history ----
    ("setitem_int", "a = L(3, 2); y = a * 2; y[1] = 0; bw(y); out = y"),
    ("setitem_negative_int", "a = L(3, 2); y = a * 2; y[-1] = 5; bw(y); out = y"),
    ("setitem_int_int", "a = L(3, 2); y = a * 2; y[1, 0] = 9; bw(y); out = y"),
    ("setitem_slice", "a = L(4, 2); y = a * 2; y[1:3] = 0; bw(y); out = y"),
    ("setitem_step_slice", "a = L(6); y = a * 2; y[::2] = L(3); bw(y); out = y"),
    ("setitem_ellipsis", "a = L(2, 3); y = a * 2; y[..., 1] = L(2); bw(y); out = y"),
    ("setitem_none", "a = L(2, 3); y = a * 2; y[None, 0] = L(3); bw(y); out = y"),
    ("setitem_all", "a = L(2, 3); y = a * 2; y[:] = L(3); bw(y); out = y"),
    ("setitem_mask", "a = L(2, 3); y = a * 2; y[y < 0] = 0; bw(y); out = y"),
    ("setitem_mask_tensor_value", "a = L(2, 3); v = L(1); y = a * 2; y[y > 0] = v[0]; bw(y); out = y"),
    ("setitem_long_tensor", "a = L(4, 2); v = L(2, 2); y = a * 2; y[torch.tensor([3, 0])] = v; bw(y); out = y"),
    ("setitem_list", "a = L(4, 2); y = a * 2; y[[0, 2]] = 1; bw(y); out = y"),
    ("setitem_tuple_of_tensors", "a = L(3, 3); v = L(2); y = a * 2; y[torch.tensor([0, 2]), torch.tensor([1, 1])] = v; "
                                 "bw(y); out = y"),
    ("setitem_slice_and_list", "a = L(3, 3); v = L(3, 2); y = a * 2; y[:, [0, 2]] = v; bw(y); out = y"),
    ("setitem_int_and_list", "a = L(3, 3); y = a * 2; y[1, [0, 2]] = 4; bw(y); out = y"),
    ("setitem_zero_dim_index", "a = L(3, 2); y = a * 2; y[torch.tensor(1)] = 3; bw(y); out = y"),
    ("setitem_value_requires_grad", "a = L(2, 3); v = L(3); y = a * 2; y[0] = v * 2; bw(y); out = y"),
    ("setitem_broadcast_value", "a = L(2, 3); v = L(1); y = a * 2; y[:, 1:] = v; bw(y); out = y"),
    ("setitem_tensor_scalar_value", "a = L(2, 3); y = a * 2; y[0] = torch.tensor(2.5); bw(y); out = y"),
    ("setitem_no_grad_tensor_receives", "z = torch.zeros(2, 3); a = L(3); z[0] = a; bw(z); out = z"),
    ("setitem_no_grad_tensor_mask_receives", "z = torch.zeros(2, 3); a = L(1); z[z == 0] = a[0]; bw(z); out = z"),
    ("setitem_twice", "a = L(2, 3); y = a * 2; y[0] = 1; y[1, 1:] = a[0, :2]; bw(y); out = y"),
    ("setitem_then_view", "a = L(2, 3); y = a * 2; v = y[1]; y[0] = 1; out = (v, y)"),
    ("setitem_saved_error", "a = L(3); y = a * 2; z = y * y; y[0] = 0; out = y; bw(z)"),
    ("setitem_on_view_of_leaf_no_grad", "a = L(3)\nwith torch.no_grad():\n    a[1] = 0\nbw(a * a); out = a"),
    ("setitem_versions", "y = torch.zeros(3, 3); v = y[0]; y[1] = 1; y[:, 0] = 2; y[[0, 2]] = 3; "
                         "y[y > 2] = 4; out = (y._version, v._version, y)"),
    # ---- saved tensors modified in place: 1.13's error at backward, naming the node ----
    ("saved_exp_result", "a = L(3); y = a.exp(); z = y * 1; y.add_(1); out = y; bw(y)"),
    ("saved_by_mul", "a = L(3); y = a * 2; z = y * a; y.mul_(2); out = y; bw(z)"),
    ("saved_sigmoid_output", "a = L(3); y = a.sigmoid(); y.mul_(2); out = y; bw(y)"),
    ("saved_tanh_output", "a = L(3); y = torch.tanh(a); y.add_(1); out = y; bw(y)"),
    ("saved_relu_output_relu_", "a = L(3); y = a.relu(); y.relu_(); bw(y); out = y"),
    ("saved_exp_then_exp_", "a = L(3); y = a * 1; y.exp_(); y.exp_(); bw(y); out = y"),
    ("saved_pow_input", "a = L(3); y = a * 1; z = y.pow(2); y.add_(1); out = y; bw(z)"),
    ("saved_div_other", "a = L(3); b = P(3) * 1; z = a / b; b.mul_(2); out = b; bw(z)"),
    ("saved_log_input", "a = P(3); y = a * 1; z = y.log(); y.zero_(); out = y; bw(z)"),
    ("saved_matmul", "a = L(2, 3); b = L(3, 2); y = a * 1; z = y @ b; y.t_(); out = y; bw(z)"),
    ("saved_view_written", "a = L(2, 3); y = a * 2; v = y[0]; z = v * v; v.add_(1); out = v; bw(z)"),
    ("saved_base_written_through_view", "a = L(2, 3); y = a * 2; z = y * y; y[0].add_(1); out = y; bw(z)"),
    ("saved_output_via_clamp_", "a = L(3); y = a.exp(); y.clamp_(max=1); out = y; bw(y)"),
    ("saved_leaf_error_text", "a = L(2, 2); y = a.exp()\nwith torch.no_grad():\n    a.zero_()\nbw(y)"),
    ("saved_retain_graph_second_backward", "a = L(3); y = a * 2; z = y * y; bw(z, retain_graph=True); y.add_(1); "
                                           "out = y; bw(z)"),
    ("saved_no_error_when_unsaved", "a = L(3); y = a * 2; z = y + 1; y.mul_(3); (z.sum() + y.sum()).backward(); "
                                    "out = (y, z)"),
    ("saved_int_version_in_text", "a = L(3); y = a * 2; z = y * y; y.add_(1); y.add_(1); y[0] = 1; out = y; bw(z)"),
    # ---- in-place under no_grad, then backward ----
    ("no_grad_inplace_non_leaf", "a = L(3); y = a * 2; z = y + 1\nwith torch.no_grad():\n    y.mul_(10)\n"
                                 "bw(z); out = (y, z)"),
    ("no_grad_inplace_non_leaf_saved", "a = L(3); y = a * 2; z = y * y\nwith torch.no_grad():\n    y.mul_(10)\n"
                                       "out = y; bw(z)"),
    ("no_grad_inplace_keeps_history", "a = L(3); y = a * 2\nwith torch.no_grad():\n    y.add_(1)\n    y[0] = 0\n"
                                      "bw(y); out = y"),
    ("enable_grad_inside_no_grad", "a = L(3); y = a * 2\nwith torch.no_grad():\n    with torch.enable_grad():\n"
                                   "        y.exp_()\nbw(y); out = y"),
    ("set_grad_enabled_false", "a = L(3); y = a * 2\nwith torch.set_grad_enabled(False):\n    y.exp_()\nbw(y); out = y"),
    # ---- retain_grad and tensor hooks across in-place ----
    ("retain_grad_then_inplace", "a = L(3); y = a * 2; y.retain_grad(); y.mul_(3); bw(y); out = y"),
    ("retain_grad_after_inplace", "a = L(3); y = a * 2; y.mul_(3); y.retain_grad(); bw(y); out = y"),
    ("retain_grad_view_write", "a = L(2, 3); y = a * 2; y.retain_grad(); y[0].mul_(3); bw(y); out = y"),
    ("hook_before_inplace", "a = L(3); y = a * 2; log = []; y.register_hook(lambda g: log.append(g.tolist())); "
                            "y.mul_(3); bw(y); out = (y, log)"),
    ("hook_after_inplace", "a = L(3); y = a * 2; log = []; y.mul_(3); y.register_hook(lambda g: log.append(g.tolist())); "
                           "bw(y); out = (y, log)"),
    ("hook_before_and_after", "a = L(3); y = a * 2; log = []; y.register_hook(lambda g: log.append(('b', g.tolist()))); "
                              "y.mul_(3); y.register_hook(lambda g: log.append(('a', g.tolist()))); bw(y); "
                              "out = (y, log)"),
    ("hook_changes_grad_before_inplace", "a = L(3); y = a * 2; y.register_hook(lambda g: g * 10); y.mul_(3); "
                                         "bw(y); out = y"),
    ("hook_on_leaf_then_no_grad_inplace", "a = L(3); log = []; a.register_hook(lambda g: log.append(g.tolist()))\n"
                                          "with torch.no_grad():\n    a.mul_(2)\nbw(a * a); out = (a, log)"),
    ("hook_on_view_written", "a = L(2, 3); y = a * 2; v = y[0]; log = []; v.register_hook(lambda g: log.append(g.tolist())); "
                             "v.mul_(2); bw(y); out = (y, log)"),
    # ---- in-place view ops ----
    ("t_", "a = L(2, 3); y = a * 2; r = y.t_(); bw(y); out = (y, r is y)"),
    ("transpose_", "a = L(2, 3, 2); y = a * 2; y.transpose_(0, 2); bw(y); out = y"),
    ("squeeze_", "a = L(2, 1, 3); y = a * 2; y.squeeze_(); bw(y); out = y"),
    ("squeeze_dim", "a = L(2, 1, 3); y = a * 2; y.squeeze_(1); bw(y); out = y"),
    ("unsqueeze_", "a = L(2, 3); y = a * 2; y.unsqueeze_(1); bw(y); out = y"),
    ("t_then_write", "a = L(2, 3); y = a * 2; y.t_(); y[0] = 0; bw(y); out = y"),
    ("t_leaf_error", "a = L(2, 3); a.t_()"),
    ("unsqueeze_leaf_error", "a = L(2, 3); a.unsqueeze_(0)"),
    ("t_no_grad_leaf", "a = N(2, 3); a.t_(); out = a"),
    ("t_of_leaf_under_no_grad", "a = L(2, 3)\nwith torch.no_grad():\n    a.t_()\nbw(a * 1); out = a"),
    ("resize_requires_grad_error", "a = L(2, 3); a.resize_(3, 2)"),
    ("resize_non_leaf_error", "a = L(2, 3); y = a * 2; y.resize_(6)"),
    ("resize_plain", "z = torch.zeros(2, 3); z.resize_(3, 2); out = z"),
    # ---- detach_, requires_grad_ ----
    ("detach__non_leaf", "a = L(3); y = a * 2; y.detach_(); out = y"),
    ("detach__view_error", "a = L(2, 3); y = a * 2; v = y[0]; v.detach_()"),
    ("detach__then_inplace", "a = L(3); y = a * 2; z = y + 1; y.detach_(); y.add_(1); bw(z); out = (y, z)"),
    ("detach_then_requires_grad", "a = L(3); y = (a * 2).detach(); y.requires_grad_(); y.mul_(2)"),
    # ---- second derivatives through in-place ops ----
    ("double_mul_", "a = L(3); y = a * a; y.mul_(a); g, = torch.autograd.grad(y.sum(), a, create_graph=True); "
                    "g2, = torch.autograd.grad((g * g).sum(), a); out = (g.detach(), g.requires_grad, g2.clone())"),
    ("double_exp_", "a = L(3); y = a * 1; y.exp_(); g, = torch.autograd.grad(y.sum(), a, create_graph=True); "
                    "g2, = torch.autograd.grad(g.sum(), a); out = (g.detach(), g.requires_grad, g2.clone())"),
    ("double_sigmoid_", "a = L(3); y = a * 2; y.sigmoid_(); g, = torch.autograd.grad(y.sum(), a, create_graph=True); "
                        "g2, = torch.autograd.grad(g.sum(), a); out = (g.detach(), g.requires_grad, g2.clone())"),
    ("double_view_write", "a = L(2, 3); y = a * a; y[0].mul_(a[1]); g, = torch.autograd.grad((y * C(y)).sum(), a, "
                          "create_graph=True); g2, = torch.autograd.grad((g * g).sum(), a); out = (g.detach(), g.requires_grad, g2.clone())"),
    ("double_setitem", "a = L(2, 3); y = a * 1; y[1] = a[0] ** 3; g, = torch.autograd.grad(y.sum(), a, "
                       "create_graph=True); g2, = torch.autograd.grad(g.sum(), a); out = (g.detach(), g.requires_grad, g2.clone())"),
    ("double_pow_", "a = P(3); y = a * 1; y.pow_(3); g, = torch.autograd.grad(y.sum(), a, create_graph=True); "
                    "g2, = torch.autograd.grad(g.sum(), a); out = (g.detach(), g.requires_grad, g2.clone())"),
    ("double_backward_grad_fn", "a = L(3); y = a * a; y.add_(a); g, = torch.autograd.grad(y.sum(), a, "
                                "create_graph=True); out = g"),
    # ---- RNG in place ----
    ("uniform_", "torch.manual_seed(0); a = L(3); y = a * 2; y.uniform_(); bw(y); out = y"),
    ("normal_", "torch.manual_seed(0); a = L(3); y = a * 2; y.normal_(); bw(y); out = y"),
    ("bernoulli_", "torch.manual_seed(0); a = L(4); y = a * 2; y.bernoulli_(0.5); bw(y); out = y"),
    ("uniform_view", "torch.manual_seed(0); a = L(2, 3); y = a * 2; y[0].uniform_(-1, 1); bw(y); out = y"),
    ("uniform_leaf_error", "a = L(3); a.uniform_()"),
    ("normal_leaf_no_grad", "torch.manual_seed(0); a = L(3)\nwith torch.no_grad():\n    a.normal_()\nout = a"),
    # ---- nn.functional and modules in place ----
    ("relu_module_after_linear", "torch.manual_seed(0); lin = nn.Linear(3, 2); x = N(4, 3); h = lin(x); "
                                 "r = nn.ReLU(inplace=True)(h); bw(r); out = (h, r is h, lin.weight.grad, lin.bias.grad)"),
    ("relu_module_after_sigmoid_error", "a = L(2, 3); h = a.sigmoid(); r = nn.ReLU(inplace=True)(h); out = r; bw(r)"),
    ("relu_module_after_tanh_error", "a = L(2, 3); h = torch.tanh(a); F.relu(h, inplace=True); out = h; bw(h)"),
    ("relu_module_after_batchnorm", "torch.manual_seed(0); bn = nn.BatchNorm1d(3); x = L(4, 3); h = bn(x); "
                                    "r = nn.ReLU(inplace=True)(h); bw(r); out = (r, bn.weight.grad, bn.bias.grad)"),
    ("relu_module_after_relu_", "a = L(2, 3); h = a.relu(); F.relu(h, inplace=True); bw(h); out = h"),
    ("relu_module_on_view", "a = L(2, 3); y = a * 2; F.relu(y[0], inplace=True); bw(y); out = y"),
    ("leaky_relu_inplace", "a = L(2, 3); y = a * 2; F.leaky_relu(y, 0.1, inplace=True); bw(y); out = y"),
    ("leaky_relu_inplace_module", "a = L(2, 3); y = a * 2; nn.LeakyReLU(0.2, inplace=True)(y); bw(y); out = y"),
    ("elu_inplace", "a = L(2, 3); y = a * 2; F.elu(y, inplace=True); bw(y); out = y"),
    ("hardtanh_inplace", "a = L(2, 3); y = a * 2; F.hardtanh(y, inplace=True); bw(y); out = y"),
    ("relu6_inplace", "a = L(2, 3); y = a * 4; F.relu6(y, inplace=True); bw(y); out = y"),
    ("threshold_inplace", "a = L(2, 3); y = a * 2; F.threshold(y, 0.5, -1.0, inplace=True); bw(y); out = y"),
    ("silu_inplace", "a = L(2, 3); y = a * 2; F.silu(y, inplace=True); bw(y); out = y"),
    ("dropout_inplace_eval", "a = L(2, 3); y = a * 2; d = nn.Dropout(0.5, inplace=True); d.eval(); r = d(y); bw(y); "
                             "out = (y, r is y)"),
    ("dropout_inplace_train", "torch.manual_seed(0); a = L(2, 4); y = a * 2; r = F.dropout(y, 0.5, True, True); "
                              "bw(y); out = (y, r is y)"),
    ("residual_iadd_relu", "torch.manual_seed(0); l1 = nn.Linear(3, 3); l2 = nn.Linear(3, 3); x = L(2, 3); "
                           "h = nn.ReLU(inplace=True)(l1(x)); o = l2(h); o += x; o = nn.ReLU(inplace=True)(o); "
                           "bw(o); out = (o, x.grad, l1.weight.grad, l2.weight.grad)"),
    ("mask_zero_activations", "torch.manual_seed(0); lin = nn.Linear(3, 4); x = N(2, 3); h = lin(x); "
                              "h[h < 0] = 0; bw(h); out = (h, lin.weight.grad)"),
    ("attention_masked_fill", "q = L(2, 3); k = L(2, 3); s = q @ k.t() / 3 ** 0.5; "
                              "mask = torch.tensor([[False, True], [False, False]]); s.masked_fill_(mask, float('-inf')); "
                              "p = s.softmax(-1); bw(p); out = (s, p)"),
    ("attention_masked_fill_out_of_place_saved", "q = L(2, 3); s = q @ q.t(); p = s.softmax(-1); "
                                                 "s.masked_fill_(torch.tensor([[False, True], [True, False]]), 0.0); "
                                                 "bw(p); out = p"),
    # ---- more views: restrictions carried to views of views, inference mode, _base ----
    ("view_inference_mode_error", "a = L(2, 3); y = a * 2\nwith torch.inference_mode():\n    v = y[0]\nout = v\n"
                                  "v.mul_(2)"),
    ("view_base_identity", "a = L(2, 3); y = a * 2; v = y[0]; w = v[1:]; out = (v._base is y, w._base is y, "
                           "y._base is None, v._is_view(), y._is_view(), a.detach()._is_view(), a.detach()._base is None)"),
    ("grad_and_base_identity", "w = L(3); (w * 2).sum().backward(); p = nn.Parameter(N(2, 3)); v = p[1]; "
                               "out = (w.grad is w.grad, v._base is p, type(v._base).__name__, p.grad is None)"),
    ("view_base_identity_after_write", "a = L(2, 3); y = a * 2; v = y.t(); v.mul_(2); out = (v._base is y, y)"),
    ("view_version_shared", "y = torch.zeros(2, 3); v = y[0]; w = y.t(); v.add_(1); w.mul_(2); "
                            "out = (y._version, v._version, w._version, y)"),
    ("view_unsqueeze_of_view_write", "a = L(2, 3); y = a * 2; v = y[1].unsqueeze(0); v.add_(L(1, 3)); bw(y); out = (y, v)"),
    ("view_as_strided_rebuilt_used", "a = L(2, 3); y = a * 2; v = y[:, 1]; y.mul_(y.detach()); z = v * 3; bw(z); "
                                     "out = (z, v)"),
    ("view_expand_of_view_read_after_write", "a = L(3); y = a * 2; e = y.expand(2, 3); y.add_(1); bw(e); out = (e, y)"),
    ("retain_grad_on_view_written", "a = L(2, 3); y = a * 2; v = y[0]; v.retain_grad(); v.mul_(3); bw(y); "
                                    "out = (v, y)"),
    ("retain_grad_on_view_written_used", "a = L(2, 3); y = a * 2; v = y[0]; v.retain_grad(); v.mul_(3); bw(v); "
                                         "out = (v, y)"),
    # ---- saved outputs of composed ops, then modified in place ----
    ("saved_softmax_output", "a = L(2, 3); p = a.softmax(-1); p.mul_(2); out = p; bw(p)"),
    ("saved_log_softmax_output", "a = L(2, 3); p = F.log_softmax(a, 1); p.add_(1); out = p; bw(p)"),
    ("dropout_inplace_after_softmax", "torch.manual_seed(0); a = L(2, 3); p = a.softmax(-1); "
                                      "F.dropout(p, 0.5, True, True); out = p; bw(p)"),
    ("relu_inplace_after_softmax", "a = L(2, 3); p = a.softmax(-1); nn.ReLU(inplace=True)(p); out = p; bw(p)"),
    ("elu_inplace_then_mul_", "a = L(2, 3); y = a * 2; F.elu(y, inplace=True); y.mul_(2); out = y; bw(y)"),
    ("leaky_relu_inplace_then_add_", "a = L(2, 3); y = a * 2; F.leaky_relu_(y, 0.1); y.add_(1); out = y; bw(y)"),
    ("hardtanh_inplace_then_mul_", "a = L(2, 3); y = a * 2; F.hardtanh_(y); y.mul_(2); out = y; bw(y)"),
    ("sigmoid__then_mul_", "a = L(2, 3); y = a * 2; y.sigmoid_(); y.mul_(2); out = y; bw(y)"),
    ("exp__of_view_then_base_write", "a = L(2, 3); y = a * 2; y[0].exp_(); y.mul_(2); out = y; bw(y)"),
    ("clamp__saves_input_copy", "a = L(2, 3); y = a * 2; y.clamp_(-1, 1); y.mul_(2); bw(y); out = y"),
    ("torch_functional_inplace_forms", "a = L(2, 3); y = a * 2; torch.tanh_(y); torch.clamp_(y, -0.5, 0.5); "
                                       "torch.neg_(y); torch.exp_(y); bw(y); out = y"),
    ("pow__saves_base_then_write", "a = P(3); y = a * 1; y.pow_(2); y.add_(1); bw(y); out = y"),
    ("div__saves_other_written", "a = L(3); b = P(3); d = b * 1; y = a * 1; y.div_(d); d.mul_(2); out = y; bw(y)"),
    ("mul__saves_other_written", "a = L(3); b = L(3); m = b * 1; y = a * 1; y.mul_(m); m.zero_(); out = y; bw(y)"),
    ("addcmul__saves_written", "a = L(3); t1 = L(3) * 1; t2 = L(3); y = a * 1; y.addcmul_(t1, t2); t1.add_(1); "
                               "out = y; bw(y)"),
    # ---- saved results of the in-place forms, parameters, optimizers, setitem with augmented assignment ----
    ("result_saved_sqrt_", "a = P(3); y = a * 1; y.sqrt_(); y.mul_(2); out = y; bw(y)"),
    ("result_saved_rsqrt_", "a = P(3); y = a * 1; y.rsqrt_(); y.mul_(2); out = y; bw(y)"),
    ("result_saved_reciprocal_", "a = P(3); y = a * 1; y.reciprocal_(); y.mul_(2); out = y; bw(y)"),
    ("result_saved_expm1_", "a = L(3); y = a * 1; y.expm1_(); y.mul_(2); out = y; bw(y)"),
    ("result_saved_exp2_", "a = L(3); y = a * 1; y.exp2_(); y.mul_(2); out = y; bw(y)"),
    ("result_saved_tan_", "a = L(3); y = a * 0.5; y.tan_(); y.mul_(2); out = y; bw(y)"),
    ("result_saved_tanh_", "a = L(3); y = a * 1; y.tanh_(); y.add_(1); out = y; bw(y)"),
    ("input_saved_log1p_", "a = P(3); y = a * 1; y.log1p_(); y.mul_(2); bw(y); out = y"),
    ("input_saved_square_", "a = L(3); y = a * 1; y.square_(); y.mul_(2); bw(y); out = y"),
    ("input_saved_abs_", "a = L(3); y = a * 1; y.abs_(); y.mul_(2); bw(y); out = y"),
    ("exp__on_named_view_then_base_write", "a = L(2, 3); y = a * 2; v = y[0]; v.exp_(); y.mul_(2); out = (y, v); bw(y)"),
    ("double_exp__through_temporary_view", "a = L(2, 3); y = a * 2; y[0].exp_(); g, = torch.autograd.grad(y.sum(), a, "
                                           "create_graph=True); g2, = torch.autograd.grad(g.sum(), a); "
                                           "out = (g.detach(), g2.clone())"),
    ("double_sigmoid__through_named_view", "a = L(2, 3); y = a * 2; v = y[1]; v.sigmoid_(); g, = torch.autograd.grad("
                                           "(y * C(y)).sum(), a, create_graph=True); g2, = torch.autograd.grad("
                                           "(g * g).sum(), a); out = (g.detach(), g2.clone())"),
    ("optimizer_step_between_backwards", "torch.manual_seed(0); lin = nn.Linear(3, 2); opt = torch.optim.SGD("
                                         "lin.parameters(), lr=0.1); x = N(4, 3); out = lin(x); "
                                         "out.sum().backward(retain_graph=True); opt.step(); (out * out).sum().backward()"),
    ("optimizer_step_then_new_forward", "torch.manual_seed(0); lin = nn.Linear(3, 2); opt = torch.optim.SGD("
                                        "lin.parameters(), lr=0.1); x = N(4, 3); lin(x).sum().backward(); opt.step(); "
                                        "opt.zero_grad(); o = lin(x); o.sum().backward(); "
                                        "out = (o, lin.weight, lin.weight._version, lin.bias._version)"),
    ("init_on_parameters", "torch.manual_seed(0); lin = nn.Linear(3, 2); nn.init.constant_(lin.bias, 0.5); "
                           "nn.init.zeros_(lin.weight); "
                           "out = (lin.weight, lin.bias, lin.weight._version, lin.bias._version)"),
    ("parameter_setitem_no_grad", "torch.manual_seed(0); lin = nn.Linear(3, 2)\nwith torch.no_grad():\n"
                                  "    lin.weight[0] = 1.0\n    lin.bias.fill_(0.25)\n    lin.weight.mul_(2)\n"
                                  "o = lin(N(2, 3)); bw(o); out = (lin.weight, lin.bias, o)"),
    ("parameter_setitem_grad_error", "torch.manual_seed(0); lin = nn.Linear(3, 2); lin.weight[0] = 1.0"),
    ("parameter_data_inplace", "torch.manual_seed(0); lin = nn.Linear(3, 2); lin.weight.data.mul_(0.5); "
                               "lin.weight.data[0, 0] = 3.0; lin.bias.data.zero_(); "
                               "out = (lin.weight, lin.bias, lin.weight._version)"),
    ("grad_inplace_edits", "w = L(3); (w * w).sum().backward(); w.grad.mul_(0.5); w.grad[0] = 9.0; "
                           "(w * 2).sum().backward(); out = (w, w.grad._version)"),
    ("setitem_iadd_on_int", "a = L(2, 3); y = a * 2; y[0] += 1; bw(y); out = y"),
    ("setitem_imul_on_slice", "a = L(2, 3); y = a * 2; y[:, 1] *= a[:, 0]; bw(y); out = y"),
    ("setitem_iadd_on_mask", "a = L(2, 3); y = a * 2; m = y > 0; y[m] += 10; bw(y); out = y"),
    ("setitem_iadd_on_list", "a = L(3, 2); y = a * 2; y[[0, 2]] -= a[1]; bw(y); out = y"),
    ("add__shape_error", "a = L(3); y = a * 2; y.add_(L(2, 3))"),
    ("mul__int_float_error", "y = torch.tensor([1, 2]); y.mul_(1.5)"),
    ("selu_celu_inplace", "a = L(2, 3); y = a * 2; F.selu(y, inplace=True); z = a * 3; F.celu(z, 0.5, True); "
                          "bw(y); bw(z); out = (y, z)"),
    ("rrelu_eval_inplace", "a = L(2, 3); y = a * 2; F.rrelu(y, inplace=True); bw(y); out = y"),
    ("hardswish_inplace_module", "a = L(2, 3); y = a * 2; nn.Hardswish(inplace=True)(y); bw(y); out = y"),
    ("silu_inplace_module", "a = L(2, 3); y = a * 2; nn.SiLU(inplace=True)(y); y.mul_(2); bw(y); out = y"),
    ("exponential_with_history", "torch.manual_seed(0); a = L(3); y = a * 1; y.exponential_(); bw(y); out = y"),
    ("bernoulli_tensor_p_with_history", "torch.manual_seed(0); a = L(3); y = a * 1; "
                                        "y.bernoulli_(torch.tensor([0.2, 0.5, 0.9])); bw(y); out = y"),
    ("random_fill_of_view", "torch.manual_seed(0); a = L(2, 3); y = a * 1; y[:, 0].normal_(); bw(y); out = y"),
    ("detach_then_inplace_leaves_graph", "a = L(3); y = a.exp(); d = y.detach(); d.mul_(2); out = (y, d); bw(y)"),
    ("clone_then_inplace_ok", "a = L(3); y = a.exp(); c = y.clone(); c.mul_(2); bw(y); bw(c); out = (y, c)"),
    ("inplace_on_expand_of_non_grad", "z = torch.zeros(3, 1); e = z.expand(3, 2); e.zero_()"),
    ("inplace_on_leaf_view_detached", "a = L(2, 3); d = a.detach(); d[0] = 0; out = (a, d, a._version)"),
    ("version_counts", "a = L(3); y = a * 1; v = y[1:]; out = [y._version]; y.add_(1); out.append(y._version); "
                       "v.mul_(2); out.append(y._version); y[0] = 0; out.append(v._version); y.t_(); "
                       "out.append(y._version); y.detach().zero_(); out.append(y._version); "
                       "y.data.zero_(); out.append(y._version); out = (out, y)"),
    # ---- dtypes, more in-place methods and views, inference mode, parameters, hooks ----
    ("promote_double_other", "a = L(3); y = a * 2; b = L(3).double(); y.add_(b); bw(y); out = y"),
    ("promote_zero_dim_double", "a = L(3); y = a * 2; s = torch.tensor(2.0, dtype=torch.float64, requires_grad=True); "
                                "y.mul_(s); bw(y); out = (y, s.grad)"),
    ("double_receives_float", "a = L(3); x = torch.zeros(3, dtype=torch.float64); x += a; x *= a; bw(x); out = x"),
    ("mul_by_int_tensor", "a = L(3); y = a * 2; y.mul_(torch.tensor([1, 2, 3])); bw(y); out = y"),
    ("index_fill_", "a = L(2, 3); y = a * 2; y.index_fill_(1, torch.tensor([0, 2]), -1.0); bw(y); out = y"),
    ("index_copy_", "a = L(3, 2); s = L(2, 2); y = a * 2; y.index_copy_(0, torch.tensor([2, 0]), s); bw(y); out = y"),
    ("masked_scatter_", "a = L(2, 3); s = L(6); y = a * 2; y.masked_scatter_(torch.tensor([True, False, True]), s); "
                        "bw(y); out = y"),
    ("clamp_tensor_bounds", "a = L(2, 3); y = a * 2; y.clamp_(min=torch.zeros(3), max=torch.ones(3)); bw(y); out = y"),
    ("copy_from_own_view", "a = L(2, 3); y = a * 2; y.copy_(y[0]); bw(y); out = y"),
    ("setitem_from_own_view", "a = L(2, 3); y = a * 2; y[1] = y[0]; bw(y); out = y"),
    ("setitem_swap_rows", "a = L(3, 2); y = a * 2; y[0], y[1] = y[1], y[0]; bw(y); out = y"),
    ("setitem_swap_rows_clone", "a = L(3, 2); y = a * 2; y[0], y[1] = y[1].clone(), y[0].clone(); bw(y); out = y"),
    ("view_T_write", "a = L(2, 3); y = a * 2; y.T.add_(1); bw(y); out = y"),
    ("view_minus_one_write", "a = L(2, 3); y = a * 2; y.view(-1)[2:].mul_(3); bw(y); out = y"),
    ("view_movedim_write", "a = L(2, 3, 2); y = a * 2; y.movedim(0, 2)[0].zero_(); bw(y); out = y"),
    ("view_unflatten_write", "a = L(6); y = a * 2; y.unflatten(0, (2, 3))[1].exp_(); bw(y); out = y"),
    ("view_unfold_write_error", "a = L(5); y = a * 2; y.unfold(0, 2, 1).mul_(2)"),
    ("view_unfold_no_overlap_write", "a = L(6); y = a * 2; y.unfold(0, 2, 2).mul_(2); bw(y); out = y"),
    ("view_expand_as_read_after_write", "a = L(3); y = a * 2; e = y.expand_as(torch.zeros(2, 3)); y.exp_(); "
                                        "bw(e); out = (e, y)"),
    ("view_chunk_base_write_read", "a = L(4); y = a * 2; p, q = y.chunk(2); y.add_(1); out = p; p.grad_fn"),
    ("view_narrow_zero_", "a = L(3, 4); y = a * 2; y.narrow(1, 1, 2).zero_(); bw(y); out = y"),
    ("view_as_strided_write", "a = L(6); y = a * 2; y.as_strided((2, 2), (3, 1), 1).mul_(2); bw(y); out = y"),
    ("inference_mode_inplace_on_normal", "a = L(3); y = a * 2\nwith torch.inference_mode():\n    y.add_(1)\n"
                                         "bw(y); out = y"),
    ("inference_tensor_inplace_outside_error", "with torch.inference_mode():\n    t = torch.ones(3)\nt.add_(1)"),
    ("parameter_add_outside_no_grad_error", "p = nn.Parameter(N(3)); p.add_(1)"),
    ("parameter_copy_no_grad", "p = nn.Parameter(N(3))\nwith torch.no_grad():\n    p.copy_(torch.ones(3))\n"
                               "out = (p, p._version, p.is_leaf)"),
    ("requires_grad_true_on_non_leaf", "a = L(3); y = a * 2; y.requires_grad_(); y.add_(1); bw(y); out = y"),
    ("detach__on_leaf", "a = L(3); a.detach_(); out = a"),
    ("retain_grad_and_hook_across_inplace", "a = L(3); y = a * 2; y.retain_grad(); log = []; "
                                            "y.register_hook(lambda g: log.append(g.tolist()) or g * 2); y.mul_(3); "
                                            "bw(y); out = (y, log)"),
    ("retain_grad_hook_changes_grad", "a = L(3); y = a * 2; y.retain_grad(); y.register_hook(lambda g: g * 10); "
                                      "bw(y); out = y"),
    ("masked_fill_broadcast_mask", "a = L(2, 3); y = a * 2; y.masked_fill_(torch.tensor([[True], [False]]), 0.); "
                                   "bw(y); out = y"),
    ("masked_fill_zero_dim_requires_grad_value", "a = L(2, 3); v = L(1).sum(); y = a * 2; y.masked_fill_(y > 0, v); "
                                                 "bw(y); out = (y, v)"),
    ("scatter_reduce_add_", "a = L(2, 3); s = L(2, 2); y = a * 2; y.scatter_(1, torch.tensor([[0, 0], [1, 2]]), s, "
                            "reduce='add'); out = y"),
    ("lerp_into_no_grad_tensor", "z = torch.zeros(3); e = L(3); z.lerp_(e, 0.5); bw(z); out = z"),
    ("addcdiv_into_no_grad", "z = torch.ones(3); t1 = L(3); t2 = P(3); z.addcdiv_(t1, t2); bw(z); out = z"),
    ("pow_with_tensor_exponent_no_grad_base", "z = torch.full((3,), 2.0); e = L(3); z.pow_(e); bw(z); out = z"),
    ("sub_from_no_grad_alpha", "z = torch.zeros(3); b = L(3); z.sub_(b, alpha=2); bw(z); out = z"),
    ("add_with_alpha_no_grad_self", "z = torch.zeros(3); b = L(3); z.add_(b, alpha=0.5); bw(z); out = z"),
    ("div_int_self_error", "z = torch.tensor([1, 2]); z /= 2"),
    ("div_rounding_mode_inplace", "a = L(3); y = a * 5; y.div_(2, rounding_mode='floor'); bw(y); out = y"),
    ("floor_divide_inplace", "a = L(3); y = a * 5; y.floor_divide_(2); out = y"),
    ("clamp_no_bounds_error", "a = L(3); y = a * 2; y.clamp_()"),
    ("sigmoid_on_leaf_no_grad_tensor", "z = N(3); z.sigmoid_(); out = z"),
    ("zero_grad_set_to_none_false", "lin = nn.Linear(2, 2); lin(N(1, 2)).sum().backward(); g = lin.weight.grad; "
                                    "lin.zero_grad(set_to_none=False); out = (g is lin.weight.grad, g._version, g)"),
    ("scatter_reduce_backward_error", "a = L(2, 3); y = a * 2; y.scatter_(1, torch.tensor([[0], [2]]), 1.5, "
                                      "reduce='add'); out = y; bw(y)"),
    ("floor_divide_backward_error", "a = L(3); y = a * 5; y.floor_divide_(2); out = y; bw(y)"),
    ("div_trunc_tensor_other", "a = L(3); b = P(3); y = a * 5; y.div_(b, rounding_mode='trunc'); bw(y); out = (y, b)"),
    ("unfold_overlapping_read_after_write", "a = L(5); y = a * 2; u = y.unfold(0, 2, 1); y.mul_(3); bw(u); out = (u, y)"),
    ("unfold_backward_sums_windows", "a = L(2, 5); u = a.unfold(1, 3, 1); bw(u); out = u"),
    ("as_strided_overlapping_backward", "a = L(6); y = a * 2; s = y.as_strided((3, 2), (1, 1)); bw(s); out = s"),
    ("clamp_tensor_bounds_grads", "a = L(2, 3); lo = L(3) * 0.1; hi = P(3); y = a * 2; y.clamp_(min=lo, max=hi); "
                                  "bw(y); out = y"),
    ("add__partial_overlap_error", "y = torch.arange(9.).reshape(3, 3); y.add_(y[0])"),
    ("copy__transposed_self_error", "y = torch.arange(9.).reshape(3, 3); y.copy_(y.t())"),
    ("setitem_shifted_self_error", "y = torch.arange(9.).reshape(3, 3); y[1:] = y[:2]"),
    ("add__same_tensor_ok", "a = L(3); y = a * 2; y.add_(y); y.mul_(y); bw(y); out = y"),
    ("masked_fill_own_element", "a = L(2, 3); y = a * 2; y.masked_fill_(y > 0, y[0, 0]); bw(y); out = y"),
    ("zero_on_expanded_with_history_error", "a = L(3, 1); y = a * 2; e = y.expand(3, 2); e.zero_()"),
    # ---- custom Functions ----
    ("function_mark_dirty", "class Inc(Function):\n    @staticmethod\n    def forward(ctx, x):\n"
                            "        x.add_(1)\n        ctx.mark_dirty(x)\n        return x\n"
                            "    @staticmethod\n    def backward(ctx, g):\n        return g * 2\n"
                            "a = L(3); y = a * 2; z = Inc.apply(y); bw(z); out = (z is y, y)"),
    ("function_mark_dirty_leaf_error", "class Inc(Function):\n    @staticmethod\n    def forward(ctx, x):\n"
                                       "        x.add_(1)\n        ctx.mark_dirty(x)\n        return x\n"
                                       "    @staticmethod\n    def backward(ctx, g):\n        return g\n"
                                       "a = L(3); out = a; Inc.apply(a)"),
    ("function_mark_dirty_view", "class Inc(Function):\n    @staticmethod\n    def forward(ctx, x):\n"
                                 "        x.mul_(2)\n        ctx.mark_dirty(x)\n        return x\n"
                                 "    @staticmethod\n    def backward(ctx, g):\n        return g * 2\n"
                                 "a = L(2, 3); y = a * 1; z = Inc.apply(y[0]); bw(y); out = (y, z)"),
    ("function_no_mark_dirty", "class Inc(Function):\n    @staticmethod\n    def forward(ctx, x):\n"
                               "        x.add_(1)\n        return x\n"
                               "    @staticmethod\n    def backward(ctx, g):\n        return g\n"
                               "a = L(3); y = a * 2; z = Inc.apply(y); bw(z); out = (z is y, y, z)"),
    ("function_returns_view_then_inplace_error", "class Id(Function):\n    @staticmethod\n    def forward(ctx, x):\n"
                                                 "        return x.view_as(x)\n"
                                                 "    @staticmethod\n    def backward(ctx, g):\n        return g\n"
                                                 "a = L(3); y = a * 2; z = Id.apply(y); out = z; z.mul_(2)"),
    ("function_returns_input_then_inplace_error", "class Id(Function):\n    @staticmethod\n    def forward(ctx, x):\n"
                                                  "        return x\n"
                                                  "    @staticmethod\n    def backward(ctx, g):\n        return g\n"
                                                  "a = L(3); y = a * 2; z = Id.apply(y); out = (z is y, z); z.mul_(2)"),
    ("function_output_inplace_ok", "class Double(Function):\n    @staticmethod\n    def forward(ctx, x):\n"
                                   "        return x * 2\n"
                                   "    @staticmethod\n    def backward(ctx, g):\n        return g * 2\n"
                                   "a = L(3); z = Double.apply(a); z.add_(1); bw(z); out = z"),
    ("function_saved_output_modified_error", "class Exp(Function):\n    @staticmethod\n    def forward(ctx, x):\n"
                                             "        r = x.exp()\n        ctx.save_for_backward(r)\n        return r\n"
                                             "    @staticmethod\n    def backward(ctx, g):\n"
                                             "        r, = ctx.saved_tensors\n        return g * r\n"
                                             "a = L(3); z = Exp.apply(a); z.add_(1); out = z; bw(z)"),
    ("function_two_outputs_views_error", "class Split2(Function):\n    @staticmethod\n    def forward(ctx, x):\n"
                                         "        return x[0], x[1]\n"
                                         "    @staticmethod\n    def backward(ctx, g0, g1):\n"
                                         "        return torch.stack([g0, g1])\n"
                                         "a = L(2, 3); y = a * 2; p, q = Split2.apply(y); out = (p, q); p.mul_(2)"),
    ("function_returns_input_no_grad_mode", "class Id(Function):\n    @staticmethod\n    def forward(ctx, x):\n"
                                            "        return x\n"
                                            "    @staticmethod\n    def backward(ctx, g):\n        return g\n"
                                            "a = L(3); y = a * 2\nwith torch.no_grad():\n    z = Id.apply(y)\n"
                                            "out = (z is y, z._is_view(), z)"),
    ("function_mark_dirty_saved", "class MulIn(Function):\n    @staticmethod\n    def forward(ctx, x, w):\n"
                                  "        ctx.save_for_backward(w)\n        x.mul_(w)\n        ctx.mark_dirty(x)\n"
                                  "        return x\n"
                                  "    @staticmethod\n    def backward(ctx, g):\n        w, = ctx.saved_tensors\n"
                                  "        return g * w, None\n"
                                  "a = L(3); w = P(3); y = a + 0; z = MulIn.apply(y, w); z.add_(1); bw(z); out = (z, y)"),
    ("function_mark_dirty_no_grad_input_receives", "class AddIn(Function):\n    @staticmethod\n"
                                                   "    def forward(ctx, x, w):\n        x.add_(w)\n"
                                                   "        ctx.mark_dirty(x)\n        return x\n"
                                                   "    @staticmethod\n    def backward(ctx, g):\n"
                                                   "        return g, g\n"
                                                   "z = torch.zeros(3); w = L(3); r = AddIn.apply(z, w); bw(r); "
                                                   "out = (r is z, z)"),
    ("function_saved_input_modified_error", "class Sq(Function):\n    @staticmethod\n    def forward(ctx, x):\n"
                                            "        ctx.save_for_backward(x)\n        return x * x\n"
                                            "    @staticmethod\n    def backward(ctx, g):\n"
                                            "        x, = ctx.saved_tensors\n        return 2 * x * g\n"
                                            "a = L(3); y = a * 1; z = Sq.apply(y); y.add_(1); out = z; bw(z)"),
    ("function_output_used_twice_double", "class Cube(Function):\n    @staticmethod\n    def forward(ctx, x):\n"
                                          "        ctx.save_for_backward(x)\n        return x ** 3\n"
                                          "    @staticmethod\n    def backward(ctx, g):\n"
                                          "        x, = ctx.saved_tensors\n        return 3 * x * x * g\n"
                                          "a = L(3); z = Cube.apply(a * 1); z.mul_(2); "
                                          "g, = torch.autograd.grad(z.sum(), a, create_graph=True); "
                                          "g2, = torch.autograd.grad(g.sum(), a); out = (z, g.detach(), g2.clone())"),
    # ---- module backward hooks, then an in-place op on what the module returned ----
    ("full_backward_hook_then_inplace_error", "torch.manual_seed(0); lin = nn.Linear(3, 2); "
                                              "lin.register_full_backward_hook(lambda m, gi, go: None); "
                                              "x = L(4, 3); h = lin(x); out = h; h.relu_()"),
    ("full_backward_hook_relu_inplace_module_error", "torch.manual_seed(0); net = nn.Sequential(nn.Linear(3, 2), "
                                                     "nn.ReLU(inplace=True)); "
                                                     "net[0].register_full_backward_hook(lambda m, gi, go: None); "
                                                     "x = L(4, 3); net(x)"),
    ("full_backward_hook_on_inplace_relu_error", "r = nn.ReLU(inplace=True); "
                                                 "r.register_full_backward_hook(lambda m, gi, go: None); "
                                                 "a = L(2, 3); y = a * 2; r(y)"),
    ("full_backward_hook_clone_ok", "torch.manual_seed(0); lin = nn.Linear(3, 2); log = []; "
                                    "lin.register_full_backward_hook(lambda m, gi, go: log.append(go[0].tolist())); "
                                    "x = L(4, 3); h = lin(x).clone(); h.relu_(); bw(h); out = (h, log)"),
    ("forward_hook_inplace_on_output", "torch.manual_seed(0); lin = nn.Linear(3, 2); "
                                       "lin.register_forward_hook(lambda m, i, o: o.mul_(2)); x = L(4, 3); h = lin(x); "
                                       "bw(h); out = (h, lin.bias.grad)"),
    ("full_backward_hook_values", "torch.manual_seed(0); lin = nn.Linear(3, 2); log = []; "
                                  "lin.register_full_backward_hook(lambda m, gi, go: log.append((gi[0].tolist(), "
                                  "go[0].tolist()))); x = L(2, 3); h = lin(x); r = F.relu(h); bw(r); "
                                  "out = (h, log, x.grad)"),
    ("full_backward_hook_input_inplace_inside_error", "class M(nn.Module):\n    def forward(self, x):\n"
                                                     "        x.mul_(2)\n        return x\n"
                                                     "m = M(); m.register_full_backward_hook(lambda m, gi, go: None); "
                                                     "a = L(3); y = a * 1; m(y)"),
    # ---- checkpoint of a block with in-place ops ----
    ("checkpoint_reentrant_inplace", "torch.manual_seed(0); "
                                     "l1 = nn.Linear(3, 3); l2 = nn.Linear(3, 3)\n"
                                     "def block(x):\n    h = l1(x); h.relu_(); o = l2(h); o += x; return o.relu_()\n"
                                     "x = L(2, 3); y = x * 1; o = checkpoint(block, y, use_reentrant=True); bw(o); "
                                     "out = (o, x.grad, l1.weight.grad, l2.bias.grad)"),
    ("checkpoint_non_reentrant_inplace", "torch.manual_seed(0); "
                                         "l1 = nn.Linear(3, 3); l2 = nn.Linear(3, 3)\n"
                                         "def block(x):\n    h = l1(x); h.relu_(); o = l2(h); o += x; return o.relu_()\n"
                                         "x = L(2, 3); y = x * 1; o = checkpoint(block, y, use_reentrant=False); "
                                         "bw(o); out = (o, x.grad, l1.weight.grad, l2.bias.grad)"),
    ("checkpoint_reentrant_output_inplace", ""
                                            "x = L(2, 3); y = x * 1; o = checkpoint(lambda t: t.exp(), y, "
                                            "use_reentrant=True); o.mul_(2); bw(o); out = (o, x.grad)"),
]
