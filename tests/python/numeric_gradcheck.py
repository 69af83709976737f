"""PyTorch's gradcheck and gradgradcheck written by hand for the tests (independent of the library's own
torch.autograd.gradcheck): float64 inputs as NumPy arrays, central differences against autograd."""
import numpy as np

import tinyddp as torch


def _tensors(arrays, requires_grad=False):
    return [torch.from_numpy(a.copy()).requires_grad_(requires_grad) for a in arrays]


def check_vjp(f, arrays, seed, eps=1e-6):
    """Central differences of u . f(inputs) against autograd's gradient, for a random u, in float64."""
    rng = np.random.default_rng(seed)
    inputs = _tensors(arrays, requires_grad=True)
    out = f(*inputs)
    u = rng.standard_normal(list(out.shape))
    analytic = torch.autograd.grad((out * torch.from_numpy(u)).sum(), inputs, allow_unused=True)
    for k, a in enumerate(arrays):
        numeric = np.zeros_like(a)
        for pos in np.ndindex(a.shape):
            sides = []
            for sign in (1.0, -1.0):
                moved = [b.copy() for b in arrays]
                moved[k][pos] += sign * eps
                sides.append((f(*_tensors(moved)) * torch.from_numpy(u)).sum().item())
            numeric[pos] = (sides[0] - sides[1]) / (2 * eps)
        got = np.zeros_like(a) if analytic[k] is None else analytic[k].numpy()
        np.testing.assert_allclose(got, numeric, rtol=1e-5, atol=1e-6, err_msg=f"input {k}")


def gradcheck_and_gradgradcheck(f, arrays, seed=0):
    """The first derivative of f, then the derivative of its vector-Jacobian product (in the inputs and in the
    vector), against central differences."""
    check_vjp(f, arrays, seed)
    out_shape = list(f(*_tensors(arrays)).shape)
    rng = np.random.default_rng(seed + 1)
    weights = [rng.standard_normal(a.shape) for a in arrays]

    def vjp_dot(*args):
        inputs, u = args[:-1], args[-1]
        inputs = [t if t.requires_grad else t.requires_grad_() for t in inputs]
        grads = torch.autograd.grad((f(*inputs) * u).sum(), inputs, create_graph=True, allow_unused=True)
        total = (u * 0).sum()
        for g, w in zip(grads, weights):
            if g is not None:
                total = total + (g * torch.from_numpy(w)).sum()
        return total
    check_vjp(vjp_dot, list(arrays) + [rng.standard_normal(out_shape)], seed + 2)
