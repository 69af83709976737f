"""torch.autograd.functional: jacobian, hessian, vjp, jvp, vhp and hvp of a function of tensors, computed as
1.13 computes them (reverse mode, one autograd.grad per output element for jacobian; jvp and hvp through the
double-backward trick), with 1.13's argument checks and texts and its packing of tuples. strict=True and the
forward-mode strategies are not supported."""
import tinyddp as torch

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]


def _as_tuple(inp, arg_name, fn_name):
    is_tuple = isinstance(inp, tuple)
    if not is_tuple:
        inp = (inp,)
    for i, el in enumerate(inp):
        if not isinstance(el, torch.Tensor):
            where = f"value at index {i}" if is_tuple else f"given {arg_name}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but "
                            f"the {where} has type {type(el)}.")
    return is_tuple, inp


def _tuple_postprocess(res, to_unpack):
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs, create_graph, need_graph):
    """Fresh tensors for the function to see: a differentiable view with create_graph, else detached leaves."""
    return tuple(inp.view_as(inp) if create_graph and inp.requires_grad else inp.detach().requires_grad_(need_graph)
                 for inp in inputs)


def _grad_postprocess(inputs, create_graph):
    if isinstance(inputs[0], torch.Tensor):
        return inputs if create_graph else tuple(inp.detach() for inp in inputs)
    return tuple(_grad_postprocess(inp, create_graph) for inp in inputs)


def _validate_v(v, other, is_other_tuple):
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {el_other.size()} but got {el_v.size()}.")


def _check_strict(strict, fn_name):
    if strict:
        raise NotImplementedError(f"tinyddp: torch.autograd.functional.{fn_name}(strict=True) is not supported")


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """autograd.grad of the outputs that require grad (allow_unused), or Nones when none does."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(out, g) for out, g in zip(outputs, grad_outputs) if out is not None and out.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return torch.autograd.grad(tuple(p[0] for p in pairs), inputs, tuple(p[1] for p in pairs), allow_unused=True,
                               create_graph=create_graph, retain_graph=retain_graph)


def _fill_in_zeros(grads, refs):
    return tuple(torch.zeros_like(ref) if g is None else g for g, ref in zip(grads, refs))


def _single_element_v(v, inputs, is_inputs_tuple, create_graph, fn_name, of_what):
    if v is not None:
        _, v = _as_tuple(v, "v", fn_name)
        v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
        _validate_v(v, inputs, is_inputs_tuple)
    elif len(inputs) != 1 or inputs[0].nelement() != 1:
        raise RuntimeError(f"The vector v can only be None if the {of_what} is a single Tensor with a single "
                           "element.")
    return v


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    _check_strict(strict, "vjp")
    with torch.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "vjp")
        if v is not None:
            _, v = _as_tuple(v, "v", "vjp")
            v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
            _validate_v(v, outputs, is_outputs_tuple)
        elif len(outputs) != 1 or outputs[0].nelement() != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function returns a single "
                               "Tensor with a single element.")
    with torch.set_grad_enabled(True if create_graph else torch.is_grad_enabled()):
        result = _fill_in_zeros(_autograd_grad(outputs, inputs, v, create_graph=create_graph), inputs)
    return (_tuple_postprocess(_grad_postprocess(outputs, create_graph), is_outputs_tuple),
            _tuple_postprocess(_grad_postprocess(result, create_graph), is_inputs_tuple))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    _check_strict(strict, "jvp")
    with torch.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _single_element_v(v, inputs, is_inputs_tuple, create_graph, "jvp",
                              "input to the user-provided function")
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jvp")
        # the double-backward trick: the backward is linear in grad_outputs, whose value does not matter
        grad_outputs = tuple(torch.zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
    with torch.set_grad_enabled(True if create_graph else torch.is_grad_enabled()):
        result = _fill_in_zeros(_autograd_grad(grad_inputs, grad_outputs, v, create_graph=create_graph), outputs)
    return (_tuple_postprocess(_grad_postprocess(outputs, create_graph), is_outputs_tuple),
            _tuple_postprocess(_grad_postprocess(result, create_graph), is_outputs_tuple))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """d outputs / d inputs: for each output, one autograd.grad per element, stacked into out.shape + in.shape
    (zeros where an input is unused). vectorize=True gives the same values (1.13 batches the same grads)."""
    _check_strict(strict, "jacobian")
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                         'function has more outputs than inputs, "forward-mode" tends to be more performant. '
                         'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError("torch.autograd.functional.jacobian: `create_graph=True` and "
                                      "`strategy=\"forward-mode\"` are not supported together (yet). Please "
                                      "either set `create_graph=False` or `strategy=\"reverse-mode\"`.")
        raise NotImplementedError("tinyddp: jacobian(strategy='forward-mode') is not supported (tinyddp has no "
                                  "forward-mode AD); use the default reverse mode")
    with torch.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jacobian")
        result = ()
        for out in outputs:
            rows = tuple([] for _ in inputs)
            flat = out.reshape(-1)
            for j in range(out.nelement()):
                grads = _autograd_grad((flat[j],), inputs, retain_graph=True, create_graph=create_graph)
                for row, g, inp in zip(rows, grads, inputs):
                    row.append(torch.zeros_like(inp) if g is None else g)
            result += (tuple(torch.stack(row, dim=0).view(tuple(out.size()) + tuple(inp.size()))
                             for row, inp in zip(rows, inputs)),)
        result = _grad_postprocess(result, create_graph)
        return _tuple_postprocess(result, (is_outputs_tuple, is_inputs_tuple))


def _single_output(out, fn_name):
    is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", fn_name)
    if is_out_tuple or not isinstance(out, torch.Tensor):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if out.nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should contain a single element")
    return t_out


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The jacobian of the jacobian of a function with one single-element output."""
    _check_strict(strict, "hessian")
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")

    def single_output(*inp):
        return _single_output(func(*inp), "hessian")[0].squeeze()

    def jac_func(*inp):
        return jacobian(single_output, inp, create_graph=True)
    res = jacobian(jac_func, inputs, create_graph=create_graph, vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    _check_strict(strict, "vhp")
    with torch.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vhp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _single_element_v(v, inputs, is_inputs_tuple, create_graph, "vhp",
                              "input to the user-provided function")
        outputs = _single_output(func(*inputs), "vhp")
        jac = _autograd_grad(outputs, inputs, create_graph=True)
    with torch.set_grad_enabled(True if create_graph else torch.is_grad_enabled()):
        result = _fill_in_zeros(_autograd_grad(jac, inputs, v, create_graph=create_graph), inputs)
    return (_tuple_postprocess(_grad_postprocess(outputs, create_graph), False),
            _tuple_postprocess(_grad_postprocess(result, create_graph), is_inputs_tuple))


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    _check_strict(strict, "hvp")
    with torch.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        v = _single_element_v(v, inputs, is_inputs_tuple, create_graph, "hvp",
                              "input to the user-provided function")
        outputs = _single_output(func(*inputs), "hvp")
        jac = _autograd_grad(outputs, inputs, create_graph=True)
        grad_jac = tuple(torch.zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
    with torch.set_grad_enabled(True if create_graph else torch.is_grad_enabled()):
        result = _fill_in_zeros(_autograd_grad(double_back, grad_jac, v, create_graph=create_graph), inputs)
    return (_tuple_postprocess(_grad_postprocess(outputs, create_graph), False),
            _tuple_postprocess(_grad_postprocess(result, create_graph), is_inputs_tuple))
