# Operators and edge values as 1.13 gives them: & | ^ ~ << >> on integers, x OP= y writing into x (aliases and views
# see it), isclose/allclose with infinities, float64 exp of very negative numbers (softmax rows masked with -inf),
# a tensor with a NumPy array, remainder with an infinite dividend, a Python number as the dividend, Tensor-only
# arguments, fmax/fmin/copysign/sinc/ldexp/hsplit, and matmul's result never being a view.
import numpy as np

import tinyddp as torch


def attempt(label, fn):
    try:
        print(label, fn())
    except Exception as e:
        print(label, type(e).__name__, str(e).splitlines()[0])


a = torch.tensor([12, 10, -3])
b = torch.tensor([10, 6, 5])
m = torch.tensor([True, False, True])
attempt("and or xor", lambda: (a & b, a | b, a ^ b))
attempt("not shifts", lambda: (~a, a << 2, a >> 1))
attempt("with ints", lambda: (a & 6, 6 & a, m & 1, m & a, m ^ torch.tensor([True, True, False])))
attempt("functions", lambda: (torch.bitwise_and(a, b), a.bitwise_or(3), torch.bitwise_not(m)))
attempt("float and", lambda: torch.ones(2) & torch.ones(2))
attempt("float not", lambda: ~torch.ones(2))
attempt("broadcast", lambda: torch.tensor([[1], [2]]) | torch.tensor([4, 8]))

x = torch.tensor([5, 6, 7])
alias = x
x //= 2
x %= 2
print("//= %=", alias, x is alias)
f = torch.tensor([1.5, 2.5])
alias = f
f **= 2
print("**=", alias, f is alias)
mask = torch.tensor([True, False])
alias = mask
mask &= torch.tensor([True, True])
mask |= torch.tensor([False, True])
print("&= |=", alias, mask is alias)
c = torch.tensor([1, 2])
c |= torch.tensor([4, 4])
c ^= 1
c <<= 1
c >>= 1
print("int in place", c)
attempt("bool |= 1", lambda: m.__ior__(1))
attempt("broadcast in place", lambda: torch.tensor([1, 2]).__iand__(torch.tensor([[1, 2], [3, 4]])))
w = torch.ones(2, requires_grad=True)


def power_leaf():
    global w
    w **= 2


attempt("leaf **=", power_leaf)
attempt("int //= float", lambda: torch.tensor([3]).__ifloordiv__(0.5))
v = torch.arange(6.).reshape(2, 3)
row = v[0]
row //= 2
print("view //=", v)

inf = float("inf")
print("isclose", torch.isclose(torch.tensor([7., 1., inf, 0., inf]), torch.tensor([-inf, inf, -inf, inf, inf])))
print("allclose", torch.allclose(torch.tensor([7.]), torch.tensor([inf])))
print("isclose ints", torch.isclose(torch.tensor([1, 2]), torch.tensor([1, 3]), rtol=0.5, atol=0))
print("isclose bool", torch.isclose(torch.tensor([True, False]), torch.tensor([True, True])))
print("isclose nan", torch.isclose(torch.tensor([1., float("nan")]), torch.tensor([1., float("nan")]), equal_nan=True))
attempt("isclose dtypes", lambda: torch.isclose(torch.tensor([1.]), torch.tensor([1])))
attempt("isclose rtol", lambda: torch.isclose(torch.tensor([1.]), torch.tensor([1.]), rtol=-1))
attempt("isclose number", lambda: torch.isclose(torch.tensor([1.]), 1.0))

for n in (1, 8, 9, 16):
    print("exp -inf", n, torch.exp(torch.full((n,), -inf, dtype=torch.float64)).tolist())
print("exp tiny", torch.exp(torch.tensor([-1000.0, -745.2, -740.0, -708.5, -800.0, -900.0, -1e300, -inf],
                                         dtype=torch.float64)).tolist())
scores = torch.tensor([[1.0, 2.0, -inf, 0.5, -inf, 0.0, 1.0, 2.0, 3.0]], dtype=torch.float64)
print("masked softmax", [round(p, 12) for p in torch.softmax(scores, -1)[0].tolist()])
e = torch.full((9,), -800.0, dtype=torch.float64)
e.exp_()
print("exp_", e.tolist())

t = torch.ones(2)
for label, fn in [("t + array", lambda: t + np.ones(2)), ("t * array", lambda: t * np.arange(2.0)),
                  ("t - float32 array", lambda: t - np.ones(2, dtype=np.float32)),
                  ("matrix @ array", lambda: torch.ones(2, 2) @ np.ones(2)),
                  ("t / array", lambda: t / np.array([2.0, 4.0])), ("np.sin(t)", lambda: np.sin(t)),
                  ("t > array", lambda: t > np.zeros(2)), ("__iadd__ array", lambda: t.clone().__iadd__(np.ones(2)))]:
    try:
        r = fn()
        print(label, type(r).__name__, r)
    except Exception as e:
        print(label, type(e).__name__, e)
s = torch.ones(2)
s += np.ones(2)
print("+= array", s)

print("remainder inf", torch.tensor([inf, 5.0]) % 2, torch.remainder(torch.tensor([1.0, float("nan")]), inf),
      2.0 % torch.tensor([inf, -inf]))
q = torch.tensor([3.0, -4.0])
attempt("number first", lambda: (torch.remainder(2, q), torch.floor_divide(7, q), torch.div(7, q, rounding_mode="floor"),
                                 torch.div(7.5, q, rounding_mode="trunc")))
for expression in ["torch.maximum(q, 2)", "q.maximum(2)", "torch.minimum(2, q)", "torch.hypot(q, 2)",
                   "torch.logical_and(q, 1)", "q.logical_and(True)", "torch.allclose(q, 1.0)", "torch.dot(q, [1, 2])",
                   "torch.mm(q, 2)", "torch.outer(q, 2)", "torch.matmul(q, 2)", "torch.atan2(2, q)"]:
    attempt(expression, lambda: eval(expression))
print("signbit 0-d", torch.signbit(torch.tensor(-1.5)))

x = torch.tensor([0., 0.5, -1.5, 2.], requires_grad=True)
y = torch.tensor([1., float("nan"), -2., 2.], requires_grad=True)
for label, fn in [("fmax", lambda: torch.fmax(x, y)), ("fmin", lambda: torch.fmin(x, y)),
                  ("copysign", lambda: torch.copysign(x, y)), ("copysign number", lambda: torch.copysign(x, -1.)),
                  ("sinc", lambda: torch.sinc(x)), ("ldexp", lambda: torch.ldexp(x, torch.tensor([1, 2, 3, 4])))]:
    r = fn()
    grads = torch.autograd.grad(r.sum(), [x, y], allow_unused=True)
    print(label, [round(v, 5) for v in r.tolist()], r.grad_fn.name(),
          [None if g is None else [round(v, 4) for v in g.tolist()] for g in grads])
print("ints", torch.fmax(torch.tensor([1, 5]), torch.tensor([3, 2])), torch.sinc(torch.tensor([0, 1])),
      torch.ldexp(torch.tensor([1]), torch.tensor([3])), torch.fix(torch.tensor([-1.5, 1.5])))
print("hsplit", torch.hsplit(torch.arange(12).reshape(2, 6), 3), torch.hsplit(torch.arange(6), 2))
print("vsplit", torch.vsplit(torch.arange(12).reshape(4, 3), [1, 3]))
attempt("hsplit uneven", lambda: torch.hsplit(torch.arange(10).reshape(2, 5), 2))
attempt("vsplit 1-D", lambda: torch.vsplit(torch.arange(3), 1))
attempt("dsplit 2-D", lambda: torch.dsplit(torch.arange(12).reshape(2, 6), 2))
attempt("positive bool", lambda: torch.positive(torch.tensor([True])))
z = torch.tensor([1.0, -2.0])
z.sgn_()
print("sgn_", z, torch.tensor([180.0]).deg2rad_())

torch.manual_seed(0)
for sa, sb in [((3,), (3, 2)), ((2, 3), (3,)), ((3,), (3,)), ((4, 2, 3), (3,)), ((4, 2, 3), (3, 2)),
               ((4, 2, 3), (4, 3, 2))]:
    p = torch.randn(*sa, requires_grad=True)
    r = p @ torch.randn(*sb)
    plain = torch.matmul(p.detach(), torch.randn(*sb))
    print("matmul", sa, sb, r._base is None, r.grad_fn.name(), r._version, plain._base is None, plain._version)
r = torch.ones(3) @ torch.eye(3)
with torch.no_grad():
    n = torch.ones(3, requires_grad=True) @ torch.eye(3)
n.clamp_(0, 0.5)
print("no_grad product modified in place", n, n._version)
print("reshape copy", torch.arange(6.).reshape(2, 3).t().reshape(-1)._base is None)
big = torch.tensor([9223372036854775807, 2 ** 53 + 1, -(2 ** 53 + 1)])
print("int64 fmod", torch.fmod(big, 2), torch.fmod(big, torch.tensor(10)), big % 2, torch.remainder(big, 10))

i = torch.tensor([12, -10, 3])
f32 = torch.tensor([0.5, -1.5, 2.0])
for expression in ["i & 2.5", "2.5 & i", "f32 | 1", "i << torch.tensor([1, 64, 65])", "i >> torch.tensor([1, 63, 66])",
                   "torch.tensor([True]) >> torch.tensor([True])", "torch.bitwise_xor(2, i)",
                   "torch.tensor([1, 2, 3, 4]) | torch.tensor([1, 2, 3])",
                   "torch.fmin(f32, torch.tensor([1.0], dtype=torch.float64))", "torch.fmax(f32, torch.tensor([1, -2, 3]))",
                   "torch.fmin(i, torch.tensor([0, 0, 0]))", "torch.copysign(i, torch.tensor(-1.0, dtype=torch.float64))",
                   "torch.copysign(2, f32)", "torch.copysign(torch.ones(4), f32)",
                   "torch.logaddexp(f32, torch.tensor([True, False, True]))", "torch.logaddexp(i, i)",
                   "torch.nextafter(f32, torch.tensor([10.0, -10.0, 2.0]))",
                   "torch.nextafter(f32, torch.tensor(0.0, dtype=torch.float64)).dtype", "torch.nextafter(f32, 2)",
                   "torch.lt(2, f32)", "torch.eq(2.5, f32)", "torch.fmod(2, f32)", "torch.isclose(2, f32)",
                   "torch.remainder(2.5, i)", "torch.remainder(2.5, torch.tensor([1.5], dtype=torch.float64))"]:
    attempt(expression, lambda: eval(expression))
a = torch.tensor(12)
print("0-d bitwise", a & 5, (a | torch.tensor(3)).shape, ~a, a << 2, torch.tensor([[1, 2]]) ^ 1,
      torch.bitwise_not(torch.tensor(-3)).shape)
