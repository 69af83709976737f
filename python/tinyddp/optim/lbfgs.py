"""torch.optim.LBFGS: 1.13's limited-memory BFGS over all parameters flattened into one vector, with its state
(func_evals, n_iter, the direction d, step t, the (y, s) history old_dirs/old_stps with ro = 1 / y.s, H_diag,
prev_flat_grad, prev_loss) and, with line_search_fn='strong_wolfe', its bracketing line search with cubic
interpolation. Scalars that 1.13 keeps as 0-dim tensors (y.s, H_diag, the interpolated steps) are tensors here too.
Dot products sum in the engine's order, so values agree with 1.13's to float rounding."""
import functools

import tinyddp
from tinyddp import _C
from tinyddp.autograd.grad_mode import enable_grad
from tinyddp.optim.optimizer import Optimizer


def _cubic_minimum(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimizer of the cubic through (x1, f1) and (x2, f2) with slopes g1, g2, clamped to `bounds` (default:
    the interval between the points); the interval's middle when the cubic has no minimum."""
    low, high = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if not d2_square >= 0:
        return (low + high) / 2.
    d2 = d2_square.sqrt()
    if x1 <= x2:
        position = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        position = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(position, low), high)


def _strong_wolfe(evaluate, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """A step t along d satisfying the strong Wolfe conditions (sufficient decrease c1, curvature c2): first
    grow t until a bracket holds a minimum, then shrink the bracket by cubic interpolation (kept away from its
    ends). Returns the loss, the flat gradient, t and the number of evaluations."""
    d_norm = d.abs().max()
    g = g.clone()
    f_new, g_new = evaluate(x, t, d)
    evals = 1
    gtd_new = g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    bracket = None
    while ls_iter < max_ls:
        decreased_too_little = f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev)
        if decreased_too_little or not abs(gtd_new) <= -c2 * gtd and gtd_new >= 0:
            bracket = [[t_prev, f_prev, g_prev, gtd_prev], [t, f_new, g_new.clone(), gtd_new]]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket = [[t, f_new, g_new, None]]
            done = True
            break
        # extrapolate: a step between 1.01 t - 0.01 t_prev and 10 t
        step = _cubic_minimum(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                              bounds=(t + 0.01 * (t - t_prev), t * 10))
        t_prev, f_prev, g_prev, gtd_prev = t, f_new, g_new.clone(), gtd_new
        t = step
        f_new, g_new = evaluate(x, t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket = [[0, f, g, None], [t, f_new, g_new, None]]
    insufficient_progress = False
    low, high = (0, 1) if bracket[0][1] <= bracket[-1][1] else (1, 0)
    while not done and ls_iter < max_ls:
        ends = (bracket[0][0], bracket[1][0])
        if abs(ends[1] - ends[0]) * d_norm < tolerance_change:
            break
        t = _cubic_minimum(bracket[0][0], bracket[0][1], bracket[0][3], bracket[1][0], bracket[1][1],
                           bracket[1][3])
        # a step within 10% of the bracket's width from an end moves to 10% inside (after one such step)
        eps = 0.1 * (max(ends) - min(ends))
        if min(max(ends) - t, t - min(ends)) < eps:
            if insufficient_progress or t >= max(ends) or t <= min(ends):
                t = max(ends) - eps if abs(t - max(ends)) < abs(t - min(ends)) else min(ends) + eps
                insufficient_progress = False
            else:
                insufficient_progress = True
        else:
            insufficient_progress = False
        f_new, g_new = evaluate(x, t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket[low][1]:
            bracket[high] = [t, f_new, g_new.clone(), gtd_new]
            low, high = (0, 1) if bracket[0][1] <= bracket[1][1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high][0] - bracket[low][0]) >= 0:
                bracket[high] = list(bracket[low])
            bracket[low] = [t, f_new, g_new.clone(), gtd_new]
    t, f_new, g_new, _ = bracket[low]
    return f_new, g_new, t, evals


class LBFGS(Optimizer):
    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7, tolerance_change=1e-9,
                 history_size=100, line_search_fn=None):
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                        tolerance_change=tolerance_change, history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]
        self._numel_cache = None

    def _numel(self):
        if self._numel_cache is None:
            self._numel_cache = functools.reduce(lambda total, p: total + p.numel(), self._params, 0)
        return self._numel_cache

    def _gather_flat_grad(self):
        return _C.cat([tinyddp.zeros(p.numel(), dtype=p.dtype) if p.grad is None else p.grad.reshape([-1])
                       for p in self._params], 0)

    def _add_grad(self, step_size, update):
        offset = 0
        for p in self._params:
            numel = p.numel()
            p.add_(update.narrow(0, offset, numel).reshape(list(p.shape)), alpha=float(step_size))
            offset += numel

    def _evaluate_along(self, closure, x, t, d):
        """The loss and flat gradient at x + t d; the parameters are put back to x."""
        self._add_grad(t, d)
        with enable_grad():
            loss = float(closure())
        flat_grad = self._gather_flat_grad()
        for p, saved in zip(self._params, x):
            p.copy_(saved)
        return loss, flat_grad

    def step(self, closure):
        with tinyddp.no_grad():
            return self._step(closure)

    def _step(self, closure):
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        with enable_grad():
            orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if flat_grad.abs().max() <= tolerance_grad:
            return orig_loss
        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        H_diag = state.get("H_diag")
        prev_flat_grad, prev_loss = state.get("prev_flat_grad"), state.get("prev_loss")
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = y.dot(s)
                if ys > 1e-10:   # keep the pair only while the curvature is positive
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1. / ys)
                    H_diag = ys / y.dot(y)
                # the two-loop recursion: d = -H g with H the history's inverse-Hessian estimate
                if "al" not in state:
                    state["al"] = [None] * history_size
                al = state["al"]
                q = -flat_grad
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q.add_(old_dirs[i], alpha=-float(al[i]))
                d = r = q * H_diag
                for i in range(len(old_dirs)):
                    be_i = old_dirs[i].dot(r) * ro[i]
                    r.add_(old_stps[i], alpha=float(al[i] - be_i))
            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.clone()
            else:
                prev_flat_grad.copy_(flat_grad)
            prev_loss = loss
            t = min(1., 1. / flat_grad.abs().sum()) * lr if state["n_iter"] == 1 else lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:   # not a descent direction
                break
            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = [p.clone() for p in self._params]
                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    lambda x, step, direction: self._evaluate_along(closure, x, step, direction),
                    x_init, t, d, loss, flat_grad, gtd)
                self._add_grad(t, d)
                opt_cond = flat_grad.abs().max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                opt_cond = False
                if n_iter != max_iter:
                    with enable_grad():
                        loss = float(closure())
                    flat_grad = self._gather_flat_grad()
                    opt_cond = flat_grad.abs().max() <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals
            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if (d * t).abs().max() <= tolerance_change or abs(loss - prev_loss) < tolerance_change:
                break
        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=H_diag,
                     prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
        return orig_loss
