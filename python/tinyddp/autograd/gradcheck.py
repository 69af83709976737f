"""torch.autograd.gradcheck / gradgradcheck, the slow (full-Jacobian) mode as 1.13 runs it: central differences
(x - eps first, then x + eps) of every input element against the analytical Jacobian from one autograd.grad
per output element (computed twice: a mismatch is "not reentrant"), then the backward with zero grad_outputs and
the undefined-grad check, with 1.13's calls of `func` in the same order, its checks, warnings and texts.
fast_mode, forward mode and batched checks are not supported."""
import itertools
import warnings

import tinyddp as torch

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck and gradgradcheck (a RuntimeError, as 1.13's)."""


def _as_tuple(x):
    return x if isinstance(x, tuple) else tuple(x) if isinstance(x, list) else (x,)


def _differentiable_outputs(x):
    return tuple(o for o in _as_tuple(x) if o.requires_grad)


def _check_inputs(inputs):
    any_requiring_grad = False
    for idx, inp in enumerate(inputs):
        if isinstance(inp, torch.Tensor) and inp.requires_grad:
            if inp.dtype is not torch.float64:
                warnings.warn(f"Input #{idx} requires gradient and is not a double precision floating point or "
                              "complex. This check will likely fail if all the inputs are not of double precision "
                              "floating point or complex. ")
            if not all(st > 0 or sz <= 1 for st, sz in zip(inp.stride(), inp.size())):
                raise RuntimeError(f"The {idx}th input has a dimension with stride 0. gradcheck only supports inputs "
                                   "that are non-overlapping to be able to compute the numerical gradients "
                                   "correctly. You should call .contiguous on the input before passing it to "
                                   "gradcheck.")
            any_requiring_grad = True
    if not any_requiring_grad:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of the them "
                         "have requires_grad=True.")


def _numerical_jacobians(func, inputs, outputs, eps):
    """[input][output]: (input numel, output numel) central differences in the outputs' dtype. The perturbed
    input is passed detached (its .data), the others as given, as 1.13's _prepare_input."""
    result = []
    for idx, inp in enumerate(inputs):
        if not (isinstance(inp, torch.Tensor) and inp.requires_grad):
            continue
        jac = [o.new_zeros((inp.numel(), o.numel())) for o in outputs if o.is_floating_point()]
        strides = [1] * inp.dim()
        for d in range(inp.dim() - 2, -1, -1):
            strides[d] = strides[d + 1] * inp.size(d + 1)

        def run_with(index, value):
            # a fresh .data alias per call (its own version counter, so the saved input stays valid for the
            # analytical pass): func may mark what it gets as requiring grad (gradgradcheck does)
            data = inp.data
            data[index].copy_(value)
            return tuple(o.clone() for o in _as_tuple(func(*(data if i == idx else a for i, a in enumerate(inputs)))))
        for index in itertools.product(*[range(s) for s in inp.size()]):
            d_idx = sum(i * s for i, s in zip(index, strides))
            orig = inp.data[index].clone()
            outa = run_with(index, orig - eps)
            outb = run_with(index, orig + eps)
            inp.data[index].copy_(orig)
            cols = [((b - a) / (2 * eps)).detach().reshape(-1) for a, b in zip(outa, outb)]
            for j, col in zip(range(len(jac)), cols):
                jac[j][d_idx] = col
        result.append(jac)
    return result


def _analytical_jacobian(inputs, output, nondet_tol):
    diff_inputs = [t for t in inputs if isinstance(t, torch.Tensor) and t.requires_grad]

    def rows():
        grad_out = torch.zeros_like(output)
        flat = grad_out.view(-1)
        per_input = [[] for _ in diff_inputs]
        for j in range(flat.numel()):
            flat.zero_()
            flat[j] = 1.0
            grads = torch.autograd.grad(output, diff_inputs, grad_out, retain_graph=True, allow_unused=True)
            for i, g in enumerate(grads):
                per_input[i].append(None if g is None else g.clone())
        return per_input

    def stack(per_input):
        jacobians, sizes_ok = [], True
        for inp, column_list in zip(diff_inputs, per_input):
            jac = inp.new_zeros((inp.numel(), output.numel()))
            for j, g in enumerate(column_list):
                if g is not None and g.size() != inp.size():
                    sizes_ok = False
                elif g is not None:
                    jac[:, j] = g.reshape(-1)
            jacobians.append(jac)
        return jacobians, sizes_ok
    jac1, sizes_ok = stack(rows())
    jac2, _ = stack(rows())
    if not sizes_ok:
        raise GradcheckError("Analytical gradient has incorrect size")
    if not all((a - b).abs().max().item() <= nondet_tol if a.numel() else True for a, b in zip(jac1, jac2)):
        raise GradcheckError("Backward is not reentrant, i.e., running backward with same input and grad_output "
                             "multiple times gives different values, although analytical gradient matches "
                             f"numerical gradient.The tolerance for nondeterminism was {nondet_tol}.")
    return jac1


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, check_sparse_nnz=False,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True, fast_mode=False):
    """True when func's analytical gradients match central differences (allclose with rtol, atol), else a
    GradcheckError (or False with raise_exception=False)."""
    if fast_mode or check_batched_grad or check_batched_forward_grad or check_forward_ad:
        raise NotImplementedError("tinyddp: gradcheck runs the slow backward-mode check only (fast_mode, forward "
                                  "mode and batched checks are not supported)")
    if not raise_exception:
        try:
            return _gradcheck(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad, check_backward_ad)
        except GradcheckError:
            return False
    return _gradcheck(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad, check_backward_ad)


def _gradcheck(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad, check_backward_ad):
    inputs = _as_tuple(inputs)
    _check_inputs(inputs)
    func_out = _as_tuple(func(*inputs))
    outputs = _differentiable_outputs(func_out)
    numerical = _numerical_jacobians(func, inputs, func_out, eps)
    if not outputs:
        for per_input in numerical:
            for jac in per_input:
                if torch.ne(jac, 0).sum() > 0:
                    raise GradcheckError("Numerical gradient for function expected to be zero")
        return True
    # [output][input], for the outputs that require grad
    numerical = [[per_input[k] for per_input in numerical] for k, o in enumerate(func_out)
                 if o.is_floating_point() and o.requires_grad]
    if check_backward_ad:
        for i, o in enumerate(outputs):
            analytical = _analytical_jacobian(inputs, o, nondet_tol)
            for j, (a, n) in enumerate(zip(analytical, numerical[i])):
                dtype = torch.float64 if torch.float64 in (a.dtype, n.dtype) else a.dtype
                if not torch.allclose(a.to(dtype), n.to(dtype), rtol, atol):
                    raise GradcheckError(f"Jacobian mismatch for output {i} with respect to input {j},\n"
                                         f"numerical:{n}\nanalytical:{a}\n")
    if not check_backward_ad:
        return True
    diff_inputs = [t for t in inputs if isinstance(t, torch.Tensor) and t.requires_grad]
    grads = torch.autograd.grad(outputs, diff_inputs, [torch.zeros_like(o) for o in outputs], allow_unused=True)
    for gi, di in zip(grads, diff_inputs):
        if gi is None:
            continue
        if not gi.eq(0).all():
            raise GradcheckError("backward not multiplied by grad_output")
        if gi.dtype != di.dtype:
            raise GradcheckError("grad is incorrect type")
        if gi.size() != di.size():
            raise GradcheckError("grad is incorrect size")
    if check_undefined_grad:
        to_check = [_differentiable_outputs(func(*inputs))]
        if len(to_check[0]) > 1:
            to_check += [_differentiable_outputs(func(*inputs)) for _ in outputs]
        for outs in to_check:
            grads = torch.autograd.grad(outs, diff_inputs, [torch.zeros_like(o) for o in outs],
                                        allow_unused=True)
            if any(g is not None and not g.eq(0).all() for g in grads):
                warnings.warn("Backwards compatibility: New undefined gradient support checking feature is "
                              "enabled by default, but it may break existing callers of this function. If this "
                              "is true for you, you can call this function with \"check_undefined_grad=False\" "
                              "to disable the feature")
                raise GradcheckError("Expected all input grads to be undefined or zero when all output grads "
                                     "are undefined or zero. Please look at \"Notes about undefined output "
                                     "gradients\" in \"tools/autograd/derivatives.yaml\"")
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0, check_undefined_grad=True,
                  check_grad_dtypes=False, check_batched_grad=False, check_fwd_over_rev=False,
                  check_rev_over_rev=True, fast_mode=False):
    """gradcheck of the function (inputs, grad_outputs) -> autograd.grad(func(inputs), inputs, grad_outputs,
    create_graph=True); grad_outputs default to uniform values in [-1, 1) shaped as the differentiable outputs,
    drawn as 1.13's make_tensor draws them."""
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outputs = _differentiable_outputs(func(*inputs))
        # torch.testing.make_tensor(x.shape, low=-1, high=1, requires_grad=True), as 1.13 draws them
        def uniform_in_unit_interval(x):
            r = torch.rand(tuple(x.shape), dtype=x.dtype if x.is_floating_point() else torch.float64)
            return (1 * r + -1 * (1 - r)).requires_grad_()
        grad_outputs = tuple(uniform_in_unit_interval(x) for x in outputs)
    else:
        grad_outputs = _as_tuple(grad_outputs)
    num_outputs = len(grad_outputs)
    diff_inputs = {i for i, x in enumerate(inputs) if isinstance(x, torch.Tensor) and x.requires_grad}
    diff_grads = {i for i, x in enumerate(grad_outputs) if x.requires_grad}

    def new_func(*args):
        input_args = tuple(x.requires_grad_() if i in diff_inputs else x for i, x in enumerate(args[:-num_outputs]))
        outputs = _differentiable_outputs(func(*input_args))
        grads = tuple(x.requires_grad_() if i in diff_grads else x for i, x in enumerate(args[-num_outputs:]))
        wrt = tuple(x for i, x in enumerate(input_args) if i in diff_inputs)
        grad_inputs = torch.autograd.grad(outputs, wrt, grads, create_graph=True, allow_unused=True)
        return tuple(g for g in grad_inputs if g is not None)
    return gradcheck(new_func, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception,
                     nondet_tol=nondet_tol, check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad,
                     fast_mode=fast_mode, check_forward_ad=check_fwd_over_rev, check_backward_ad=check_rev_over_rev)
