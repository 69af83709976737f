# 1.13's other names for ops (torch.concat, greater, less, not_equal, ravel, absolute, vdot, arctanh, detach),
# its constants (torch.inf, pi, e), the memory formats that keep a tensor's layout, Tensor predicates (is_cpu,
# is_signed, is_same_size), isposinf / isneginf / isreal / signbit, deg2rad / rad2deg, and the dtype-promotion
# queries: promote_types over all of 1.13's real and complex dtypes, can_cast, result_type of tensors with and
# without dims and Python numbers.
import tinyddp as torch
x = torch.tensor([[1.5, -0.0], [float("inf"), -float("inf")]])
i = torch.tensor([3, -2]); b = torch.tensor([True, False])


def attempt(label, fn):
    try:
        print(label, fn())
    except Exception as e:   # noqa: BLE001  (the error is what is compared)
        print(label, type(e).__name__, e)


attempt("consts", lambda: (torch.inf, torch.nan == torch.nan, torch.pi, torch.e))
attempt("formats", lambda: (torch.contiguous_format, torch.preserve_format,
                            x.clone(memory_format=torch.contiguous_format),
                            x.t().contiguous(memory_format=torch.contiguous_format).is_contiguous()))
attempt("concat", lambda: torch.concat([x, x], dim=1).shape)
attempt("ravel", lambda: (torch.ravel(x.t()), x.ravel(), x.t().ravel()))
attempt("ravel grad", lambda: torch.ones(2, 3, requires_grad=True).t().ravel().grad_fn)
attempt("cmp", lambda: (torch.greater(x, 0), x.less(1), x.greater_equal(0), torch.less_equal(i, 0),
                        torch.not_equal(i, 3), x.not_equal(x)))
attempt("detach", lambda: torch.detach(torch.ones(2, requires_grad=True)))
attempt("absolute", lambda: (torch.absolute(i), x.clone().absolute_()))
attempt("preds", lambda: (x.is_cpu, x.is_signed(), b.is_signed(), i.is_signed(), x.is_same_size(x.t()),
                          x.is_same_size(i)))
attempt("infs", lambda: (torch.isposinf(x), torch.isneginf(x), x.isposinf(), torch.isposinf(i), torch.isreal(x)))
attempt("signbit", lambda: (torch.signbit(x), i.signbit(),
                            torch.signbit(torch.tensor([float("nan"), -float("nan")]))))
attempt("deg", lambda: (torch.deg2rad(torch.tensor([180., 90.])), torch.rad2deg(torch.tensor([3.14159, 1.])),
                        torch.deg2rad(i), torch.tensor([180.], dtype=torch.float64).deg2rad()))
attempt("vdot", lambda: torch.vdot(torch.tensor([1., 2.]), torch.tensor([3., 4.])))
attempt("arctanh", lambda: torch.tensor([0.5]).arctanh())
dtypes = (torch.float32, torch.float64, torch.int64, torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32,
          torch.float16, torch.bfloat16, torch.complex64, torch.complex128)
for a in dtypes:
    print(a, [str(torch.promote_types(a, c)).replace("torch.", "") for c in dtypes])
    print(" cast", [torch.can_cast(a, c) for c in (torch.float32, torch.int64, torch.bool, torch.complex64,
                                                   torch.uint8)])
ops = [torch.ones(2), torch.ones(2, dtype=torch.long), torch.ones(2, dtype=torch.bool), torch.tensor(1.),
       torch.tensor(1, dtype=torch.float64), torch.tensor(True), torch.tensor(2), 2, 2.5, True]
for a in ops:
    if isinstance(a, torch.Tensor):
        print([str(torch.result_type(a, c)).replace("torch.", "") for c in ops])
    else:
        print([str(torch.result_type(c, a)) for c in ops[:7]])
attempt("promote bad", lambda: torch.promote_types(torch.float32, 3))
